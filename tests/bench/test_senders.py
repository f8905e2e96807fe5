"""bench.senders: the soak's prepared single-event requests are what openlineage-python
sends, and its connection sends them as they are."""

import gzip
import http.server
import threading
from collections.abc import Iterator

import orjson
import pytest
from openlineage.client.transport.http import (
    ApiKeyTokenProvider,
    HttpCompression,
    HttpConfig,
    HttpTransport,
)

from bench.senders import Connection, openlineage_requests

EVENTS = [
    orjson.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": f"2026-12-01T08:00:0{index}Z",
            "run": {"runId": f"01937c3e-0000-7000-8000-00000000000{index}", "facets": {}},
            "job": {"namespace": "spark", "name": f"job.{index}", "facets": {"x": None}},
            "inputs": [],
            "outputs": [],
            "producer": "https://example.com/producer",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
    )
    for index in range(3)
]


@pytest.fixture
def capture() -> Iterator[tuple[str, list[tuple[str, bytes, dict[str, str]]]]]:
    """A real HTTP server on loopback that keeps each POST (path, body, headers)."""
    posts: list[tuple[str, bytes, dict[str, str]]] = []

    class Keep(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            posts.append((self.path, body, dict(self.headers)))
            self.send_response(201)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Keep)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", posts
    server.shutdown()
    server.server_close()


def test_prepared_requests_are_what_the_client_sends(capture) -> None:
    url, posts = capture
    transport = HttpTransport(
        HttpConfig(
            url=url,
            auth=ApiKeyTokenProvider({"apiKey": "secret-token"}),
            compression=HttpCompression.GZIP,
        )
    )
    for body in EVENTS:
        transport.emit(orjson.loads(body))
    prepared = openlineage_requests(url, "secret-token", EVENTS)

    connection = Connection(url, timeout=5)
    for path, body, headers in prepared:
        assert connection.request("POST", path, body, headers) == (201, b"")
    sent_by_client, sent_by_us = posts[:3], posts[3:]
    assert len(sent_by_us) == 3
    for (path, body, headers), (our_path, our_body, our_headers) in zip(
        sent_by_client, sent_by_us, strict=True
    ):
        assert our_path == path == "/api/v1/lineage"
        # gzip stamps the time into its header: compare what it carries.
        assert gzip.decompress(our_body) == gzip.decompress(body)
        assert b'"x"' not in gzip.decompress(our_body)  # the client's own serialisation
        for name in ("Content-Type", "Content-Encoding", "Authorization"):
            assert our_headers[name] == headers[name], name
    assert sent_by_us[0][2]["Authorization"] == "Bearer secret-token"


def test_connection_reopens_after_a_failure(capture) -> None:
    url, posts = capture
    connection = Connection(url, timeout=5)
    assert connection.request("POST", "/a", b"1", {})[0] == 201
    connection._connection.sock.close()  # the server went away mid-connection
    with pytest.raises(OSError):
        connection.request("POST", "/b", b"2", {})
    assert connection.request("POST", "/c", b"3", {})[0] == 201
    assert [path for path, _, _ in posts] == ["/a", "/c"]
