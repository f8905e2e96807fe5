"""docs/problems.md's table, request by request, through the shipped application.

Each refusal the table lists is sent to every write endpoint it applies to (and the read
API's to a read), through what config/wsgi.py serves: the reads' front path, the
single-event fast path, then Django. Every answer must be a problem document whose type is
a row of the table with that row's status; and every row must be answered here or by the
test named for it in ``ELSEWHERE``. The table had no row for three types the service
answers (``invalid-cursor``, ``method-not-allowed``, ``not-acceptable``), and nothing sent
an unknown ``Content-Encoding``, a non-JSON type or a body too deep to the edge and
metadata endpoints.
"""

import gzip
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.wsgi import get_wsgi_application
from django.test import Client, RequestFactory, override_settings

from config.read_front import ReadFrontPath
from core.problems import _DRF_SLUGS, PROBLEM_CONTENT_TYPE, TYPE_PREFIX
from ingest.fastpath import IngestFastPath
from ingest.services import create_token, revoke_token
from tests.ingest.helpers import BATCH, EDGES, LINEAGE, METADATA, dumps, run_event
from tests.wsgi_answer import wsgi_answer

PROBLEMS = Path(__file__).resolve().parents[2] / "docs" / "problems.md"
WRITES = [LINEAGE, BATCH, EDGES, METADATA]
# Rows whose answer needs a fault or a broken view: the test that answers each.
ELSEWHERE = {
    "server-error": "tests/ingest/test_fastpath.py, tests/api/test_read_front.py",
    "database-unavailable": "tests/ingest/test_availability.py, test_lost_answer.py",
    "statement-timeout": "tests/security/test_read_statement_timeout.py",
    "body-readers-busy": "tests/core/test_body_reads.py, test_web_server_body_reads.py",
}

Answer = tuple[int, dict[str, str], dict[str, Any]]


def documented() -> dict[str, int]:
    """The table's rows: type (after the prefix) -> status."""
    rows = re.findall(r"^\| `([a-z-]+)` \| (\d{3}) \|", PROBLEMS.read_text(), re.MULTILINE)
    return {slug: int(status) for slug, status in rows}


def nested(depth: int) -> Any:
    document: Any = "leaf"
    for _ in range(depth):
        document = [document]
    return document


@pytest.fixture
def send() -> Iterator[Callable[..., Answer]]:
    app = ReadFrontPath(IngestFastPath(get_wsgi_application()))

    def call(path: str, method: str = "GET", body: bytes = b"", **extra: Any) -> Answer:
        extra.setdefault("content_type", "application/json")
        request = RequestFactory().generic(method, path, data=body, **extra)
        status, headers, content = wsgi_answer(app, request.environ)
        return status, headers, orjson.loads(content)

    yield call
    cache.clear()  # the throttle's counts


def check(answer: Answer, slug: str, table: dict[str, int], seen: set[str]) -> None:
    status, headers, body = answer
    assert headers["Content-Type"] == PROBLEM_CONTENT_TYPE, (slug, status, body)
    assert body["type"] == TYPE_PREFIX + slug, body
    assert table.get(slug) == status, f"{slug} answered {status}, docs/problems.md: {table}"
    assert body["status"] == status
    if slug == "unauthenticated":  # the table's "(WWW-Authenticate: Bearer)"
        assert headers["WWW-Authenticate"].startswith("Bearer"), headers
    seen.add(slug)


@pytest.mark.django_db(transaction=True)
def test_every_type_answered_is_a_row_and_every_row_is_answered(send) -> None:
    table = documented()
    seen: set[str] = set()
    ingest = {"HTTP_AUTHORIZATION": f"Bearer {create_token('writes', 'ingest')[1]}"}
    read = {"HTTP_AUTHORIZATION": f"Bearer {create_token('reads', 'read')[1]}"}
    revoked, revoked_secret = create_token("revoked", "ingest")
    revoke_token(revoked.id)
    body = dumps(run_event())
    for url in WRITES:
        check(send(url, "POST", b'{"a": 1e400}', **ingest), "invalid-json", table, seen)
        check(send(url, "POST", b'{"a": "\\ud800"}', **ingest), "invalid-json", table, seen)
        check(send(url, "POST", b'{"a": "\xff"}', **ingest), "invalid-json", table, seen)
        check(send(url, "POST", b"{}", **ingest), "invalid-event", table, seen)
        gzipped = {"HTTP_CONTENT_ENCODING": "gzip", **ingest}
        check(send(url, "POST", b"not gzip", **gzipped), "invalid-gzip", table, seen)
        deep = dumps(nested(settings.LINEAGE["MAX_JSON_DEPTH"] + 1))
        check(send(url, "POST", deep, **ingest), "too-deep", table, seen)
        # "deeper than" the limit: a body nested exactly that deep is read (and refused or
        # reported for its shape, not its depth). Its empty lists put more brackets in it
        # than the limit, so it takes the exact walk, not the bracket count's shortcut.
        limit = settings.LINEAGE["MAX_JSON_DEPTH"]
        at_limit = send(url, "POST", dumps([nested(limit - 1), *[[]] * 10]), **ingest)
        assert at_limit[2].get("type") != TYPE_PREFIX + "too-deep", (url, at_limit)
        check(send(url, "POST", body), "unauthenticated", table, seen)
        revoked_auth = {"HTTP_AUTHORIZATION": f"Bearer {revoked_secret}"}
        check(send(url, "POST", body, **revoked_auth), "unauthenticated", table, seen)
        check(send(url, "POST", body, **read), "forbidden", table, seen)
        plain = {"content_type": "text/plain", **ingest}
        check(send(url, "POST", body, **plain), "unsupported-media-type", table, seen)
        brotli = {"HTTP_CONTENT_ENCODING": "br", **ingest}
        check(send(url, "POST", body, **brotli), "unsupported-content-encoding", table, seen)
        html = {"HTTP_ACCEPT": "text/html", **ingest}
        check(send(url, "POST", body, **html), "not-acceptable", table, seen)
        # Served by a WSGI server that passes a malformed header through (granian refuses
        # it first: tests/deploy/test_web_server.py), Django's request.body was a 500.
        for declared in ("abc", "-1", "1e3", "\u0661"):
            length = {"CONTENT_LENGTH": declared, **ingest}
            check(send(url, "POST", body, **length), "invalid-content-length", table, seen)
        if url != METADATA:  # GET /api/v1/metadata is the read API's list
            check(send(url, "GET", **ingest), "method-not-allowed", table, seen)
    # NDJSON is the batch endpoint's alone (the table's 415 row).
    ndjson = {"content_type": "application/x-ndjson", **ingest}
    for url in [LINEAGE, EDGES, METADATA]:
        check(send(url, "POST", body, **ndjson), "unsupported-media-type", table, seen)
    check(send(BATCH, "POST", body + b"\n{\n", **ndjson), "invalid-json", table, seen)

    limits = {"MAX_REQUEST_BYTES": 1024, "MAX_DECOMPRESSED_BYTES": 2048, "MAX_BATCH_EVENTS": 2}
    with override_settings(LINEAGE={**settings.LINEAGE, **limits, "MAX_EVENT_BYTES": 256}):
        for url in WRITES:
            big = b" " * 1100 + b"{}"
            check(send(url, "POST", big, **ingest), "payload-too-large", table, seen)
        # One event over LINEAGE_MAX_EVENT_BYTES, in a body under the request's limit (in a
        # batch it fails alone: tests/ingest/test_batch_edges_metadata.py).
        for url, event in [
            (LINEAGE, run_event(padding="x" * 300)),
            (EDGES, {"source_table": "a", "target_table": "b", "pipeline": "x" * 300}),
            (METADATA, {"resource": "r", "subject": "s", "action": "x" * 300}),
        ]:
            answer = send(url, "POST", dumps(event), **ingest)
            check(answer, "payload-too-large", table, seen)
            assert "An event is larger than the limit of 256 bytes" in answer[2]["detail"]
            inflated = gzip.compress(b" " * 3000 + b"{}")
            gzipped = {"HTTP_CONTENT_ENCODING": "gzip", **ingest}
            check(send(url, "POST", inflated, **gzipped), "payload-too-large", table, seen)
        three = dumps([run_event(), run_event(), run_event()])
        check(send(BATCH, "POST", three, **ingest), "payload-too-large", table, seen)

    for path in ["/api/v1/jobs?limit=many", "/api/v1/jobs?format=xml", "/api/v1/search"]:
        check(send(path, **read), "invalid-request", table, seen)
    check(send("/api/v1/datasets?cursor=not-a-cursor", **read), "invalid-cursor", table, seen)
    check(send("/api/v1/jobs/404", **read), "not-found", table, seen)
    check(send("/api/v2/anything", **read), "not-found", table, seen)
    check(send("/api/v1/jobs"), "unauthenticated", table, seen)
    check(send("/api/v1/jobs", **ingest), "forbidden", table, seen)
    session = Client()  # a signed-in admin user without the view permissions
    session.force_login(get_user_model().objects.create_user("someone", password="x"))
    cookie = {"HTTP_COOKIE": f"sessionid={session.cookies['sessionid'].value}"}
    check(send("/api/v1/datasets", **cookie), "forbidden", table, seen)
    check(send("/api/v1/jobs", "POST", b"{}", **read), "method-not-allowed", table, seen)
    xml = {"HTTP_ACCEPT": "application/xml", **read}
    check(send("/api/v1/jobs", **xml), "not-acceptable", table, seen)
    rates = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"read": "1/min"}}
    with override_settings(REST_FRAMEWORK=rates):
        cache.clear()
        assert send("/api/v1/jobs", **read)[0] == 200
        throttled = send("/api/v1/jobs", **read)
        check(throttled, "throttled", table, seen)
        assert int(throttled[1]["Retry-After"]) > 0  # the table's "after Retry-After"

    assert set(table) - seen == set(ELSEWHERE), "rows neither answered here nor elsewhere"


def test_the_types_drfs_errors_become_are_rows() -> None:
    """core/problems.py names the type of each DRF error by its status; each is a row."""
    table = documented()
    assert {slug: table.get(slug) for slug, _ in _DRF_SLUGS.values()} == {
        slug: status for status, (slug, _) in _DRF_SLUGS.items()
    }
