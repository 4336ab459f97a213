"""The HTTP service of ``qseg serve`` (``pip install 'qseg[serve]'``) and its Python client.

:mod:`.app` is the FastAPI application, :mod:`.server` runs it (gunicorn's arbiter, uvicorn
workers forked from a process that has opened the segmenters), :mod:`.served` opens what is
served, :mod:`.segmenting` answers a request with the functions behind ``qseg segment``,
:mod:`.client` is :class:`Client`.
"""

from qseg.service.client import Client, ServiceError

__all__ = ["Client", "ServiceError"]
