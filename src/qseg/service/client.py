"""A Python client of ``qseg serve`` that is a :class:`~qseg.segmenters.base.Segmenter`:
moving between in-process and remote segmentation is one line::

    segmenter = qseg.segmenter()                           # in process
    segmenter = Client("http://127.0.0.1:8000")            # the service's default method
    segmenter.segment("new york yankees tickets")          # the same Segmentation either way
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from qseg.errors import QsegError
from qseg.query import Query
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.segmenters.base import Errors, checked
from qseg.segmenters.decoder import check_k


class ServiceError(QsegError):
    """The service refused a request (4xx, 503) or could not be reached; the message is the
    service's one line, with the HTTP status."""

    def __init__(self, message: str, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


RETRY_PAUSE = 0.1
"""Seconds before the first retry; doubled before each next."""


class Client:
    """The method ``method`` (default: the first the service serves) of the service at
    ``url``, sending ``token`` where the service requires one.

    Every request the client sends is idempotent (segmenting changes nothing on the
    service), so one that died with its connection (a worker killed or restarted under it:
    the connection reset or closed before an answer, or refused while the service restarts)
    is sent again, up to ``retries`` times, after 0.1, 0.2, 0.4 ... s. A refusal (4xx, 503)
    is not retried: it is the service's answer."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        method: str | None = None,
        timeout: float = 60,
        retries: int = 3,
    ) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)
        self.url = url
        self.method = method
        self.retries = retries
        self._limits: dict[str, int] | None = None

    @property
    def spec(self) -> str:
        return f"{self.method or 'default'} at {self.url}"

    def segment(self, query: Query) -> Segmentation:
        return self._segment([_text(query)])[0]

    def segment_many(
        self, queries: Iterable[Query], *, errors: Errors = "raise"
    ) -> Iterator[Segmentation]:
        """Segment the queries in batches of the service's limit; an item that is no query
        raises (or with ``errors="skip"`` is left out) as in the library, before any is sent."""
        texts = [" ".join(words) for _, words in checked(queries, errors)]
        for batch in self._batches(texts):
            yield from self._segment(batch)

    def _batches(self, texts: list[str]) -> Iterator[list[str]]:
        """The queries in requests within the service's limits: at most ``batch`` queries
        and ``body`` bytes each (a query of many characters weighs more than one of few)."""
        limits = self.limits()
        room = limits["body"] - len(json.dumps({"queries": [], "method": self.method})) - 64
        batch: list[str] = []
        size = 0
        for text in texts:
            weight = len(json.dumps(text, ensure_ascii=False).encode()) + 2
            if batch and (len(batch) == limits["batch"] or size + weight > room):
                yield batch
                batch, size = [], 0
            batch.append(text)
            size += weight
        if batch:
            yield batch

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        check_k(k)
        record = self._post({"queries": [_text(query)], "k": k, "format": "json"})["results"][0]
        ranking = record.get("ranking") or [record]
        return [
            (Segmentation.from_segments(r["segments"]), _score(r.get("score"))) for r in ranking
        ]

    def nest(self, query: Query) -> NestedSegmentation:
        """The query's binary tree, as ``qseg segment --nested`` gives it."""
        record = self._post({"queries": [_text(query)], "nested": True})["results"][0]
        return NestedSegmentation(record["query"].split(), record["heights"])

    def wait_ready(self, timeout: float = 60) -> None:
        """Return once ``GET /readyz`` answers 200 (a server just started opens its
        segmenters first); :class:`ServiceError` after ``timeout`` seconds."""
        import httpx

        deadline = time.monotonic() + timeout
        while True:
            try:
                if self._http.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise ServiceError(f"{self.url}: not ready after {timeout:g} s")
            time.sleep(0.1)

    def methods(self) -> dict[str, Any]:
        """``GET /methods``: what is served, with each model's metadata, and the limits."""
        return self._call("GET", "/methods")

    def limits(self) -> dict[str, int]:
        """The service's request limits (asked once)."""
        if self._limits is None:
            self._limits = self.methods()["limits"]
        return self._limits

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Client {self.spec}>"

    def _segment(self, texts: list[str]) -> list[Segmentation]:
        if not texts:
            return []
        results = self._post({"queries": texts})["results"]
        return [Segmentation.from_segments(r["segments"]) for r in results]

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.method is not None:
            body["method"] = self.method
        return self._call("POST", "/segment", body)

    def _call(self, verb: str, route: str, body: dict[str, Any] | None = None) -> Any:
        import httpx

        content = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json"} if body is not None else None
        for attempt in range(self.retries + 1):
            try:
                response = self._http.request(verb, route, content=content, headers=headers)
                break
            except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                if attempt == self.retries:  # died with its connection each time
                    raise ServiceError(f"{self.url}{route}: {exc or type(exc).__name__}") from None
                time.sleep(RETRY_PAUSE * 2**attempt)
            except httpx.HTTPError as exc:
                raise ServiceError(f"{self.url}{route}: {exc or type(exc).__name__}") from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code >= 400:
            error = payload.get("error") if isinstance(payload, dict) else response.text[:200]
            raise ServiceError(
                f"{self.url}{route}: {response.status_code}: {error}",
                response.status_code,
                payload,
            )
        return payload


def _text(query: Query) -> str:
    return query if isinstance(query, str) else " ".join(query)


def _score(value: float | None) -> float:
    return float("-inf") if value is None else float(value)
