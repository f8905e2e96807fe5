"""A fake catalog on 127.0.0.1 for the collector's tests: records what it is sent."""

import gzip
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Catalog:
    """A fake catalog on 127.0.0.1: records requests; ``mode`` is ok, error or slow."""

    def __init__(self, keep_alive: bool = False, idle_timeout: float | None = None) -> None:
        self.mode = "ok"
        self.delay = 3.0
        self.answer = b'{"status": "success"}'
        self.location = "https://catalog.example/api/v1/lineage/batch"  # where "redirect" points
        self.statuses: list[int] = []  # answered first, one per request, before ``mode``'s
        self.requests: list[dict] = []
        catalog = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.1 keeps connections open between requests, as the real catalog does.
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
            timeout = idle_timeout  # then closes a connection idle that long

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                catalog.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": json.loads(body),
                        "port": self.client_address[1],
                    }
                )
                if catalog.mode == "slow":
                    time.sleep(catalog.delay)
                status = {"error": 500, "redirect": 301}.get(catalog.mode, 200)
                if catalog.statuses:
                    status = catalog.statuses.pop(0)
                answer = catalog.answer
                self.send_response(status)
                if status == 301:
                    self.send_header("Location", catalog.location)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def do_GET(self) -> None:  # what a followed redirect of a POST becomes
                catalog.requests.append({"path": self.path, "headers": dict(self.headers)})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[dict]:
        return [event for request in self.requests for event in request["body"]]


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
