"""A parent job's child jobs in the lineage graph (ADR 0070): an Airflow DAG and its tasks.

A DAG's own events carry no inputs or outputs; its tasks' runs name the DAG's run in their
``parent`` facet, which derivation keeps as ``Job.parent``. The graph from a job that is a
parent draws its child jobs as nodes at depth 1, each linked to the parent by an edge of
kind ``parent`` (``job:<parent> -> job:<child>``), and walks from the children's datasets as
from the root's own: their input and output edges are drawn as usual. Children are capped
(``CHILDREN_PER_PARENT``, and the node budget); the cap is reported in ``cut["children"]``.
"""

from datetime import datetime
from typing import Any

from catalog.models import Job

CHILDREN_PER_PARENT = 200


def children(job_id: int, as_of: datetime | None, limit: int) -> tuple[list[int], int]:
    """The first ``limit`` child jobs of ``job_id`` by id (seen by ``as_of``), and how many
    were left out (counted only when some were: one query otherwise)."""
    queryset = Job.objects.filter(parent_id=job_id)
    if as_of is not None:
        queryset = queryset.filter(first_seen__lte=as_of)
    found = list(queryset.order_by("id").values_list("id", flat=True)[: limit + 1])
    if len(found) <= limit:
        return found, 0
    return found[:limit], queryset.count() - limit


def draw(graph: Any, root_job: int, child_ids: list[int]) -> None:
    """Adds the ``parent`` edges to ``graph`` and places the children at depth 1 (a child
    is one step from its parent, however far its datasets are)."""
    wanted = {f"job:{child}" for child in child_ids}
    parent_ref = f"job:{root_job}"
    for node in graph.nodes:
        if node["id"] not in wanted:
            continue
        node["depth"] = 1
        edge_id = f"{parent_ref}->{node['id']}"
        graph.edges.append(
            {
                "id": edge_id,
                "kind": "parent",
                "source": parent_ref,
                "target": node["id"],
                # The child job's own first and last event: the link has no runs of its own.
                "first_seen": node["first_seen"],
                "last_seen": node["last_seen"],
                "last_run_id": None,
                "run_count": 0,
                "completed_run_count": 0,
                "lineage_types": [],
                "via": "",
                "current": True,
                "observed": True,
                "static": False,
            }
        )
        graph.edge_sources[edge_id] = []


def cut(limit: int, omitted: int) -> dict[str, Any]:
    """``cut["children"]`` when the cap or the node budget left child jobs out."""
    return {"children": {"limit": limit, "omitted_jobs": omitted}} if omitted else {}
