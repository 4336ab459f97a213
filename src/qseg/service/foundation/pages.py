"""The service's own pages and files: HTML, scripts and style sheets served by qseg itself
(nothing from a CDN), each page with headers that keep it to what qseg serves, each page
reachable at its route only. The foundation's own (the login page, the shared style sheet
and icon) are in ``static/``; an app's are in its own ``static/``."""

from pathlib import Path

from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

from qseg.service.foundation.errors import Refusal

STATIC = Path(__file__).parent / "static"
PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
}
"""A page loads only what qseg serves, and no other site may frame it."""


def page(name: str, folder: Path = STATIC) -> FileResponse:
    """The page ``folder/NAME`` as a response."""
    return FileResponse(folder / name, headers=PAGE_HEADERS)


async def static_file(files: StaticFiles, prefix: str, path: str, scope: Scope) -> Response:
    """A script, style sheet or image of ``files``; never a page (pages have their routes,
    behind the access rules and with their own headers: one way to reach each)."""
    if path.lower().rstrip("/").endswith((".html", ".htm")):
        raise Refusal(404, f"no file {prefix}{path}")
    return await files.get_response(path, scope)
