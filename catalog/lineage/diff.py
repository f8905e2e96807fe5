"""What changed around a node between two times: the graph as of each, compared (ADR 0031)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catalog.lineage import job_edges
from catalog.lineage.graph import lineage_graph
from catalog.lineage.request import Graph, GraphRequest


@dataclass
class GraphDiff:
    before: Graph
    after: Graph
    nodes_added: list[dict[str, Any]]
    nodes_removed: list[dict[str, Any]]
    edges_added: list[dict[str, Any]]
    edges_removed: list[dict[str, Any]]


def lineage_diff(request: GraphRequest, start: datetime, end: datetime) -> GraphDiff:
    """What changed around ``request.root`` between ``start`` and ``end`` (ADR 0031).

    Added: in the graph as of ``end`` and not as of ``start``. Removed: in the graph as of
    ``start``, not produced again in (start, end] although its job did produce lineage in
    that window: the job ran and no longer reads or writes that dataset. (Edges are never
    deleted, so "removed" is about what the job stopped doing, not about rows.)
    """
    before = lineage_graph(GraphRequest(**{**request.__dict__, "as_of": start, "since": None}))
    after = lineage_graph(GraphRequest(**{**request.__dict__, "as_of": end, "since": None}))
    before_edges = {edge["id"]: edge for edge in before.edges}
    after_edges = {edge["id"]: edge for edge in after.edges}
    edges_added = [edge for key, edge in after_edges.items() if key not in before_edges]

    # A bipartite edge is re-seen when its job edge got a run in the window.
    behind = {
        key: set(before.edge_sources[key]) | set(after.edge_sources.get(key, []))
        for key in before_edges
    }
    underlying = sorted({i for ids in behind.values() for i in ids})
    jobs = sorted({_job_of(edge) for edge in before.edges})
    reseen, active_jobs = job_edges.reseen_and_active(underlying, jobs, start, end)
    edges_removed = [
        edge
        for key, edge in before_edges.items()
        # A parent edge has no runs to be re-seen by: never "removed".
        if edge["kind"] != "parent"
        and edge["observed"]
        and _job_of(edge) in active_jobs
        and not behind[key] & reseen
    ]
    removed_ids = {edge["id"] for edge in edges_removed}
    still_linked = {
        end_ref
        for edge in before.edges
        if edge["id"] not in removed_ids
        for end_ref in (edge["source"], edge["target"])
    }
    before_nodes = {node["id"] for node in before.nodes}
    removed_refs = {ref for edge in edges_removed for ref in (edge["source"], edge["target"])}
    root = str(request.root)
    return GraphDiff(
        before=before,
        after=after,
        nodes_added=[node for node in after.nodes if node["id"] not in before_nodes],
        nodes_removed=[
            node
            for node in before.nodes
            if node["id"] != root and node["id"] in removed_refs and node["id"] not in still_linked
        ],
        edges_added=edges_added,
        edges_removed=edges_removed,
    )


def _job_of(edge: dict[str, Any]) -> int:
    ref = edge["target"] if edge["kind"] == "input" else edge["source"]
    return int(ref.split(":")[1])
