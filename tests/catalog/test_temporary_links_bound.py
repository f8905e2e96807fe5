"""A temporary dataset folds into one ``through`` link from each of its writers to each of
its readers (catalog.lineage.temporary.fold, ADR 0089): with 1,000 of each drawn beside it,
a million links, where the graph's own edges are bounded by its edge limit. A temporary
dataset whose links would pass the limit left is not folded: it stays drawn, with its
edges (ADR 0172)."""

from typing import Any

from catalog.lineage import temporary
from catalog.lineage.request import Graph, NodeRef

TEMPORARY = 2


def _edge(kind: str, source: str, target: str) -> dict[str, Any]:
    return {
        "id": f"{source}->{target}",
        "kind": kind,
        "source": source,
        "target": target,
        "first_seen": "2026-12-01T00:00:00Z",
        "last_seen": "2026-12-01T00:00:00Z",
        "last_run_id": None,
        "run_count": 1,
        "completed_run_count": 1,
        "lineage_types": [],
        "via": "",
        "current": True,
        "observed": True,
        "static": False,
    }


def _graph(writers: int, readers: int) -> Graph:
    """dataset:1 → job:w (writers) → dataset:2 (temporary) → job:r (readers) → dataset:3."""
    graph = Graph(NodeRef("dataset", 1))
    temp = f"dataset:{TEMPORARY}"
    graph.nodes = [{"id": f"dataset:{n}"} for n in (1, TEMPORARY, 3)]
    for w in range(writers):
        graph.nodes.append({"id": f"job:{100 + w}"})
        graph.edges += [
            _edge("input", "dataset:1", f"job:{100 + w}"),
            _edge("output", f"job:{100 + w}", temp),
        ]
    for r in range(readers):
        graph.nodes.append({"id": f"job:{500 + r}"})
        graph.edges += [
            _edge("input", temp, f"job:{500 + r}"),
            _edge("output", f"job:{500 + r}", "dataset:3"),
        ]
    graph.edge_sources = {edge["id"]: [n] for n, edge in enumerate(graph.edges)}
    return graph


def test_links_within_the_limit_fold() -> None:
    graph = _graph(40, 40)
    temporary.fold(graph, {TEMPORARY}, column_limit=100, link_limit=1600)
    through = [edge for edge in graph.edges if edge["kind"] == "through"]
    assert len(through) == 1600 and graph.folded == {TEMPORARY}
    assert f"dataset:{TEMPORARY}" not in {node["id"] for node in graph.nodes}


def test_links_past_the_limit_leave_the_dataset_drawn() -> None:
    graph = _graph(50, 50)
    before = [dict(edge) for edge in graph.edges]
    temporary.fold(graph, {TEMPORARY}, column_limit=100, link_limit=2000)
    assert graph.edges == before  # 2,500 links would pass 2,000: drawn as it was
    assert graph.folded == set()
    assert f"dataset:{TEMPORARY}" in {node["id"] for node in graph.nodes}
