"""A receiver that reads slowly, for the webhook tests: a server on 127.0.0.1 that reads each
request's body ``chunk`` bytes every ``interval`` seconds behind a small receive buffer, then
answers 200; over TLS with a certificate for 127.0.0.1 made by the test (which the sender
trusts through ``SSL_CERT_FILE``: OpenSSL reads it when the sender makes its TLS context,
so the sender's own code, certificate check included, is what runs)."""

import datetime
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 (its own issuer, valid for an hour) and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "receiver.pem", directory / "receiver.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass
class SlowReceiver:
    port: int
    scheme: str
    read: int = 0  # request bytes read so far (all connections)
    answered: int = 0  # requests read to the end and answered 200
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/hook"


def accept_in_threads(server: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    """Accept ``server``'s connections in a thread of their own, each handed to ``handle`` in
    a thread of its own, until the server is closed."""

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


@contextmanager
def slow_receiver(
    chunk: int, interval: float, tls: tuple[Path, Path] | None, receive_buffer: int = 65_536
) -> Iterator[SlowReceiver]:
    """``tls``: the certificate and key to serve HTTPS with; None for plain HTTP."""
    context = None
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
    server = socket.socket()
    # Inherited by accepted connections: a small window, so the sender waits for room.
    server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    state = SlowReceiver(server.getsockname()[1], "http" if context is None else "https")
    stop = threading.Event()

    def read_slowly(stream: socket.socket) -> bool:
        """Read one request, its body a chunk at a time; whether all of it came."""
        head = b""
        while b"\r\n\r\n" not in head:
            piece = stream.recv(4096)
            if not piece:
                return False
            head += piece
        headers, _, body = head.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in headers.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        left = length - len(body)
        while left > 0:
            if stop.is_set():
                return False
            piece = stream.recv(min(chunk, left))
            if not piece:
                return False
            left -= len(piece)
            with state.lock:
                state.read += len(piece)
            time.sleep(interval)
        return True

    def handle(conn: socket.socket) -> None:
        with conn, suppress(OSError):  # the sender gave up and closed the connection
            conn.settimeout(10)
            stream = conn if context is None else context.wrap_socket(conn, server_side=True)
            with stream:
                if read_slowly(stream):
                    stream.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    with state.lock:
                        state.answered += 1

    accept_in_threads(server, handle)
    try:
        yield state
    finally:
        stop.set()
        server.close()
