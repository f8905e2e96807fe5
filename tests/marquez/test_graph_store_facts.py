"""The Marquez graph's walk reads the store's two facts with its root (ADRs 0116, 0118).

A walk handed a root row cannot know whether the store declares anything or retires
anything, and assumed both: every Marquez graph then sent the static reads and the
retirement probes. ADR 0116 read both facts in the mount's root statement; since ADR 0118
the mount hands the walk its root by id, and the walk's root check reads them, as for the
catalog's own graph (ADR 0104). Each test renders every graph twice, as read and with both
facts assumed (the root check patched to say both), and holds the bytes equal: on a store
with neither, with a declaration, and with a retirement; the statements fall only where a
fact is false.
"""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.lineage import graph
from catalog.services.derive import derive_events
from ingest.models import Event
from ingest.services import create_token
from tests.marquez.conftest import JOB_NS, PG, PRODUCER, S3, MarquezClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_once: None, db: None) -> None:
    """The conftest's world, written once for this module's tests (ADR 0210)."""


NODES = [
    f"dataset:{S3}:raw/orders/daily",
    f"dataset:{PG}:shop.public.orders",
    f"job:{JOB_NS}:etl.load_orders",
    f"job:{JOB_NS}:report.build",
]
JOB_EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"


def _answers(mz: MarquezClient, nodes: list[str]) -> dict[str, tuple[bytes, list[str]]]:
    """Each node's graph: the body, and the statements sent."""
    answers = {}
    for node in nodes:
        with CaptureQueriesContext(connection) as captured:
            response = mz.get("/lineage", nodeId=node)
        assert response.status_code == 200, response.content
        answers[node] = (response.content, [query["sql"] for query in captured])
    return answers


def _both_ways(
    mz: MarquezClient, monkeypatch: pytest.MonkeyPatch, nodes: list[str] = NODES
) -> tuple[dict, dict]:
    """Each node's graph as read and with both facts assumed; the bodies equal."""
    read = _answers(mz, nodes)
    checked = graph._root_job

    def assumed(*args: object) -> tuple[int | None, bool, bool]:
        root_job, _, _ = checked(*args)  # type: ignore[arg-type]
        return root_job, True, True

    with monkeypatch.context() as patched:
        patched.setattr(graph, "_root_job", assumed)
        before = _answers(mz, nodes)
    for node in nodes:
        assert read[node][0] == before[node][0], node
    return read, before


def _naming(table: str, statements: list[str]) -> int:
    return sum(table in sql for sql in statements)


def _walk(statements: list[str]) -> str:
    """The walk's statement (both directions, catalog.lineage.graph.walks)."""
    (walk,) = [sql for sql in statements if "WITH RECURSIVE" in sql]
    return walk


def test_nothing_declared_or_retired_sends_neither_read(world, mz, monkeypatch):
    mz.get("/tags")  # token resolved and cached
    read, before = _both_ways(mz, monkeypatch)
    for node in NODES:
        statements, assumed = read[node][1], before[node][1]
        # The root's statement asks; nothing else reads a declaration.
        assert _naming("catalog_static", statements) == 1, node
        assert _naming("catalog_static", assumed) >= 4, node
        assert len(statements) <= len(assumed) - 3, node
        # Nothing retired: the walk's steps probe no retirement (they did).
        assert "catalog_retirement" not in _walk(statements), node
        assert "catalog_retirement" in _walk(assumed), node


def test_a_declaration_is_read_and_drawn(world, ingest_client, mz, monkeypatch):
    declared = {
        "eventTime": "2026-11-02T09:00:00Z",
        "producer": PRODUCER,
        "schemaURL": JOB_EVENT_SCHEMA,
        "job": {"namespace": JOB_NS, "name": "plan.forecast", "facets": {}},
        "inputs": [{"namespace": S3, "name": "raw/orders/daily"}],
        "outputs": [{"namespace": PG, "name": "analytics.public.forecast"}],
    }
    response = ingest_client.post("/api/v1/lineage", declared, content_type="application/json")
    assert response.status_code in (200, 201), response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))
    mz.get("/tags")
    read, _ = _both_ways(mz, monkeypatch)
    daily = read[NODES[0]]
    assert f"job:{JOB_NS}:plan.forecast".encode() in daily[0]
    assert f"dataset:{PG}:analytics.public.forecast".encode() in daily[0]
    assert _naming("catalog_static", daily[1]) >= 4


def test_a_retirement_is_read_and_hides_what_it_retired(world, mz, monkeypatch):
    curate = Client(HTTP_AUTHORIZATION=f"Bearer {create_token('ci', 'curate')[1]}")
    path = f"/marquez/api/v1/namespaces/{JOB_NS}/jobs/report.build"
    assert curate.delete(path, RAW_URI=path).status_code == 200
    mz.get("/tags")
    read, _ = _both_ways(mz, monkeypatch, NODES[:3])  # the retired job is no root now
    daily = read[NODES[0]]
    assert b"report.build" not in daily[0]
    assert b"analytics.public.daily_totals" not in daily[0]
    assert "catalog_retirement" in _walk(daily[1])  # read, not assumed away
    assert _naming("catalog_static", daily[1]) == 1
