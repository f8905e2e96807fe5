"""Prometheus metrics: request latency, ingest outcomes, derivation backlog, task failures.

Counters and histograms live in the process that observes them. Under the web server
(several worker processes) and Celery prefork they are merged through prometheus_client's
multiprocess mode when ``PROMETHEUS_MULTIPROC_DIR`` is set (the Helm chart sets it); without
it each process reports its own values, which is right for ``make run`` and the tests.

The backlog and failure gauges are not kept in memory at all: they are read from
``ingest_event`` at scrape time, so every pod reports the same, true numbers. Each query
walks a partial index and is capped, so a scrape costs the same however big the table is.
See docs/adr/0011-metrics.md.
"""

import logging
import os
import time
from collections import Counter as TallyCounter
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from http import HTTPStatus
from typing import Any

from celery import signals
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.http import HttpRequest, HttpResponse
from django.urls import URLResolver, get_resolver
from django.utils import timezone
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    make_wsgi_app,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ingest.bounded_server import BoundedWSGIServer, serve_wsgi
from ingest.facets import validated_facets
from ingest.models import Event, EventKind

logger = logging.getLogger(__name__)

# The classic text format, which every Prometheus version reads (generate_latest writes it).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

REQUEST_LATENCY = Histogram(
    "lineage_http_request_duration_seconds",
    "Time from the first middleware to the response, by URL route.",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
INGESTED_EVENTS = Counter(
    "lineage_ingest_events_total",
    "Events received by ingest, by kind and outcome (created, duplicate, refused).",
    ["kind", "outcome"],
)
FACET_PROBLEMS = Counter(
    "lineage_ingest_facet_problems_total",
    "Problems outside the core recorded on newly stored events (ADR 0004), by where "
    "(position:facet key, or event:field) and whether derivation skips the facet.",
    ["facet", "skipped"],
)
TASK_FAILURES = Counter(
    "lineage_celery_task_failures_total",
    "Celery tasks that raised, by task name (per worker pod).",
    ["task"],
)


# --- Bounded labels -------------------------------------------------------------------------
# Every label value comes from a closed set; anything else is "other". A label value a client
# can choose (an invented HTTP method, an unknown URL, a status code) would otherwise add a
# series per request, and Prometheus keeps each one (issue 27).
OTHER = "other"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
STATUSES = frozenset(str(status.value) for status in HTTPStatus)
OUTCOMES = frozenset({"created", "duplicate", "refused"})


def bounded(value: str, allowed: frozenset[str] | set[str]) -> str:
    return value if value in allowed else OTHER


@cache
def url_routes(urlconf: str) -> frozenset[str]:
    """Every route string the URL map ``urlconf`` can resolve to (``resolver_match.route``)."""

    def walk(patterns: Iterable[Any], prefix: str) -> Iterator[str]:
        for entry in patterns:
            route = prefix + str(entry.pattern)
            if isinstance(entry, URLResolver):
                yield from walk(entry.url_patterns, route)
            else:
                yield route

    return frozenset(walk(get_resolver(urlconf).url_patterns, ""))


def route_label(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None or not match.route:
        return "unmatched"
    urlconf = getattr(request, "urlconf", None) or settings.ROOT_URLCONF
    return bounded(match.route, url_routes(urlconf))


def request_labels(method: str | None, route: str, status: int) -> tuple[str, str, str]:
    return bounded(method or "", METHODS), route, bounded(str(status), STATUSES)


# --- Recording ------------------------------------------------------------------------------


def count_ingested(records: Sequence[Any], stored: Sequence[Any]) -> None:
    """Count stored events by kind: ``created`` or ``duplicate`` (already in the log).

    Counted per label first, then one ``inc`` per label: under the chart's multiprocess
    mode every ``inc`` writes the worker's mmap file under a lock, and one per event was
    3.5% of a 500-event batch request's CPU (py-spy, docs/benchmarks.md)."""
    events: TallyCounter[tuple[str, str]] = TallyCounter()
    problems: TallyCounter[tuple[str, str]] = TallyCounter()
    for record, item in zip(records, stored, strict=False):
        events[record.kind, "created" if item.created else "duplicate"] += 1
        if item.created:
            for problem in getattr(record, "warnings", ()):
                problems[
                    problem_label(problem.path, problem.facet), str(problem.skipped).lower()
                ] += 1
    for (kind, outcome), number in events.items():
        ingested_child(kind, outcome).inc(number)
    for (label, skipped), number in problems.items():
        FACET_PROBLEMS.labels(bounded(label, facet_labels()), skipped).inc(number)


_POSITIONS = {"inputFacets": "input", "outputFacets": "output"}
KINDS = frozenset({*EventKind.values, "unknown"})


def ingested_child(kind: str, outcome: str) -> Any:
    """``INGESTED_EVENTS``' child for ``kind`` and ``outcome``, looked up once per process.

    Why: ``labels()`` checks and converts its values and takes the metric's lock on every
    call; the child it returns never changes, so a single-event request need not pay for
    that again (ADR 0112). Keyed by the bounded labels, so the memory is as bounded as
    the series are.
    """
    return _ingested_child(bounded(kind, KINDS), bounded(outcome, OUTCOMES))


@cache
def _ingested_child(kind: str, outcome: str) -> Any:
    return INGESTED_EVENTS.labels(kind, outcome)


@cache
def latency_child(method: str, route: str, status: str) -> Any:
    """``REQUEST_LATENCY``' child for ``request_labels``' bounded labels, looked up once per
    process, as ``ingested_child`` (ADR 0112)."""
    return REQUEST_LATENCY.labels(method, route, status)


@cache
def facet_labels() -> frozenset[str]:
    """Every label ``problem_label`` gives a problem validation can record: the validated
    facets by position, the event fields warned about, and a container that is no object."""
    labels = {f"{position}:{key}" for position, key in validated_facets()}
    # The event's own fields validation warns about (ingest/validation.py): producer and
    # schemaURL were counted as "other", though the help names them ``event:field``.
    labels |= {f"event:{field}" for field in ("eventType", "producer", "schemaURL")}
    # A facets container that is no object: a DatasetEvent's ("dataset") was "other" too.
    containers = ("run", "job", "inputs", "outputs", "dataset", "event")
    labels |= {f"{part}:(container)" for part in containers}
    return frozenset(labels)


def problem_label(path: str, facet: str) -> str:
    """A bounded label: ``run:parent``, ``dataset:schema``, ``input:dataQualityMetrics``,
    ``event:producer``. Only the spec's own facets are validated, so keys are a known set."""
    if not facet:
        return "event:" + path.rsplit("/", 1)[-1]
    parts = facet.split("/")[1:]
    if len(parts) < 2 or parts[-2] not in ("facets", "inputFacets", "outputFacets"):
        return f"{parts[0] if parts else 'event'}:(container)"
    container, key = parts[-2], parts[-1]
    if container in _POSITIONS:
        return f"{_POSITIONS[container]}:{key}"
    position = parts[0] if parts[0] in ("run", "job") else "dataset"
    return f"{position}:{key}"


def count_refused(kind: str, number: int) -> None:
    """Count events refused by validation (``kind`` is the endpoint's kind of event)."""
    if number:
        ingested_child(kind, "refused").inc(number)


class RequestLatencyMiddleware:
    """Observe every request's duration, labelled by its URL pattern, method and status, each
    from a closed set (``request_labels``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        labels = request_labels(request.method, route_label(request), response.status_code)
        latency_child(*labels).observe(time.perf_counter() - started)
        return response


# --- Celery ---------------------------------------------------------------------------------


def _on_task_failure(sender: Any = None, **kwargs: Any) -> None:
    name = getattr(sender, "name", None) or "unknown"
    app = getattr(sender, "app", None)
    # Registered tasks only: a message naming anything else is one "other" series.
    known = set(app.tasks) if app is not None else {name}
    TASK_FAILURES.labels(bounded(name, {*known, "unknown"})).inc()


def _serve_worker_metrics(**kwargs: Any) -> None:
    """In the worker's main process: serve the merged metrics of its pool processes."""
    port = os.environ.get("LINEAGE_WORKER_METRICS_PORT")
    if not port:
        return
    serve_worker_metrics(int(port))
    logger.info("worker_metrics_serving", extra={"port": int(port)})


def serve_worker_metrics(port: int, host: str = "0.0.0.0") -> BoundedWSGIServer:
    """prometheus_client's own WSGI application (the answer ``start_http_server`` gave,
    byte for byte: content negotiation, gzip, ``name[]``) behind the bounded server
    (ADR 0191): ``start_http_server`` gave every connection a thread and never timed one
    out, so a client holding connections grew the worker's threads and memory without
    bound."""
    return serve_wsgi(make_wsgi_app(process_registry()), host, port, "worker-metrics")


def _mark_pool_process_dead(pid: int | None = None, **kwargs: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(pid or os.getpid())


def connect_celery_signals() -> None:
    """Connected when the worker imports this module (``CELERY_IMPORTS``)."""
    signals.task_failure.connect(_on_task_failure, weak=False)
    signals.worker_ready.connect(_serve_worker_metrics, weak=False)
    signals.worker_process_shutdown.connect(_mark_pool_process_dead, weak=False)


connect_celery_signals()


# --- Gauges read from the database at scrape time -------------------------------------------


class DerivationCollector(Collector):
    """Backlog, lag and failures of derivation, from ``ingest_event``'s partial indexes."""

    def collect(self) -> Iterable[GaugeMetricFamily]:
        up = GaugeMetricFamily(
            "lineage_metrics_database_up", "1 when the scrape could read the database."
        )
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    # A scrape never waits on a busy database for long.
                    cursor.execute("SET LOCAL statement_timeout = 2000")
                backlog = Event.objects.derivation_backlog()
        except DatabaseError as error:
            logger.warning("metrics_database_unavailable", extra={"error": type(error).__name__})
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield GaugeMetricFamily(
            "lineage_derivation_backlog_events",
            f"Events waiting for derivation (capped at {backlog.cap}).",
            value=backlog.pending,
        )
        yield GaugeMetricFamily(
            "lineage_derivation_lag_seconds",
            "Age of the oldest event waiting for derivation (0 when none waits).",
            value=backlog.lag_seconds(timezone.now()) or 0.0,
        )
        yield GaugeMetricFamily(
            "lineage_derivation_failed_events",
            f"Events whose derivation failed (capped at {backlog.cap}).",
            value=backlog.failed,
        )


_database_registry = CollectorRegistry(auto_describe=False)
_database_registry.register(DerivationCollector())
_registered: set[str] = set()


def register_database_collector(collector: Collector) -> None:
    """Add another scrape-time collector (the catalog's, from its AppConfig.ready); once
    per class, so a second ready() does not register it twice."""
    name = type(collector).__qualname__
    if name not in _registered:
        _registered.add(name)
        _database_registry.register(collector)


def process_registry() -> CollectorRegistry:
    """This process's metrics, or all processes' when multiprocess mode is on."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


def render_metrics() -> bytes:
    return generate_latest(process_registry()) + generate_latest(_database_registry)


def metrics_view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics`` in the Prometheus text format."""
    return HttpResponse(render_metrics(), content_type=CONTENT_TYPE)
