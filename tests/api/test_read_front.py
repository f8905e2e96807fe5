"""The API's reads served in front of Django (config/read_front.py, ADR 0144): every answer
is Django's own, status, body and every header, and what it does not serve reaches Django."""

import gc
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.test import RequestFactory, override_settings
from django.urls import resolve
from rest_framework import authentication
from rest_framework.views import APIView

from config.read_front import ReadFrontPath, bearer_decides
from ingest.authentication import BearerTokenAuthentication
from ingest.fastpath import IngestFastPath
from ingest.front import RESPONSE_MIDDLEWARE
from ingest.metrics import REQUEST_LATENCY, route_label
from ingest.services import create_token, revoke_token
from tests.api.factories import add_fields, at, make_dataset, make_edge, make_job, make_run
from tests.core.test_heap import collector_off  # noqa: F401  # a fixture
from tests.fresh_python import printed
from tests.wsgi_answer import wsgi_answer

pytestmark = pytest.mark.django_db(transaction=True)
CLOSED_PORT = "9"


class Counted:
    """Django's WSGI application, counting the requests that reach it."""

    def __init__(self) -> None:
        self.application = get_wsgi_application()
        self.reached = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        self.reached += 1
        return self.application(environ, start_response)


@pytest.fixture
def store() -> dict[str, Any]:
    orders = make_dataset("shop.public.orders", description="Every order placed")
    clean = make_dataset("warehouse.orders_clean", namespace="s3://lake")
    add_fields(orders, "order_id", "amount")
    load = make_job("etl.load")
    make_run(load)
    make_edge(orders, clean, load, first=at(0), last=at(10))
    return {"orders": orders, "clean": clean, "load": load}


@pytest.fixture
def secret() -> str:
    return create_token("front", "read")[1]


def call(app: Any, path: str, *, method: str = "GET", **extra: Any) -> tuple[int, dict, bytes]:
    return wsgi_answer(app, RequestFactory().generic(method, path, **extra).environ)


def both(
    path: str, django_app: Counted | None = None, **extra: Any
) -> tuple[tuple[int, dict, bytes], tuple[int, dict, bytes], int]:
    """The front path's answer, Django's, and how many of the front path's reached Django."""
    django_app = django_app or Counted()
    front = ReadFrontPath(django_app)
    fast = call(front, path, **extra)
    reached = django_app.reached
    return fast, call(django_app.application, path, **extra), reached


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


READS = [
    ("detail", lambda s: f"/api/v1/datasets/{s['orders'].id}"),
    ("missing detail", lambda s: "/api/v1/datasets/999999999"),
    ("namespaces", lambda s: "/api/v1/namespaces"),
    ("runs page", lambda s: "/api/v1/runs?limit=1"),
    ("job runs", lambda s: f"/api/v1/jobs/{s['load'].id}/runs"),
    ("graph", lambda s: f"/api/v1/lineage/graph?node=dataset:{s['orders'].id}&depth=2"),
    ("search", lambda s: "/api/v1/search?q=orders"),
    ("bad cursor", lambda s: "/api/v1/runs?cursor=forged"),
    ("unknown format", lambda s: "/api/v1/namespaces?format=xml"),
    ("nul in path", lambda s: "/api/v1/datasets/a%00b"),
    ("nul in query", lambda s: "/api/v1/datasets?namespace=a%00b"),
    ("broken utf-8", lambda s: "/api/v1/datasets/%FF%FE"),
    ("newline", lambda s: "/api/v1/datasets/1%0A"),
    ("cookie header with no cookie", lambda s: "/api/v1/namespaces"),  # RequestFactory's
    ("token in query", lambda s: "/api/v1/namespaces?token=lc_read_x&access_token=lc_read_x"),
    ("export", lambda s: "/api/v1/events/export"),
    ("marquez namespaces", lambda s: "/marquez/api/v1/namespaces"),
    ("marquez lineage", lambda s: "/marquez/api/v1/lineage?nodeId=dataset:s3://lake:x"),
    ("marquez unknown", lambda s: "/marquez/api/v1/nothing/here"),
]


def _same(fast: tuple[int, dict, bytes], slow: tuple[int, dict, bytes]) -> None:
    assert fast[0] == slow[0], (fast[2], slow[2])
    assert fast[1] == slow[1]
    assert fast[2] == slow[2]


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
@pytest.mark.parametrize(("name", "path"), READS, ids=[name for name, _ in READS])
def test_front_path_and_django_give_the_same_answers(
    store, secret, name, path, secure, method
) -> None:
    # Production's security headers (HSTS on HTTPS): the middleware reads them when built.
    with override_settings(SECURE_HSTS_SECONDS=3600, SECURE_HSTS_INCLUDE_SUBDOMAINS=True):
        fast, slow, reached = both(path(store), method=method, secure=secure, **bearer(secret))
    _same(fast, slow)
    assert reached == 0  # served in front of Django
    assert fast[1]["X-Frame-Options"] == "DENY"
    assert ("Strict-Transport-Security" in fast[1]) is secure


def _refused_tokens(secret: str) -> list[tuple[str, dict[str, str]]]:
    revoked, revoked_secret = create_token("revoked", "read")
    revoke_token(revoked.id)
    return [
        ("unknown token", bearer("lc_read_nope")),
        ("empty token", {"HTTP_AUTHORIZATION": "Bearer "}),
        ("revoked token", bearer(revoked_secret)),
        ("ingest token", bearer(create_token("ingest", "ingest")[1])),
        ("curate token", bearer(create_token("curate", "curate")[1])),
        ("lower-case scheme", {"HTTP_AUTHORIZATION": f"bearer {secret}"}),
    ]


def test_refused_tokens_get_djangos_answers(store, secret) -> None:
    for label, headers in _refused_tokens(secret):
        for path in (f"/api/v1/datasets/{store['orders'].id}", "/marquez/api/v1/namespaces"):
            fast, slow, reached = both(path, **headers)
            _same(fast, slow)
            assert reached == 0, label
            if label != "lower-case scheme":
                assert fast[0] in (401, 403), (label, fast)


def test_what_it_does_not_serve_reaches_django_untouched(store, secret) -> None:
    detail = f"/api/v1/datasets/{store['orders'].id}"
    cases: list[tuple[str, dict[str, Any]]] = [
        ("no token", {}),
        ("basic", {"HTTP_AUTHORIZATION": "Basic dXNlcjpwYXNz"}),
        ("cookie and bearer", {**bearer(secret), "HTTP_COOKIE": "sessionid=abc"}),
        ("a write", {**bearer(secret), "method": "POST"}),
        ("options", {**bearer(secret), "method": "OPTIONS"}),
    ]
    for label, extra in cases:
        fast, slow, reached = both(detail, **extra)
        assert reached == 1, label
        _same(fast, slow)
    for path in ("/api/v1/nothing", "/api/schema/", "/healthz", "/admin/"):
        fast, slow, reached = both(path, **bearer(secret))
        assert reached == 1, path
        assert fast[0] == slow[0]


def test_a_refused_host_reaches_django(store, secret) -> None:
    with override_settings(ALLOWED_HOSTS=["lineage.example.com"]):
        fast, slow, reached = both("/api/v1/namespaces", **bearer(secret))
    assert reached == 1 and fast[0] == 400
    _same(fast, slow)


def test_ssl_redirect_and_forwarded_proto(store, secret) -> None:
    proxied = {
        "SECURE_HSTS_SECONDS": 3600,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
    }
    with override_settings(**proxied):
        # Django's middleware reads the settings when it is built: build the apps in here.
        plain, slow, reached = both("/api/v1/namespaces", **bearer(secret))
        assert reached == 1 and plain[0] == 301 and plain[1]["Location"].startswith("https://")
        _same(plain, slow)
        forwarded = {**bearer(secret), "HTTP_X_FORWARDED_PROTO": "https"}
        fast, slow, reached = both("/api/v1/namespaces", **forwarded)
        assert reached == 0 and fast[0] == 200 and "Strict-Transport-Security" in fast[1]
        _same(fast, slow)
        spoofed = {**bearer(secret), "HTTP_X_FORWARDED_PROTO": "http"}
        fast, slow, reached = both("/api/v1/namespaces", **spoofed)
        assert reached == 1 and fast[0] == 301
        _same(fast, slow)


def test_a_marquez_host_reaches_django(store, secret) -> None:
    marquez = {**settings.MARQUEZ_API, "HOSTS": ["marquez.example.com"]}
    with override_settings(MARQUEZ_API=marquez, ALLOWED_HOSTS=["marquez.example.com"]):
        for path in ("/api/v1/namespaces", "/marquez/api/v1/namespaces"):
            fast, slow, reached = both(path, HTTP_HOST="marquez.example.com", **bearer(secret))
            assert reached == 1 and fast[0] == 200
            _same(fast, slow)


def test_only_views_the_token_alone_authenticates_are_served() -> None:
    assert bearer_decides(resolve("/api/v1/namespaces").func)
    assert bearer_decides(resolve("/api/v1/datasets/1").func)
    assert bearer_decides(resolve("/marquez/api/v1/namespaces").func)

    class SessionFirst(APIView):
        authentication_classes = [authentication.SessionAuthentication, BearerTokenAuthentication]

    class Own(APIView):
        authentication_classes = [BearerTokenAuthentication]

        def get_authenticators(self) -> list[Any]:
            return [authentication.SessionAuthentication()]

    assert not bearer_decides(SessionFirst.as_view())
    assert not bearer_decides(Own.as_view())
    assert not bearer_decides(
        APIView.as_view(authentication_classes=[authentication.SessionAuthentication])
    )
    assert not bearer_decides(resolve("/healthz").func)  # a plain Django view


def _latency_count(labels: tuple[str, str, str]) -> float:
    wanted = dict(zip(("method", "route", "status"), labels, strict=True))
    return sum(
        sample.value
        for metric in REQUEST_LATENCY.collect()
        for sample in metric.samples
        if sample.name.endswith("_count") and sample.labels == wanted
    )


def test_the_latency_metric_is_observed(store, secret) -> None:
    path = f"/api/v1/datasets/{store['orders'].id}"
    request = RequestFactory().get(path)
    request.resolver_match = resolve(path)
    labels = ("GET", route_label(request), "200")  # RequestLatencyMiddleware's label
    before = _latency_count(labels)
    fast, _, reached = both(path, **bearer(secret))
    assert reached == 0 and fast[0] == 200
    assert _latency_count(labels) == before + 1


def test_database_down_is_the_503(store, secret) -> None:
    front = ReadFrontPath(Counted())
    call(front, "/api/v1/namespaces", **bearer(secret))  # token cached
    connection = connections["default"]
    original_port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = CLOSED_PORT
    try:
        fast = call(front, "/api/v1/namespaces", **bearer(secret))
        slow = call(front.application.application, "/api/v1/namespaces", **bearer(secret))
    finally:
        connection.close()
        connection.settings_dict["PORT"] = original_port
    assert fast[0] == 503 and fast[1]["Retry-After"] == "5"
    problem = orjson.loads(fast[2])
    assert problem["type"] == "urn:lineage-catalog:problem:database-unavailable"
    assert problem["detail"] == "Retry the same request later."  # a read stores nothing
    assert front.application.reached == 0
    _same(fast, slow)


@contextmanager
def request_log(caplog: pytest.LogCaptureFixture) -> Iterator[list[logging.LogRecord]]:
    """The records of ``django.request`` while it runs (LOGGING may stop propagation)."""
    request_logger = logging.getLogger("django.request")
    request_logger.addHandler(caplog.handler)
    try:
        yield caplog.records
    finally:
        request_logger.removeHandler(caplog.handler)


def test_an_unexpected_error_is_the_logged_problem_document(
    store, secret, monkeypatch, caplog
) -> None:
    from api.views.catalog import NamespaceList

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(NamespaceList, "get", broken)
    django_app = Counted()  # Django's set-up configures logging anew: before the capture
    with request_log(caplog) as logged:
        fast, slow, reached = both("/api/v1/namespaces", django_app, **bearer(secret))
    assert reached == 0
    assert fast[0] == 500 and fast[1]["Content-Type"] == "application/problem+json"
    assert orjson.loads(fast[2])["type"] == "urn:lineage-catalog:problem:server-error"
    records = [r for r in logged if r.name == "django.request"]
    assert [r.getMessage() for r in records] == ["Internal Server Error: /api/v1/namespaces"] * 2
    assert all(r.exc_info and "a bug" in str(r.exc_info[1]) for r in records)
    _same(fast, slow)


def test_a_4xx_is_logged_as_django_logs_it(store, secret, caplog) -> None:
    django_app = Counted()  # Django's set-up configures logging anew: before the capture
    with request_log(caplog) as logged:
        fast, _, reached = both("/api/v1/datasets/999999999", django_app, **bearer(secret))
    assert reached == 0 and fast[0] == 404
    messages = [r.getMessage() for r in logged if r.name == "django.request"]
    assert messages == ["Not Found: /api/v1/datasets/999999999"] * 2  # front, then Django


def test_the_entry_point_serves_reads_in_front_of_ingest_in_front_of_django() -> None:
    # A fresh interpreter: importing config.wsgi freezes the heap and sets the statement
    # timeout on the connections (tests/deploy/test_wsgi.py). Outermost, the count of the
    # threads waiting on request bodies (ADR 0197).
    code = (
        "from config.wsgi import application, django_application\n"
        "front = application.application\n"
        "print(type(application).__name__, type(front).__name__,"
        " type(front.application).__name__, front.application.application is django_application)\n"
    )
    assert printed(code).split() == ["BodyReads", "ReadFrontPath", "IngestFastPath", "True"]


# The read endpoints' pinned query counts (tests/api/test_catalog.py), through the WSGI
# application as config/wsgi.py serves it rather than the test client.
PINS = [
    (lambda s: "/api/v1/namespaces", 1),
    (lambda s: "/api/v1/runs", 1),
    (lambda s: f"/api/v1/jobs/{s['load'].id}/runs", 2),
    (lambda s: f"/api/v1/datasets/{s['orders'].id}", 3),
]


def test_query_counts_are_the_views(store, secret, steady_token_cache, django_assert_num_queries):
    application = ReadFrontPath(IngestFastPath(get_wsgi_application()))  # as config/wsgi.py
    for path, queries in PINS:
        call(application, path(store), **bearer(secret))  # token cached, statements prepared
        with django_assert_num_queries(queries):
            status, _, _ = call(application, path(store), **bearer(secret))
        assert status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/datasets/{orders}",
        "/api/v1/datasets/2000000000",  # DRF's not-found answer
        "/api/v1/runs?limit=50",
        "/api/v1/lineage/graph?node=dataset:{orders}",
        # Its node id's parse once left a closure in a cycle (api/marquez/paths.py).
        "/marquez/api/v1/lineage?nodeId=dataset:s3://lake:warehouse.orders_clean&depth=5",
    ],
)
@pytest.mark.usefixtures("collector_off")
def test_a_read_served_in_front_leaves_nothing_to_the_garbage_collector(
    fresh_connection, store, secret, path
) -> None:
    """As Django's answers in the web server (core/heap.py, ADR 0132): the request, view,
    response and data are freed by reference counting, not left in cycles."""
    path = path.format(orders=store["orders"].id)
    django_app = Counted()
    front = ReadFrontPath(django_app)
    call(front, path, **bearer(secret))  # first use: caches, compiled statements
    environ = RequestFactory().get(path, **bearer(secret)).environ
    gc.collect()
    answer = front(environ, lambda status, headers: None)
    b"".join(answer)
    assert gc.collect() == 0
    assert django_app.reached == 0


def test_resolutions_are_kept_for_short_paths_only(store, secret) -> None:
    from config.read_front import MAX_KEPT_PATH, _kept

    _kept.cache_clear()
    long_id = "9" * MAX_KEPT_PATH
    for path in ("/api/v1/datasets/999999999", f"/api/v1/datasets/{long_id}"):
        fast, slow, reached = both(path, **bearer(secret))
        assert reached == 0 and fast[0] == 404
        _same(fast, slow)
    assert _kept.cache_info().currsize == 1


# Every middleware of the shipped settings, and what the front paths do with it: run around
# the view (ingest/front.py's RESPONSE_MIDDLEWARE), observed by the front path itself, or
# skipped because it changes nothing for what is served (config/read_front.py's docstring
# and ingest/fastpath.py's say why, one middleware at a time).
OBSERVED_BY_THE_FRONT = {"ingest.metrics.RequestLatencyMiddleware"}
SKIPPED_BY_THE_FRONT = {
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "ingest.middleware.DatabaseUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "catalog.admin.visibility.AdminViewerMiddleware",
    "core.pages.PageMessageMiddleware",
    "api.marquez.hosts.MarquezHostsMiddleware",
    "catalog.admin.query_guard.AdminQueryGuardMiddleware",
    "catalog.admin.statement_timeout.AdminStatementTimeoutMiddleware",
}


def test_a_middleware_added_to_the_settings_is_decided_for_the_front_paths() -> None:
    # The production settings as the server loads them, in a fresh interpreter (they read
    # their secret from the environment).
    code = "from django.conf import settings\nprint('\\n'.join(settings.MIDDLEWARE))\n"
    secret = "front-path-test-" + "k3yQ7vX2mP9tR4wZ8bN1cF6hJ0dL5sG" * 2
    shipped = set(printed(code, "config.settings.production", DJANGO_SECRET_KEY=secret).split())
    assert "ingest.metrics.RequestLatencyMiddleware" in shipped  # the production list was read
    decided = RESPONSE_MIDDLEWARE | OBSERVED_BY_THE_FRONT | SKIPPED_BY_THE_FRONT
    assert shipped - decided == set(), (
        "a middleware the front paths skip: say in config/read_front.py and ingest/fastpath.py "
        "what it does to their answers (run it there through RESPONSE_MIDDLEWARE, or say why "
        "skipping it changes nothing), then add it here"
    )
