"""One synchronous JSON POST that holds its caller at most ``seconds`` in all (ADR 0161).

``emit_edge`` and ``MetadataAPI.send`` run on the caller's thread: a service's request path,
a pipeline's success path. A socket timeout bounds one operation, not the call: urllib's
applied to connecting and to each read, so a catalog (or a proxy in front of it) that sent
its answer a byte at a time held the caller as long as it kept sending, the name's lookup
had no bound at all, and each address a name resolves to had a connect timeout of its own.

Here one deadline is taken when the call starts and every step is given what is left of
it: the lookup (on a thread of its own, as ``getaddrinfo`` takes no timeout), each connect
attempt, the TLS handshake (whose timeout CPython applies to the whole handshake), every
send of the request and every read of the status line and headers. The body is not read:
the status alone decides. No redirect is followed (a POST's body would not go along, and
the token would go wherever it points).
"""

import functools
import http.client
import io
import ipaddress
import json
import os
import socket
import ssl
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from lineage_collector.config import bearer_header

# Lookups still running at once (each on a daemon thread that ends when the resolver gives
# up): a name that never resolves costs each call its deadline and at most this many
# threads, never a thread per call.
MAX_LOOKUPS_IN_FLIGHT = 8
_lookups: tuple[int, threading.BoundedSemaphore] | None = None
_lookups_made = threading.Lock()


class DeadlineExceeded(TimeoutError):
    """The call's whole time was spent before the catalog's answer was read."""


class Refused(Exception):
    """The catalog answered, with something other than a 2xx."""


def _remaining(deadline: float, seconds: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded(f"the catalog did not answer within {seconds:g} s")
    return left


def _lookup_slots() -> threading.BoundedSemaphore:
    """This process's slots: a lookup running at a fork never gives its slot back in the
    child, where that thread does not exist (gunicorn, Celery prefork)."""
    global _lookups
    with _lookups_made:
        if _lookups is None or _lookups[0] != os.getpid():
            _lookups = (os.getpid(), threading.BoundedSemaphore(MAX_LOOKUPS_IN_FLIGHT))
        return _lookups[1]


def _resolve(host: str, port: int, deadline: float, seconds: float) -> list[Any]:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:  # an address: nothing to look up, no thread
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    slots = _lookup_slots()
    if not slots.acquire(blocking=False):
        raise OSError(f"{MAX_LOOKUPS_IN_FLIGHT} lookups of the catalog's name still running")
    found: dict[str, Any] = {}
    done = threading.Event()

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except Exception as error:
            found["error"] = error
        finally:
            slots.release()
            done.set()

    try:
        threading.Thread(target=lookup, name="lineage-collector-lookup", daemon=True).start()
    except Exception:
        slots.release()  # the thread never ran: its slot is free
        raise
    if not done.wait(_remaining(deadline, seconds)):
        raise DeadlineExceeded(f"{host} did not resolve within {seconds:g} s")
    if "error" in found:
        raise found["error"]
    return list(found["infos"])


def _connect(host: str, port: int, deadline: float, seconds: float) -> socket.socket:
    last: OSError | None = None
    for family, kind, protocol, _, address in _resolve(host, port, deadline, seconds):
        sock = socket.socket(family, kind, protocol)
        try:
            sock.settimeout(_remaining(deadline, seconds))
            sock.connect(address)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except DeadlineExceeded:
            sock.close()
            raise
        except OSError as error:
            sock.close()
            last = error  # the next address, with what is left of the deadline
    raise last or OSError(f"{host} resolves to no address")


class _DeadlineReader(io.RawIOBase):
    """The socket's bytes, no read waiting past the deadline: what the answer is parsed from."""

    def __init__(self, sock: socket.socket, deadline: float, seconds: float) -> None:
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline
        self._seconds = seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "memoryview | bytearray") -> int | None:  # type: ignore[override]
        self._sock.settimeout(_remaining(self._deadline, self._seconds))
        try:
            return self._raw.readinto(buffer)
        except TimeoutError:
            _remaining(self._deadline, self._seconds)  # past the deadline: say which bound
            raise

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What ``HTTPResponse`` is given instead of the socket: it only calls ``makefile``."""

    def __init__(self, sock: socket.socket, deadline: float, seconds: float) -> None:
        self._args = (sock, deadline, seconds)

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(*self._args))


class _Response(http.client.HTTPResponse):
    def __init__(
        self, sock: socket.socket, *args: Any, deadline: float, seconds: float, **kwargs: Any
    ) -> None:
        super().__init__(_DeadlineSocket(sock, deadline, seconds), *args, **kwargs)  # type: ignore[arg-type]


class _Connection(http.client.HTTPConnection):
    """``http.client`` writes the request (Host, Content-Length, header checks); every step
    that can wait is given what is left of the call's deadline."""

    def __init__(self, url: str, deadline: float, seconds: float) -> None:
        parts = urlsplit(url)
        self.tls = ssl.create_default_context() if parts.scheme == "https" else None
        self.default_port = 443 if self.tls else 80  # the Host header leaves it out
        super().__init__(parts.hostname or "localhost", parts.port)
        self.deadline = deadline
        self.seconds = seconds
        self.response_class = functools.partial(  # type: ignore[assignment]
            _Response, deadline=deadline, seconds=seconds
        )

    def connect(self) -> None:
        sock = _connect(self.host, self.port, self.deadline, self.seconds)
        if self.tls is not None:
            try:
                sock.settimeout(_remaining(self.deadline, self.seconds))
                sock = self.tls.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise
        self.sock = sock

    def send(self, data: Any) -> None:
        if self.sock is None:
            self.connect()
        # Each call given what is left: http.client sends the head and the body (and a
        # chunked body piece by piece) in separate calls, and a socket's timeout starts
        # again at each call. (Within one call CPython bounds sendall as a whole, over TLS
        # too: one SSL_write, measured against a slow reader.)
        view = memoryview(data).cast("B")
        while view:
            self.sock.settimeout(_remaining(self.deadline, self.seconds))
            view = view[self.sock.send(view) :]


def post_json(url: str, payload: Any, api_key: str | None, seconds: float) -> bool:
    """POST ``payload`` as JSON; True on a 2xx, within ``seconds`` in all.

    Raises :class:`DeadlineExceeded` when the time is spent, :class:`Refused` on any other
    answer (a redirect included: not followed) and ``OSError`` when the catalog cannot be
    reached; callers count and swallow them (or raise in strict mode).
    """
    deadline = time.monotonic() + seconds
    body = json.dumps(payload, separators=(",", ":"), default=str).encode()
    headers = {"Content-Type": "application/json", "User-Agent": "lineage-collector"}
    headers.update(bearer_header(api_key))
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = _Connection(url, deadline, seconds)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.close()  # the body is not read; its reader holds the socket open
    finally:
        connection.close()
    if 200 <= response.status < 300:
        return True
    if 300 <= response.status < 400:
        location = (response.getheader("Location") or "")[:300]
        raise Refused(f"catalog answered {response.status}, a redirect to {location!r}")
    raise Refused(f"catalog answered {response.status} {response.reason}")
