"""Control edges in the graph: which job's run triggers which (ADR 0090), drawn on request.

Control flow is not data flow: the walk never follows a control edge, and no data read
(impact, column lineage, currency, edge counts) reads their table. With ``edges=control``
the graph adds, in one query, the control edges of the jobs it drew: those between two
drawn jobs, and a job root's own to jobs not drawn, which are added as nodes while the node
budget lasts. A control edge to a job not drawn otherwise is left out and counted in
``cut.control``.
"""

from typing import Any

from django.db.models import Q

from catalog.lineage.request import EDGES_PER_NODE, Graph, GraphRequest
from catalog.models import ControlEdge, Job

_END = ("id", "namespace", "name", "first_seen", "last_seen")


def draw(graph: Graph, request: GraphRequest, root_job: int | None) -> None:
    """Add the control edges (kind ``control``) of ``graph``'s jobs to it."""
    drawn = {int(node["id"][4:]) for node in graph.nodes if node["type"] == "job"}
    if not drawn:
        return
    limit = EDGES_PER_NODE * request.max_nodes
    current = Job.objects.current()
    rows = ControlEdge.objects.filter(
        Q(upstream_id__any=sorted(drawn)) | Q(downstream_id__any=sorted(drawn)),
        upstream__in=current,
        downstream__in=current,
    )
    if request.as_of is not None:
        rows = rows.filter(first_seen__lte=request.as_of)
    if request.since is not None:
        rows = rows.filter(last_seen__gte=request.since)
    columns = [f"{end}__{column}" for end in ("upstream", "downstream") for column in _END]
    found = list(
        rows.order_by("id").values(
            "first_seen",
            "last_seen",
            "last_run_uuid",
            "dependency_type",
            "sequence_trigger_rule",
            "status_trigger_rule",
            "trigger_rule",
            *columns,
        )[: limit + 1]
    )
    omitted = max(len(found) - limit, 0)
    for row in found[:limit]:
        ends = [row["upstream__id"], row["downstream__id"]]
        missing = [end for end in ends if end not in drawn]
        if missing and (root_job not in ends or len(graph.nodes) >= request.max_nodes):
            omitted += 1
            continue
        for end, side in zip(ends, ("upstream", "downstream"), strict=True):
            if end not in drawn:
                drawn.add(end)
                graph.nodes.append(_job_node(row, side))
        edge = _edge(row)
        graph.edges.append(edge)
        graph.edge_sources[edge["id"]] = []
    if omitted:
        graph.cut["control"] = {"limit": limit, "omitted": omitted}
        graph.truncated = True


def _job_node(row: dict[str, Any], side: str) -> dict[str, Any]:
    """A job reached only by control flow from the root: one step from it."""
    return {
        "id": f"job:{row[f'{side}__id']}",
        "type": "job",
        "job_id": row[f"{side}__id"],
        "namespace": row[f"{side}__namespace"],
        "name": row[f"{side}__name"],
        "depth": 1,
        "aliases": [],
        "is_dropped": False,
        "first_seen": row[f"{side}__first_seen"],
        "last_seen": row[f"{side}__last_seen"],
    }


def _edge(row: dict[str, Any]) -> dict[str, Any]:
    source, target = f"job:{row['upstream__id']}", f"job:{row['downstream__id']}"
    return {
        # Its own id: a data link between the same two jobs (a `through` edge) may be drawn.
        "id": f"{source}->{target}#control",
        "kind": "control",
        "source": source,
        "target": target,
        "first_seen": row["first_seen"],
        "last_seen": row["last_seen"],
        # The run that last stated it; no run reads or writes through it.
        "last_run_id": row["last_run_uuid"],
        "run_count": 0,
        "completed_run_count": 0,
        "lineage_types": [],
        "via": "",
        "current": False,  # currency is about data a run produced: none here
        "observed": True,
        "static": False,
        "control": {
            "dependency_type": row["dependency_type"],
            "sequence_trigger_rule": row["sequence_trigger_rule"],
            "status_trigger_rule": row["status_trigger_rule"],
            "trigger_rule": row["trigger_rule"],
        },
    }
