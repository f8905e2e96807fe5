"""A catalog on 127.0.0.1 that takes its time: real sockets, real waits, nothing patched.

Each connection is given to a handler with the connection and a stop flag; the handlers
below wait on the flag rather than sleep, so a test's teardown ends them at once.
"""

import contextlib
import socket
import threading
from collections.abc import Callable

Handler = Callable[[socket.socket, threading.Event], None]


class SlowCatalog:
    def __init__(self, handler: Handler, receive_buffer: int | None = None) -> None:
        self.stop = threading.Event()
        self.server = socket.socket()
        if receive_buffer:  # inherited by accepted connections: a small window, a slow reader
            self.server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, args=(handler,), daemon=True).start()

    def _accept(self, handler: Handler) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                return  # closed
            self.connections.append(connection)
            threading.Thread(target=self._serve, args=(handler, connection), daemon=True).start()

    def _serve(self, handler: Handler, connection: socket.socket) -> None:
        with contextlib.suppress(OSError):  # the client gave up and closed: as tests want
            handler(connection, self.stop)

    def close(self) -> None:
        self.stop.set()
        self.server.close()
        for connection in self.connections:
            connection.close()


def read_head(connection: socket.socket) -> bytes:
    """The request's line and headers (and whatever of the body came with them)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def silent(connection: socket.socket, stop: threading.Event) -> None:
    """Reads what comes (a request, or a TLS client hello) and never answers."""
    connection.recv(65536)
    stop.wait()


def trickle(at_once: bytes, rest: bytes, interval: float) -> Handler:
    """Answers ``at_once`` at once and then ``rest`` a byte every ``interval`` seconds: the
    whole answer, a 200, comes in the end."""

    def handler(connection: socket.socket, stop: threading.Event) -> None:
        read_head(connection)
        connection.sendall(at_once)
        for byte in rest:
            if stop.wait(interval):
                return
            connection.sendall(bytes([byte]))
        stop.wait()

    return handler


def slow_reader(chunk: int, interval: float) -> Handler:
    """Reads the request ``chunk`` bytes every ``interval`` seconds, then answers 200."""

    def handler(connection: socket.socket, stop: threading.Event) -> None:
        head = read_head(connection)
        fields = head.split(b"\r\n\r\n", 1)[0].lower().split(b"\r\n")
        length = next(
            int(line.split(b":")[1]) for line in fields if line.startswith(b"content-length:")
        )
        received = len(head.split(b"\r\n\r\n", 1)[1])
        while received < length:
            if stop.wait(interval):
                return
            data = connection.recv(chunk)
            if not data:
                return
            received += len(data)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        stop.wait()

    return handler
