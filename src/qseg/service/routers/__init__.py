"""The service's routes, one module-level router per concern (FastAPI's "bigger
applications" layout); :func:`qseg.service.app.create_app` includes them."""
