"""Every list of the mount is bounded in bytes (issue 38, item 7): a page stops before it
would hold more than LINEAGE_MAX_PAGE_BYTES of items (at least one item is served), and
``totalCount`` still counts them all, so a client continuing at ``offset + len(items)``
reads every item, in order, exactly once (docs/marquez.md, "Bounds").

Small facets (~3 KB) and a budget of 10 KB show the cut; the bench
(bench/marquez_page_bytes.py) measures the 30 x 6 MB case and the worker's memory.
"""

from typing import Any

import orjson
import pytest
from django.conf import settings
from django.test import Client

from catalog.services.derive import derive_events
from ingest.models import Event
from tests.marquez.conftest import JOB_NS, MarquezClient, event, facet

pytestmark = pytest.mark.django_db
BUDGET = 10_000
PADDING = "x" * 3_000
COUNT = 6
LAKE = "s3://bytes"


def _run_id(index: int) -> str:
    return f"01930000-0000-7000-8000-0000000001{index:02d}"


@pytest.fixture
def heavy(ingest_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six completed runs of two jobs (three each), each writing the dataset ``written_by_all``
    (six versions) and its own ``table_<i>``, every run, job and output carrying a ~3 KB
    facet."""
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", BUDGET)
    for index in range(COUNT):
        outputs = [
            {"namespace": LAKE, "name": name, "facets": {"padding": facet(padding=PADDING)}}
            for name in ("written_by_all", f"table_{index}")
        ]
        document = event(
            "COMPLETE",
            f"2026-11-02T10:{index:02d}:00Z",
            _run_id(index),
            f"bytes.job_{index % 2}",
            [],
            outputs,
            run_facets={"padding": facet(padding=PADDING)},
            job_facets={"padding": facet(padding=PADDING)},
        )
        response = ingest_client.post(
            "/marquez/api/v1/lineage", orjson.dumps(document), content_type="application/json"
        )
        assert response.status_code in (200, 201), response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))


def _walk(mz: MarquezClient, path: str, key: str, **params: str) -> tuple[list[Any], list[int]]:
    """Every item of a list, paging as a client does (next offset = offset + items served);
    and the size of each page served."""
    items: list[Any] = []
    sizes: list[int] = []
    while True:
        response = mz.get(path, limit="500", offset=str(len(items)), **params)
        assert response.status_code == 200, response.content[:300]
        body = response.json()
        sizes.append(len(body[key]))
        items += body[key]
        if len(body[key]) > 1:  # one item alone may be over the budget; two never are
            assert len(response.content) <= BUDGET + 100
        if not body[key] or len(items) >= body["totalCount"]:
            return items, sizes


def _unbounded(mz: MarquezClient, path: str, key: str, monkeypatch: Any) -> list[Any]:
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", 8 * 1024 * 1024)
    body = mz.get(path, limit="500").json()
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", BUDGET)
    assert len(body[key]) == body["totalCount"]
    return body[key]


@pytest.mark.parametrize(
    ("path", "key", "count"),
    [
        (f"/namespaces/{JOB_NS}/jobs", "jobs", 2),
        ("/jobs", "jobs", 2),
        (f"/namespaces/{JOB_NS}/jobs/bytes.job_0/runs", "runs", COUNT // 2),
        (f"/namespaces/{LAKE}/datasets", "datasets", COUNT + 1),
        (f"/namespaces/{LAKE}/datasets/written_by_all/versions", "versions", COUNT),
    ],
)
def test_a_list_page_stops_at_the_budget_and_offsets_continue(
    heavy: None, mz: MarquezClient, monkeypatch: pytest.MonkeyPatch, path: str, key: str, count: int
) -> None:
    everything = _unbounded(mz, path, key, monkeypatch)
    assert len(everything) == count
    first = mz.get(path, limit="500").json()
    if count > 1:  # the first page is cut, and says how many there are
        assert 1 <= len(first[key]) < count and first["totalCount"] == count
    items, sizes = _walk(mz, path, key)
    assert items == everything  # in order, none skipped, none twice
    assert all(size >= 1 for size in sizes)


def test_one_item_over_the_budget_is_served_alone(
    heavy: None, mz: MarquezClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", 1_000)
    body = mz.get(f"/namespaces/{LAKE}/datasets/written_by_all/versions", limit="500").json()
    assert len(body["versions"]) == 1 and body["totalCount"] == COUNT
    assert body["versions"][0]["facets"]["padding"]["padding"] == PADDING


def test_namespaces_and_search_are_bounded_too(
    heavy: None, mz: MarquezClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", 200)
    namespaces = mz.get("/namespaces", limit="500").json()
    assert len(namespaces["namespaces"]) == 1 and namespaces["totalCount"] == 2
    found = mz.get("/search", q="table", limit="500").json()
    assert len(found["results"]) == 1 and found["totalCount"] == COUNT


def _lineage(mz: MarquezClient) -> Any:
    response = mz.get("/lineage", nodeId=f"dataset:{LAKE}:written_by_all", depth="2")
    assert response.status_code == 200, response.content[:300]
    return response


def test_lineage_stops_at_the_budget_nearest_the_root_first(
    heavy: None, mz: MarquezClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph of ``written_by_all``: both jobs (one hop) and the six tables they write
    (two hops), ~3 KB of facets each. Under the budget the nodes nearest the root are
    drawn, the root always; a node left out takes its edges with it (Marquez's UI draws
    what it is given) and ``cut.bytes`` counts it."""
    root = f"dataset:{LAKE}:written_by_all"
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", 8 * 1024 * 1024)
    whole = _lineage(mz).json()
    assert len(whole["graph"]) == 1 + 2 + COUNT and "bytes" not in whole["cut"]
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", BUDGET * 2)
    response = _lineage(mz)
    cut = response.json()
    assert len(response.content) <= BUDGET * 2 + 200  # the nodes, and truncated/cut
    drawn = {node["id"]: node for node in cut["graph"]}
    assert root in drawn and 1 < len(drawn) < len(whole["graph"])
    assert cut["truncated"] is True
    assert cut["cut"]["bytes"]["omitted_nodes"] == len(whole["graph"]) - len(drawn)
    jobs = {node["id"] for node in whole["graph"] if node["type"] == "JOB"}
    tables = set(drawn) - jobs - {root}
    assert not tables or jobs <= set(drawn)  # two hops only after every one-hop node
    same = {node["id"]: node for node in whole["graph"]}
    for node in drawn.values():
        assert node["data"] == same[node["id"]]["data"]
        for edge in node["inEdges"] + node["outEdges"]:
            assert edge["origin"] in drawn and edge["destination"] in drawn
            assert edge in same[node["id"]]["inEdges"] + same[node["id"]]["outEdges"]
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", 1)
    alone = _lineage(mz).json()
    assert [node["id"] for node in alone["graph"]] == [root]
    assert alone["graph"][0]["inEdges"] == alone["graph"][0]["outEdges"] == []
    assert alone["cut"]["bytes"]["omitted_nodes"] == len(whole["graph"]) - 1
