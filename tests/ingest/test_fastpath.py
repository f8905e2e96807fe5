"""The WSGI fast path for POST /api/v1/lineage answers exactly as the Django view does."""

import gzip
from typing import Any

import orjson
import pytest
from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.test import Client, RequestFactory, override_settings

from ingest.fastpath import IngestFastPath
from ingest.models import Event
from ingest.services import create_token
from tests.ingest.helpers import LINEAGE, dumps, run_event

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
    request = factory.generic(method, LINEAGE, data=body, **extra)
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer["status"], answer["headers"] = int(status.split()[0]), dict(headers)

    chunks = app(request.environ, start_response)
    content = b"".join(chunks)
    if hasattr(chunks, "close"):
        chunks.close()
    return answer["status"], answer["headers"], content


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


def test_a_new_event_costs_one_query(app, secret, django_assert_num_queries) -> None:
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


@pytest.mark.parametrize(("name", "build"), REQUESTS, ids=[name for name, _ in REQUESTS])
def test_fast_path_and_view_give_the_same_answers(app, secret, name, build) -> None:
    body, headers = build(secret)
    fast_status, fast_headers, fast_body = call(app, body, **dict(headers))
    Event.objects.all().delete()  # the view must see the same (empty) log
    view = Client().post(LINEAGE, data=body, **{"content_type": "application/json", **headers})
    assert fast_status == view.status_code
    assert fast_headers["Content-Type"] == view["Content-Type"]
    fast, slow = orjson.loads(fast_body), view.json()
    if fast_status in (200, 201):  # ids differ: a fresh insert each time
        fast.pop("id", None), slow.pop("id", None)
        for item in (*fast.get("results", []), *slow.get("results", [])):
            item.pop("id")
    assert fast == slow
    if fast_status == 401:
        assert fast_headers["WWW-Authenticate"] == view["WWW-Authenticate"]


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
