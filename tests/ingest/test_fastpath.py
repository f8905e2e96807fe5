"""The WSGI fast path for POST /api/v1/lineage answers exactly as the Django view does."""

import gzip
import logging
from typing import Any

import orjson
import pytest
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.http import request as request_module
from django.test import RequestFactory, override_settings

from ingest.fastpath import MAX_LEARNED, IngestFastPath
from ingest.models import Event
from ingest.services import create_token
from tests.ingest.helpers import LINEAGE, dumps, run_event
from tests.wsgi_answer import wsgi_answer

pytestmark = pytest.mark.django_db(transaction=True)
CLOSED_PORT = "9"


@pytest.fixture
def app() -> IngestFastPath:
    return IngestFastPath(get_wsgi_application())


@pytest.fixture
def secret() -> str:
    return create_token("fast", "ingest")[1]


def call(
    app: IngestFastPath, body: bytes, *, method: str = "POST", **extra: Any
) -> tuple[int, dict[str, str], bytes]:
    extra.setdefault("content_type", "application/json")
    factory = RequestFactory()
    return wsgi_answer(app, factory.generic(method, LINEAGE, data=body, **extra).environ)


def test_new_event_is_stored_once_and_answered_like_the_view(app, secret) -> None:
    event = run_event()
    status, headers, body = call(app, dumps(event), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert status == 201
    assert headers["Content-Type"] == "application/json"
    first = orjson.loads(body)
    assert first["status"] == "created"
    assert Event.objects.get(id=first["id"]).payload == event
    status, _, body = call(app, dumps(event), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert (status, orjson.loads(body)) == (200, {"id": first["id"], "status": "duplicate"})


def test_a_new_event_costs_one_query(
    app, secret, steady_token_cache, django_assert_num_queries
) -> None:
    call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")  # token cached
    # 1. INSERT ... ON CONFLICT (digest) DO NOTHING RETURNING id, digest
    with django_assert_num_queries(1):
        status, _, _ = call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert status == 201


REQUESTS = [
    ("valid", lambda s: (dumps(run_event()), {"HTTP_AUTHORIZATION": f"Bearer {s}"})),
    (
        "invalid",
        lambda s: (dumps(run_event(eventTime="soon")), {"HTTP_AUTHORIZATION": f"Bearer {s}"}),
    ),
    (
        "facet warnings",
        lambda s: (
            dumps(run_event(job={"namespace": "n", "name": "j", "facets": {"sql": {"query": 1}}})),
            {"HTTP_AUTHORIZATION": f"Bearer {s}"},
        ),
    ),
    ("no token", lambda s: (dumps(run_event()), {})),
    ("wrong token", lambda s: (dumps(run_event()), {"HTTP_AUTHORIZATION": "Bearer nope"})),
    (
        "text body",
        lambda s: (b"x", {"HTTP_AUTHORIZATION": f"Bearer {s}", "content_type": "text/plain"}),
    ),
    ("not json", lambda s: (b"{", {"HTTP_AUTHORIZATION": f"Bearer {s}"})),
    (
        "gzip",
        lambda s: (
            gzip.compress(dumps(run_event())),
            {"HTTP_AUTHORIZATION": f"Bearer {s}", "HTTP_CONTENT_ENCODING": "gzip"},
        ),
    ),
    (
        "array",
        lambda s: (dumps([run_event(), run_event()]), {"HTTP_AUTHORIZATION": f"Bearer {s}"}),
    ),
]


REQUESTS += [
    (
        "accept xml",  # the view's negotiation: 406, and before authentication
        lambda s: (dumps(run_event()), {"HTTP_ACCEPT": "application/xml"}),
    ),
    (
        "accept json",
        lambda s: (
            dumps(run_event()),
            {"HTTP_AUTHORIZATION": f"Bearer {s}", "HTTP_ACCEPT": "application/json"},
        ),
    ),
    (
        "too deep",
        lambda s: (
            b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}",
            {"HTTP_AUTHORIZATION": f"Bearer {s}"},
        ),
    ),
]

# What the direct answer (ADR 0055) serves or hands back to the view, each compared too.
REQUESTS += [
    (
        "accept any",  # what openlineage-python's requests session sends
        lambda s: (dumps(run_event()), {"HTTP_AUTHORIZATION": f"Bearer {s}", "HTTP_ACCEPT": "*/*"}),
    ),
    (
        "accept indented json",  # DRF's renderer indents: the view answers
        lambda s: (
            dumps(run_event()),
            {"HTTP_AUTHORIZATION": f"Bearer {s}", "HTTP_ACCEPT": "application/json; indent=2"},
        ),
    ),
    (
        "format in the query",
        lambda s: (
            dumps(run_event()),
            {"HTTP_AUTHORIZATION": f"Bearer {s}", "QUERY_STRING": "format=json"},
        ),
    ),
    (
        "read token",
        lambda s: (
            dumps(run_event()),
            {"HTTP_AUTHORIZATION": f"Bearer {create_token('r', 'read')[1]}"},
        ),
    ),
    ("not a bearer token", lambda s: (dumps(run_event()), {"HTTP_AUTHORIZATION": f"Basic {s}"})),
    (
        "duplicate key",
        lambda s: (
            b'{"eventType":"START","eventType":"COMPLETE"}',
            {"HTTP_AUTHORIZATION": f"Bearer {s}"},
        ),
    ),
    (
        "unknown encoding",
        lambda s: (
            dumps(run_event()),
            {"HTTP_AUTHORIZATION": f"Bearer {s}", "HTTP_CONTENT_ENCODING": "br"},
        ),
    ),
    (
        "event over the size limit",
        lambda s: (
            dumps(run_event(job={"namespace": "n", "name": "j", "facets": {"x": "y" * 9_000_000}})),
            {"HTTP_AUTHORIZATION": f"Bearer {s}"},
        ),
    ),
]


def _same_answer(
    fast: tuple[int, dict[str, str], bytes], slow: tuple[int, dict[str, str], bytes]
) -> None:
    """Status, every header and the body equal (ids aside: each run inserts afresh)."""
    (fast_status, fast_headers, fast_body), (slow_status, slow_headers, slow_body) = fast, slow
    assert fast_status == slow_status, (fast_body, slow_body)
    fast_document, slow_document = orjson.loads(fast_body), orjson.loads(slow_body)
    for document in (fast_document, slow_document):
        if isinstance(document, dict) and document.get("status") in ("created", "duplicate"):
            document.pop("id", None)
            for item in document.get("results", []):
                item.pop("id")
    assert fast_document == slow_document
    for headers, body in ((fast_headers, fast_body), (slow_headers, slow_body)):
        assert headers.pop("Content-Length") == str(len(body))
    assert fast_headers == slow_headers


@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
@pytest.mark.parametrize(("name", "build"), REQUESTS, ids=[name for name, _ in REQUESTS])
def test_fast_path_and_view_give_the_same_answers(secret, name, build, secure) -> None:
    body, headers = build(secret)
    # Production's security headers (HSTS on HTTPS): the middleware reads them when built.
    with override_settings(SECURE_HSTS_SECONDS=3600, SECURE_HSTS_INCLUDE_SUBDOMAINS=True):
        django_app = get_wsgi_application()
        fast_app = IngestFastPath(django_app)
        fast = call(fast_app, body, secure=secure, **dict(headers))
        Event.objects.all().delete()  # the view must see the same (empty) log
        slow = call(django_app, body, secure=secure, **dict(headers))
    _same_answer(fast, slow)
    assert fast[1]["X-Frame-Options"] == "DENY" and fast[1]["Referrer-Policy"]
    assert ("Strict-Transport-Security" in fast[1]) is secure


def test_an_unexpected_error_is_a_logged_problem_document(secret, monkeypatch, caplog) -> None:
    def broken(request: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr("ingest.views.lineage_answer", broken)
    django_app = get_wsgi_application()
    body, headers = dumps(run_event()), {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    request_logger = logging.getLogger("django.request")  # LOGGING may stop propagation
    request_logger.addHandler(caplog.handler)
    try:
        fast = call(IngestFastPath(django_app), body, **headers)
    finally:
        request_logger.removeHandler(caplog.handler)
    assert fast[0] == 500 and fast[1]["Content-Type"] == "application/problem+json"
    assert orjson.loads(fast[2])["type"] == "urn:lineage-catalog:problem:server-error"
    [record] = [r for r in caplog.records if r.name == "django.request"]
    assert record.getMessage() == "Internal Server Error: /api/v1/lineage"
    assert record.exc_info and "a bug" in str(record.exc_info[1])
    _same_answer(fast, call(django_app, body, **headers))


def test_route_and_classes_come_from_the_urlconf_and_the_view() -> None:
    from django.urls import resolve

    from ingest.views import LineageView

    app = IngestFastPath(get_wsgi_application())
    assert app.path == "/api/v1/lineage" and app.route == "api/v1/lineage"
    assert app.view.view_class is LineageView is resolve(app.path).func.view_class


def test_a_read_token_is_forbidden(app) -> None:
    reader = create_token("reader", "read")[1]
    status, headers, body = call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {reader}")
    assert status == 403
    assert headers["Content-Type"] == "application/problem+json"
    assert orjson.loads(body)["type"] == "urn:lineage-catalog:problem:forbidden"


def test_other_requests_are_left_to_django(app, secret) -> None:
    status, headers, _ = call(app, b"", method="GET", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert status == 405  # DRF's answer, as a problem document
    assert headers["Content-Type"] == "application/problem+json"
    with override_settings(ALLOWED_HOSTS=["lineage.example.com"]):
        status, _, _ = call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert status == 400  # Django's disallowed-host answer
    with override_settings(SECURE_SSL_REDIRECT=True):
        # Django's middleware reads the setting when it is built: build the app in here.
        redirecting = IngestFastPath(get_wsgi_application())
        status, headers, _ = call(
            redirecting, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}"
        )
    assert status == 301 and headers["Location"].startswith("https://")
    assert not Event.objects.exists()


def test_a_plain_http_write_is_stored_where_the_https_redirect_exempts_it(
    secret, monkeypatch
) -> None:
    # Production's exemptions (ADR 0164): an in-cluster producer posts to the Service over
    # plain HTTP; the write is stored by the fast path itself, a read is still redirected.
    exempt = [r"^healthz$", *settings.INGEST_PATHS_NOT_REDIRECTED]
    dispatched = _count_dispatches(monkeypatch)
    with override_settings(SECURE_SSL_REDIRECT=True, SECURE_REDIRECT_EXEMPT=exempt):
        redirecting = IngestFastPath(get_wsgi_application())
        status, _, _ = call(redirecting, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")
        assert (status, Event.objects.count(), dispatched) == (201, 1, [])
        read = RequestFactory().get("/api/v1/jobs", HTTP_AUTHORIZATION=f"Bearer {secret}")
        status, _, _ = wsgi_answer(redirecting, read.environ)
    assert status == 301


def test_database_down_is_a_503(app, secret) -> None:
    call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")  # token cached
    connection = connections["default"]
    original_port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = CLOSED_PORT
    try:
        status, headers, body = call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")
    finally:
        connection.close()
        connection.settings_dict["PORT"] = original_port
    assert status == 503
    assert headers["Retry-After"] == "5"
    assert orjson.loads(body)["type"] == "urn:lineage-catalog:problem:database-unavailable"


def _count_dispatches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from ingest.views import LineageView

    dispatched: list[str] = []
    dispatch = LineageView.dispatch

    def counted(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        dispatched.append(request.path)
        return dispatch(self, request, *args, **kwargs)

    monkeypatch.setattr(LineageView, "dispatch", counted)
    return dispatched


def test_an_ordinary_request_is_answered_without_drf_dispatch(app, secret, monkeypatch) -> None:
    dispatched = _count_dispatches(monkeypatch)
    for accept in ("", "*/*", "application/json"):
        status, _, _ = call(
            app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_ACCEPT=accept
        )
        assert status == 201
    status, _, _ = call(
        app, dumps(run_event(eventTime="soon")), HTTP_AUTHORIZATION=f"Bearer {secret}"
    )
    assert status == 400  # a refusal of the event itself is answered directly too
    assert dispatched == []


@pytest.mark.parametrize(
    "extra",
    [
        {},  # no token
        {"HTTP_AUTHORIZATION": "Bearer unknown"},
        {"HTTP_ACCEPT": "application/json; indent=2"},
        {"HTTP_ACCEPT": "text/html"},
        {"QUERY_STRING": "format=json"},
    ],
    ids=["no token", "unknown token", "indent", "html", "query"],
)
def test_anything_else_is_answered_by_the_view(app, secret, monkeypatch, extra) -> None:
    dispatched = _count_dispatches(monkeypatch)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}", **extra}
    if not extra:
        headers.pop("HTTP_AUTHORIZATION")
    call(app, dumps(run_event()), **headers)
    assert dispatched == ["/api/v1/lineage"]


def test_the_shipped_view_is_configured_for_the_direct_answer() -> None:
    from ingest.direct import DirectLineageAnswer
    from ingest.views import LineageView

    assert DirectLineageAnswer.for_view(LineageView) is not None
    assert IngestFastPath(get_wsgi_application()).direct is not None


def test_a_view_configured_otherwise_turns_the_direct_answer_off(monkeypatch) -> None:
    from rest_framework.renderers import BrowsableAPIRenderer
    from rest_framework.throttling import AnonRateThrottle

    from core.rendering import JSONRenderer
    from ingest.direct import DirectLineageAnswer
    from ingest.views import LineageView

    for name, value in [
        ("throttle_classes", [AnonRateThrottle]),
        ("renderer_classes", [JSONRenderer, BrowsableAPIRenderer]),
        ("authentication_classes", []),
        ("permission_classes", []),
    ]:
        with monkeypatch.context() as patch:
            patch.setattr(LineageView, name, value)
            assert DirectLineageAnswer.for_view(LineageView) is None, name
    with override_settings(
        REST_FRAMEWORK={"EXCEPTION_HANDLER": "rest_framework.views.exception_handler"}
    ):
        assert DirectLineageAnswer.for_view(LineageView) is None


@pytest.mark.parametrize("secure", [False, True], ids=["http", "https"])
def test_answers_after_the_first_of_their_kind_have_djangos_headers(secret, secure) -> None:
    """The headers learned from the header middleware (AnswerHeaders, ADR 0126): every
    answer after the first 201 and the first 200 is compared with Django's own."""
    with override_settings(SECURE_HSTS_SECONDS=3600, SECURE_HSTS_INCLUDE_SUBDOMAINS=True):
        django_app = get_wsgi_application()
        fast_app = IngestFastPath(django_app)
        auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
        for size in (1, 300, 30_000, 1):  # lengths of other widths, in the same place
            event = run_event(job={"namespace": "n", "name": "j" * size})
            fast = call(fast_app, dumps(event), secure=secure, **auth)
            again = call(fast_app, dumps(event), secure=secure, **auth)  # a duplicate: 200
            Event.objects.all().delete()
            slow = call(django_app, dumps(event), secure=secure, **auth)
            slow_again = call(django_app, dumps(event), secure=secure, **auth)
            Event.objects.all().delete()
            assert (fast[0], again[0]) == (201, 200)
            for mine, theirs in ((fast, slow), (again, slow_again)):
                assert list(mine[1]) == list(theirs[1])  # the same headers in the same order
                _same_answer(mine, theirs)
    assert len(fast_app.headers.learned) == 2


def test_an_answer_the_middleware_changes_is_never_learned(rf) -> None:
    from django.http import HttpResponse

    from ingest.direct import Answer
    from ingest.fastpath import AnswerHeaders

    def compressing(request: Any) -> HttpResponse:
        response = request.fastpath_response
        response.content = gzip.compress(response.content)
        response["Content-Length"] = str(len(response.content))
        return response

    headers = AnswerHeaders(compressing)
    answer = Answer(201, b'{"id":1}', "application/json", ())
    for _ in range(2):
        status, _, content = headers(rf.post(LINEAGE), answer)
        assert (status, gzip.decompress(content)) == ("201 Created", answer.content)
    assert headers.learned == {}


def test_the_host_is_validated_once_per_request(app, secret, monkeypatch) -> None:
    """ADR 0131: the fast path's check and CommonMiddleware's share one validation."""
    validated: list[str] = []
    validate = request_module.validate_host

    def counted(host: str, allowed_hosts: list[str]) -> bool:
        validated.append(host)
        return validate(host, allowed_hosts)

    monkeypatch.setattr(request_module, "validate_host", counted)
    status, _, _ = call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert status == 201
    assert validated == ["testserver"]
    # ADR 0136: a Host found allowed is not validated again by the same fast path.
    status, _, _ = call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert status == 201
    assert validated == ["testserver"]
    # A Host not allowed is still refused by the check, and the request left to Django.
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        status, _, _ = call(
            app, dumps(run_event()), HTTP_HOST="evil.example", HTTP_AUTHORIZATION=f"Bearer {secret}"
        )
    assert status == 400


def test_a_host_found_allowed_is_validated_again_when_the_settings_change(app, secret) -> None:
    """ADR 0136: the Hosts a fast path knows are allowed are kept with DEBUG and
    ALLOWED_HOSTS; other settings validate anew, and a Host refused is never kept."""
    headers = {"HTTP_HOST": "ingest.example", "HTTP_AUTHORIZATION": f"Bearer {secret}"}
    with override_settings(ALLOWED_HOSTS=["ingest.example"]):
        assert call(app, dumps(run_event()), **headers)[0] == 201
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        assert call(app, dumps(run_event()), **headers)[0] == 400  # Django's refusal
        assert call(app, dumps(run_event()), **headers)[0] == 400
    assert app.hosts.allowed == {("ingest.example", False, ("ingest.example",))}


def test_at_most_so_many_hosts_are_kept(app, secret) -> None:
    app.hosts.allowed = {(f"host-{n}", False, ("*",)) for n in range(MAX_LEARNED)}
    with override_settings(ALLOWED_HOSTS=["*"]):
        status, _, _ = call(
            app, dumps(run_event()), HTTP_HOST="one.more", HTTP_AUTHORIZATION=f"Bearer {secret}"
        )
    assert status == 201
    assert len(app.hosts.allowed) == MAX_LEARNED
