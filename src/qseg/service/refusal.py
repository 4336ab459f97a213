"""A request the service refuses: a 4xx or 503 answered with an error body, raised by any
route (the gate answers its own refusals directly)."""

from fastapi.responses import JSONResponse


class Refusal(Exception):
    """A request answered with a 4xx or 503 and an :class:`ErrorBody`."""

    def __init__(self, status: int, error: str, headers: dict[str, str] | None = None, **body):
        super().__init__(error)
        self.status = status
        self.body = {"error": error} | {k: v for k, v in body.items() if v is not None}
        self.headers = headers

    def response(self) -> JSONResponse:
        return JSONResponse(self.body, self.status, headers=self.headers)
