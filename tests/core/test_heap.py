"""A request the web server's handler served leaves nothing to the garbage collector: its
request, view, response and data are freed by reference counting once the response closes
(core/heap.py, ADR 0132). Django's and DRF's reference cycles left every request to the
collector, which ran every few requests in the web workers."""

import gc
import io
from collections.abc import Iterator
from typing import Any

import pytest

from core.heap import FreeingWSGIHandler
from core.redaction import redact
from tests.api.factories import add_fields, make_dataset, make_job, make_job_edge


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector stopped, so what a request leaves in cycles waits for ``gc.collect``."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _serve(handler: FreeingWSGIHandler, path: str, token: str) -> tuple[str, bytes]:
    """GET ``path`` as the web server does: call, read the body, close it."""
    path, _, query = path.partition("?")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "testserver",
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
    }
    status: list[str] = []
    body = handler(environ, lambda line, headers, exc_info=None: status.append(line))
    content = b"".join(body)
    body.close()
    return status[0], content


# Committed rows: the handler sends Django's request signals, which close the connection.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/datasets/{dataset}", "200"),
        ("/api/v1/datasets/2000000000", "404"),  # DRF's not-found answer
        ("/api/v1/runs?limit=50", "200"),
        ("/api/v1/search?q=orders", "200"),
        ("/api/v1/lineage/graph?node=dataset:{dataset}", "200"),
    ],
)
def test_a_served_read_leaves_nothing_to_the_garbage_collector(
    fresh_connection: None, read_token: str, path: str, status: str, collector_off: None
) -> None:
    dataset = make_dataset("shop.public.orders")
    add_fields(dataset, "id", "total")
    make_job_edge(make_job("load_orders"), dataset, "output")
    path = path.format(dataset=dataset.id)
    handler = FreeingWSGIHandler()
    _serve(handler, path, read_token)  # first use: caches, compiled statements
    gc.collect()
    answered, content = _serve(handler, path, read_token)
    assert answered.startswith(status), content[:300]
    assert gc.collect() == 0


def test_redaction_leaves_no_cycle(collector_off: None) -> None:
    """redact's walk refers to itself: a cycle per call until it is let go of."""
    gc.collect()
    document = {"config": {"password": "x", "hosts": ["a", {"token": "y"}]}}
    assert redact(document)["config"]["password"] == "***REDACTED***"
    assert gc.collect() == 0
