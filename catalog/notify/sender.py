"""One bounded HTTP POST to a checked address (ADR 0086).

The standard library's ``http.client``, because the connection must go to the address
``addresses.resolve`` checked and nowhere else: the socket is opened to that IP, the Host
header and the TLS server name (and certificate check) are the URL's host. It never follows
a redirect (a 3xx is an answer like any other, and not a success). The answer is read at
most ``MAX_ANSWER_BYTES`` and at most ``ANSWER_SECONDS`` long, each read waiting at most
``READ_TIMEOUT_SECONDS``.
"""

import http.client
import socket
import ssl
import time
from dataclasses import dataclass

from django.conf import settings

from catalog.notify.addresses import RefusedAddress, Target, resolve


@dataclass
class Answer:
    status: int | None  # None: no HTTP answer (refused, unreachable, timed out)
    excerpt: str  # the start of the body, at most MAX_ANSWER_BYTES of it
    error: str  # why it is not a success ("" for a 2xx)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        self._tls = ssl.create_default_context()  # certificates checked against the host
        super().__init__(target.host, target.port, timeout=timeout, context=self._tls)
        self._address = target.address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str]) -> Answer:
    """POST ``body`` to ``url`` (checked again now: DNS may have changed since it was saved)."""
    options = settings.WEBHOOKS
    try:
        target = resolve(url)
    except RefusedAddress as error:
        return Answer(None, "", f"refused: {error}")
    connect_timeout = options["CONNECT_TIMEOUT_SECONDS"]
    read_timeout = options["READ_TIMEOUT_SECONDS"]
    https = target.url.scheme == "https"
    connection_class = _PinnedHTTPSConnection if https else _PinnedHTTPConnection
    connection = connection_class(target, connect_timeout)
    path = target.url.path or "/"
    if target.url.query:
        path += "?" + target.url.query
    try:
        try:
            connection.connect()
        except (OSError, ssl.SSLError) as error:
            return Answer(None, "", f"connect: {type(error).__name__}: {error}")
        assert connection.sock is not None
        connection.sock.settimeout(read_timeout)
        deadline = time.monotonic() + options["ANSWER_SECONDS"]
        try:
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            excerpt = _read_bounded(response, connection, deadline, options["MAX_ANSWER_BYTES"])
        except (OSError, http.client.HTTPException) as error:
            return Answer(None, "", f"answer: {type(error).__name__}: {error}")
        status = response.status
        if 200 <= status < 300:
            return Answer(status, excerpt, "")
        if 300 <= status < 400:
            where = response.getheader("Location", "")[:500]
            return Answer(status, excerpt, f"redirect to {where!r} not followed")
        return Answer(status, excerpt, f"HTTP {status}")
    finally:
        connection.close()


def _read_bounded(
    response: http.client.HTTPResponse,
    connection: http.client.HTTPConnection,
    deadline: float,
    limit: int,
) -> str:
    """At most ``limit`` bytes of the body, read until ``deadline``; the rest is left
    unread (the connection is closed after)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the answer took longer than LINEAGE_WEBHOOK_ANSWER_SECONDS")
        if connection.sock is not None:
            connection.sock.settimeout(min(remaining, settings.WEBHOOKS["READ_TIMEOUT_SECONDS"]))
        chunk = response.read1(limit - size) if hasattr(response, "read1") else b""
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")
