"""A write whose answer from PostgreSQL is lost after the server committed it: the 503 says
it may have been stored, and sending it again is answered as a duplicate.

The connection goes through a TCP proxy that forwards everything until the server's answer
holds the INSERT's command tag, then closes the connection instead of forwarding it. The
single-event INSERT runs in autocommit, so by then PostgreSQL has stored the event: a 503
saying "nothing was stored" would be false (it was before this test).
"""

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import orjson
import pytest
from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.test import Client

from ingest.fastpath import IngestFastPath
from ingest.models import Event
from ingest.services import create_token
from tests.ingest.helpers import LINEAGE, dumps, run_event
from tests.ingest.test_fastpath import call

pytestmark = pytest.mark.django_db(transaction=True)

IN_DOUBT = (
    "The connection to the database was lost during the request, so it may have been "
    "stored. Retry the same request later. What was stored before is answered as a "
    "duplicate, not stored twice (a metadata record only when it names its resource and "
    "timestamp)."
)
# PostgreSQL's CommandComplete for one inserted row: "C", its length, the tag.
INSERT_ONE = b"C\x00\x00\x00\x0fINSERT 0 1\x00"


class AnswerDroppingProxy:
    """Forwards connections to PostgreSQL; once ``armed``, the first answer that holds
    ``tag`` is not forwarded: both sides of that connection are closed instead."""

    def __init__(self, host: str, port: int, tag: bytes) -> None:
        self.upstream = (host, port)
        self.tag = tag
        self.armed = threading.Event()
        self.dropped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(self.upstream)
            for source, sink, watch in ((client, server, False), (server, client, True)):
                threading.Thread(
                    target=self._pump, args=(source, sink, watch, (client, server)), daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket, watch: bool, ends: Any) -> None:
        tail = b""  # the tag may be split between two reads
        with suppress(OSError):  # the other pump closed both ends
            while data := source.recv(65536):
                if watch and self.armed.is_set() and self.tag in tail + data:
                    self.dropped.set()
                    break
                tail = data[-len(self.tag) :]
                sink.sendall(data)
        for end in ends:
            with suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()


@contextmanager
def through_proxy() -> Iterator[AnswerDroppingProxy]:
    """The default connection, reopened through the proxy (no TLS, so it sees the tags)."""
    connection = connections["default"]
    settings = connection.settings_dict
    original = (settings["HOST"], settings["PORT"], dict(settings["OPTIONS"]))
    proxy = AnswerDroppingProxy(settings["HOST"] or "127.0.0.1", int(settings["PORT"]), INSERT_ONE)
    connection.close()
    settings["HOST"], settings["PORT"] = "127.0.0.1", str(proxy.port)
    settings["OPTIONS"] = {**settings["OPTIONS"], "sslmode": "disable"}
    try:
        yield proxy
    finally:
        connection.close()
        settings["HOST"], settings["PORT"], settings["OPTIONS"] = original
        proxy.close()


def _through_django(secret: str) -> Callable[[bytes], tuple[int, dict[str, Any]]]:
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")

    def post(body: bytes) -> tuple[int, dict[str, Any]]:
        response = client.post(LINEAGE, data=body, content_type="application/json")
        return response.status_code, response.json()

    return post


def _through_the_fast_path(secret: str) -> Callable[[bytes], tuple[int, dict[str, Any]]]:
    """The shipped WSGI path for an ordinary single event (ingest/fastpath.py)."""
    app = IngestFastPath(get_wsgi_application())

    def post(body: bytes) -> tuple[int, dict[str, Any]]:
        status, _, content = call(app, body, HTTP_AUTHORIZATION=f"Bearer {secret}")
        return status, orjson.loads(content)

    return post


@pytest.mark.parametrize("path", [_through_django, _through_the_fast_path])
def test_a_write_committed_before_its_answer_was_lost_says_it_may_be_stored(path) -> None:
    post = path(create_token("lost answer", "ingest")[1])
    event = dumps(run_event())
    with through_proxy() as proxy:
        assert post(dumps(run_event()))[0] == 201  # the proxy forwards until armed
        proxy.armed.set()
        status, problem = post(event)
        assert proxy.dropped.is_set(), "the INSERT's answer was meant to be dropped"
    assert status == 503
    assert problem["type"] == "urn:lineage-catalog:problem:database-unavailable"
    assert problem["detail"] == IN_DOUBT
    stored = Event.objects.get(payload=orjson.loads(event))
    # The retry the detail asks for: the same event, answered as the one already stored.
    assert post(event) == (200, {"id": stored.id, "status": "duplicate"})
    assert Event.objects.count() == 2
