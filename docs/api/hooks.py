"""MkDocs hook: the docstrings' Sphinx roles (:func:`name`) shown as code alone.

The docstrings are written for Sphinx-style reading (``:func:`open_segmenter```); rendered as
Markdown, a role stays in front of its code span. This drops the role and, as Sphinx does for
``~a.b.c``, shows a name with a leading ``~`` by its last part.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>")


def _code(match: re.Match[str]) -> str:
    tilde, name = match.groups()
    return f"<code>{name.rsplit('.', 1)[-1] if tilde else name}</code>"


def on_page_content(html: str, **_: object) -> str:
    return ROLE.sub(_code, html)
