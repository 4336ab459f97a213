"""Prometheus metrics of the service, safe with several worker processes.

With ``PROMETHEUS_MULTIPROC_DIR`` set before ``prometheus_client`` is first imported (``qseg
serve`` sets it), every worker writes its values to files there and ``GET /metrics`` sums
them over the workers; without it, one process's values are served.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from qseg.service.foundation.settings import MULTIPROCESS_VARIABLE

REQUESTS = Counter("qseg_requests", "HTTP requests answered", ["route", "status"])
ERRORS = Counter("qseg_errors", "HTTP requests answered with a 4xx or 5xx", ["route", "status"])
LATENCY = Histogram(
    "qseg_request_seconds",
    "Time to answer a request",
    ["route"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
QUERIES = Counter("qseg_queries", "Queries segmented", ["method"])
SEGMENTING = Histogram(
    "qseg_segment_seconds",
    "Time spent segmenting the queries of one request",
    ["method"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5),
)
IN_FLIGHT = Gauge(
    "qseg_requests_in_flight",
    "Requests being answered",
    multiprocess_mode="livesum",
)
CONTENT_TYPE = CONTENT_TYPE_LATEST


def observe_request(route: str, status: int, seconds: float) -> None:
    REQUESTS.labels(route, str(status)).inc()
    LATENCY.labels(route).observe(seconds)
    if status >= 400:
        ERRORS.labels(route, str(status)).inc()


def observe_segmenting(method: str, queries: int, seconds: float) -> None:
    QUERIES.labels(method).inc(queries)
    SEGMENTING.labels(method).observe(seconds)


def exposition() -> bytes:
    """The metrics in Prometheus text format, of every worker where several run."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def worker_exited(pid: int) -> None:
    """Forget a dead worker's live values (its counts stay summed in)."""
    if os.environ.get(MULTIPROCESS_VARIABLE):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
