"""Lean load generation for benchmarks that share the machine with what they measure.

On two cores every millisecond the load generator spends is taken from the system under
test. openlineage-python's ``HttpTransport.emit`` costs ~2.4 ms of client CPU per event
(serialisation, gzip, then requests and urllib3), against ~0.4 ms for the same request
built beforehand and sent over a kept-alive ``http.client`` connection (bench/client_cpu.py,
2026-12-01). So the soak has the client build each request before the clock starts
(``openlineage_requests``: the transport's own ``emit``, with a session that keeps what it
would post), and sends it with ``Connection`` while the clock runs. The server receives
the body and headers the real client sends.
"""

import http.client
import io
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from urllib.parse import urlsplit

import orjson
import requests
from openlineage.client.transport.http import (
    ApiKeyTokenProvider,
    HttpCompression,
    HttpConfig,
    HttpTransport,
)

PreparedRequest = tuple[str, bytes, dict[str, str]]  # (path, body, headers)


class Connection:
    """One kept-alive HTTP/1.1 connection to ``url``, opened again after any failure."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.timeout = timeout
        self._connection: http.client.HTTPConnection | None = None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """(status, body); raises on a transport error, after closing the connection."""
        if self._connection is None:
            self._connection = http.client.HTTPConnection(self.host, self.port, self.timeout)
        try:
            self._connection.request(method, path, body=body, headers=headers or {})
            response = self._connection.getresponse()
            return response.status, response.read()
        except Exception:
            self._connection.close()
            self._connection = None
            raise


class _KeepPosts(requests.Session):
    """A session that keeps what ``HttpTransport`` would post instead of posting it."""

    def post(self, url, data=None, **kwargs):  # type: ignore[no-untyped-def,override]
        self.kept = (urlsplit(url).path, data, dict(kwargs["headers"]))
        response = requests.Response()
        response.status_code, response.raw = 200, io.BytesIO()
        return response


def openlineage_transport(
    url: str, token: str, session: requests.Session | None = None
) -> HttpTransport:
    """openlineage-python's HTTP transport as the soak's producers configure it: gzip, an
    API key, no retries (a failure is counted, not hidden)."""
    return HttpTransport(
        HttpConfig(
            url=url,
            endpoint="api/v1/lineage",
            auth=ApiKeyTokenProvider({"apiKey": token}),
            compression=HttpCompression.GZIP,
            timeout=10.0,
            retry={"total": 0},
            session=session,
        )
    )


_transport: HttpTransport | None = None


def _start(url: str, token: str) -> None:
    global _transport
    _transport = openlineage_transport(url, token, session=_KeepPosts())


def _prepare(body: bytes) -> PreparedRequest:
    assert _transport is not None
    _transport.emit(orjson.loads(body))
    return _transport.session.kept  # type: ignore[attr-defined,no-any-return]


def openlineage_requests(url: str, token: str, bodies: Iterable[bytes]) -> list[PreparedRequest]:
    """What openlineage-python's HTTP transport (gzip, API key) posts for each event, built
    on every core before a run starts."""
    with ProcessPoolExecutor(os.cpu_count(), initializer=_start, initargs=(url, token)) as pool:
        return list(pool.map(_prepare, bodies, chunksize=500))
