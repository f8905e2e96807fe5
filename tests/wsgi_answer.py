"""A WSGI application's answer to one request, read as a test reads it: through what
config/wsgi.py serves (the reads' front path, the ingest fast path, Django), not Django's
test client, which goes around the front paths."""

from collections.abc import Callable, Iterable
from typing import Any

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def wsgi_answer(app: WSGIApp, environ: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of ``app``'s answer to ``environ`` (its iterable closed, as
    a server closes it)."""
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], *exc_info: Any) -> None:
        answer["status"], answer["headers"] = int(status.split()[0]), dict(headers)

    chunks = app(environ, start_response)
    try:
        content = b"".join(chunks)
    finally:
        if hasattr(chunks, "close"):
            chunks.close()
    return answer["status"], answer["headers"], content
