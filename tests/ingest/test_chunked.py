"""A chunked body (``Transfer-Encoding: chunked``, no Content-Length) sent over a real
socket to the real web server (granian): read up to the request limit by the fast path
and the views.

Django reads Content-Length bytes only, so such an event was answered 400 "The body is
empty" and lost; the earlier test of this name never sent a chunked request at all.
"""

import http.client
import socket
from collections.abc import Iterator

import orjson
import pytest
from django.db import connection

from ingest.models import Event
from ingest.services import create_token
from tests.faults.processes import current_database_url, service_env, web
from tests.ingest.helpers import BATCH, EDGES, LINEAGE, run_event

pytestmark = pytest.mark.django_db(transaction=True)
LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def server(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The shipped web server serving config.wsgi (fast path in front of Django) on the test
    database; one for the module's tests (ADR 0210): each sends its own requests with its
    own token, and the flush after each empties the tables under it, as it did under a
    server of its own."""
    tmp_path = tmp_path_factory.mktemp("chunked")
    settings = connection.settings_dict
    env = service_env(
        current_database_url(), "redis://127.0.0.1:1/0"
    )  # no broker: the sweep catches up
    env["LINEAGE_MAX_REQUEST_BYTES"] = str(LIMIT)
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = settings["PASSWORD"]
    service, url = web(env, tmp_path / "web.log")
    try:
        yield url.rsplit(":", 1)[1]
    finally:
        service.stop()


def send_chunked(
    port: str, path: str, token: str, body: bytes, piece: int = 1000
) -> tuple[int, bytes]:
    """POST ``body`` in chunks of ``piece`` bytes; (status, response body)."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[start : start + piece]), body[start : start + piece])
        for start in range(0, len(body), piece)
    )
    with socket.create_connection(("127.0.0.1", int(port)), timeout=30) as sock:
        sock.sendall(head + chunks + b"0\r\n\r\n")
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.read()


def test_a_chunked_event_is_stored_by_the_fast_path_and_the_views(server) -> None:
    token = create_token("chunked", "ingest")[1]
    event = run_event()
    status, body = send_chunked(server, LINEAGE, token, orjson.dumps(event))
    assert status == 201, body
    assert Event.objects.get(id=orjson.loads(body)["id"]).payload == event
    status, body = send_chunked(server, BATCH, token, orjson.dumps([run_event()]))
    assert status == 200 and orjson.loads(body)["summary"]["successful"] == 1, body
    edge = {"source_table": "a.b", "target_table": "c.d"}
    status, body = send_chunked(server, EDGES, token, orjson.dumps(edge))
    assert status == 201, body
    assert Event.objects.count() == 3


def test_chunked_body_without_content_length_is_still_limited(server) -> None:
    token = create_token("chunked", "ingest")[1]
    big = orjson.dumps(run_event(padding="x" * (2 * LIMIT)))
    for path in (LINEAGE, BATCH):
        status, body = send_chunked(server, path, token, big, piece=8192)
        assert status == 413, (path, body)
        assert orjson.loads(body)["type"] == "urn:lineage-catalog:problem:payload-too-large"
    assert not Event.objects.exists()


def test_a_declared_length_over_the_limit_is_refused_before_the_body_arrives(server) -> None:
    """docs/ingest.md: the declared size is checked before the body is read. A client that
    declares 100 MB and sends a few bytes is answered 413 at once, by the fast path and the
    view alike; a server that waited for (or buffered) the body would never answer."""
    token = create_token("declared", "ingest")[1]
    for path in (LINEAGE, f"{LINEAGE}?via=dispatch", BATCH, EDGES):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {100 * 1024 * 1024}\r\nConnection: close\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", int(server)), timeout=10) as sock:
            sock.sendall(head + b'{"eventTime": ')
            response = http.client.HTTPResponse(sock)
            response.begin()  # a socket timeout here: the server waited for the body
            assert response.status == 413, (path, response.read())
            assert orjson.loads(response.read())["type"].endswith("payload-too-large")
    assert not Event.objects.exists()
