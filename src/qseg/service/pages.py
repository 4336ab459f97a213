"""The service's own pages and files: HTML, scripts and style sheets in ``static/``, served by
qseg itself (nothing from a CDN), each page with headers that keep it to what qseg serves."""

from pathlib import Path

from fastapi.responses import FileResponse

STATIC = Path(__file__).parent / "static"
PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
}
"""A page loads only what qseg serves, and no other site may frame it."""


def page(name: str) -> FileResponse:
    """The page ``static/NAME`` as a response."""
    return FileResponse(STATIC / name, headers=PAGE_HEADERS)
