"""The bodies every route of the service may answer with: a status and the error body."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Status(BaseModel):
    status: Literal["ok", "ready"]


class FieldError(BaseModel):
    field: str
    message: str


class ErrorBody(BaseModel):
    """Every 4xx and 503: one line saying what is wrong, and where it applies the field and
    limit concerned, the served names, or each invalid field."""

    error: str
    field: str | None = None
    limit: int | None = None
    served: list[str] | None = None
    errors: list[FieldError] | None = None
