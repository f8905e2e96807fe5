"""The lineage graph's edges and nodes, as the API shows them, from what the walk chose.

``catalog.lineage.graph`` walks and chooses (which datasets, jobs and edge halves are drawn); this
module reads what is drawn, once: the job edges' figures become the edges, the datasets'
and jobs' rows the nodes. Nodes and edges are built in the API's field order
(api/views/lineage.py's serializers, which document them): the view returns them as they are.
"""

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import connection

from catalog.facets import dataset_type
from catalog.lineage import design_time, job_edges
from catalog.lineage.request import Graph, GraphRequest
from catalog.models import ALIASES_SHOWN
from core.sql_arrays import bigint_array

EdgeKey = tuple[str, int, int]  # (direction, dataset id, job id)


@dataclass(frozen=True)
class Drawn:
    """What the walk chose: the datasets (with their depths), the jobs, and the rows read."""

    request: "GraphRequest"
    chosen: set[int]
    jobs: set[int]
    depths: dict[int, int]
    edge_rows: list[tuple]
    job_rows: list[job_edges.JobEdgeRow] | list[job_edges.KeyRow]  # KeyRow: figures not read


def assemble(
    graph: "Graph",
    drawn: Drawn,
    halves: set[EdgeKey],
    declared: design_time.Declared,
    root_job: int | None,
    rows: list[tuple],
) -> None:
    """The graph's edges and nodes (``rows``: ``node_rows``', read by the caller first, so
    that it knows whether a drawn dataset is temporary before it reads the edges)."""
    aggregated = _edges(graph, drawn, halves, declared)
    graph.nodes = _shown_nodes(graph, drawn, rows, _job_depths(aggregated, drawn.depths, root_job))


# A dataset node shows its first aliases by (namespace, name, id), as the dataset detail
# does (ADR 0180), and ``alias_count`` only when it has more: a table symlinked under a
# new name by every run gathers tens of thousands (50,000 made one graph 4.1 MB, ADR
# 0184). Under the bound a node is what it always was, byte for byte.
NODE_ALIASES = ALIASES_SHOWN

# The columns the graph shows of its datasets (with their aliases) and jobs, in one
# statement (three, read apart; issue 42): kind 0 a dataset, 1 one of its aliases, 2 a job,
# 3 the alias count of a dataset with more than ``NODE_ALIASES`` (in the last column).
# Each dataset's aliases are its first NODE_ALIASES + 1 by (namespace, name, id): the one
# past the bound says the node was cut, and only such a dataset's aliases are counted.
# The aliases come in (dataset, namespace, name, id) order, the nodes by id.
_NAME, _TYPE, _SUBTYPE = dataset_type.NAME, dataset_type.TYPE, dataset_type.SUBTYPE
# dataset_type.temporary_lookup as SQL on ``d``: false, not NULL, without the facet.
_IS_TEMPORARY = (
    f"COALESCE((d.facets #> '{{{_NAME},datasetType}}') = '\"{_TYPE}\"'::jsonb "
    f"AND (d.facets #> '{{{_NAME},subType}}') = '\"{_SUBTYPE}\"'::jsonb, false)"
)
_NODES = (
    """
WITH shown AS MATERIALIZED (
    SELECT a.dataset_id, a.namespace, a.name, a.reason, a.id
    FROM unnest(%(datasets)s::bigint[]) x(id)
    CROSS JOIN LATERAL (
        SELECT dataset_id, namespace, name, reason, id FROM catalog_dataset_alias
        WHERE dataset_id = x.id ORDER BY namespace, name, id LIMIT {past_bound}
    ) a
)
SELECT 0, d.id, d.namespace, d.name, d.first_seen, d.last_seen, d.is_dropped, {temporary},
       NULL::text, NULL::bigint
FROM catalog_dataset d WHERE d.id = ANY(%(datasets)s::bigint[])
UNION ALL
SELECT 1, s.dataset_id, s.namespace, s.name, NULL, NULL, NULL, NULL, s.reason, s.id
FROM shown s
UNION ALL
SELECT 3, c.dataset_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       (SELECT count(*) FROM catalog_dataset_alias a WHERE a.dataset_id = c.dataset_id)
FROM shown c GROUP BY c.dataset_id HAVING count(*) > {shown}
UNION ALL
SELECT 2, j.id, j.namespace, j.name, j.first_seen, j.last_seen, j.lineage_edges_cut, NULL,
       NULL, NULL
FROM catalog_job j WHERE j.id = ANY(%(jobs)s::bigint[])
ORDER BY 1, 2, 3, 4, 10
""".replace("{temporary}", _IS_TEMPORARY)
    .replace("{shown}", str(NODE_ALIASES))
    .replace("{past_bound}", str(NODE_ALIASES + 1))
)


def node_rows(drawn: Drawn) -> list[tuple]:
    """The columns shown of the datasets and jobs drawn (a node's facets can be large), in
    one statement (``_NODES``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _NODES,
            {"datasets": bigint_array(drawn.chosen), "jobs": bigint_array(drawn.jobs)},
        )
        return cursor.fetchall()


def any_temporary(rows: list[tuple]) -> bool:
    """Whether ``node_rows`` hold a temporary dataset (a job output ``temporary.fold``
    folds, ADR 0089)."""
    return any(row[0] == 0 and row[7] for row in rows)


def _shown_nodes(
    graph: "Graph", drawn: Drawn, rows: list[tuple], job_depth: dict[int, int]
) -> list[dict[str, Any]]:
    """The datasets and jobs drawn, as the API shows them (its serializers' field order),
    from ``node_rows``."""
    aliases: dict[int, list[dict[str, str]]] = defaultdict(list)
    counts: dict[int, int] = {}
    for kind, node, namespace, name, _, _, _, _, reason, count in rows:
        if kind == 1 and len(aliases[node]) < NODE_ALIASES:
            aliases[node].append({"namespace": namespace, "name": name, "reason": reason})
        elif kind == 3:
            counts[node] = count
    datasets, jobs = [], []
    depths = drawn.depths
    for kind, node, namespace, name, first_seen, last_seen, flag, temporary, _, _ in rows:
        if kind == 0:
            if temporary:
                graph.temporary.add(node)
            shown: dict[str, Any] = {
                "id": f"dataset:{node}",
                "type": "dataset",
                "dataset_id": node,
                "namespace": namespace,
                "name": name,
                "depth": depths[node],
                "aliases": aliases[node],
            }
            if node in counts:  # cut: how many there are (/datasets/{id}/aliases lists them)
                shown["alias_count"] = counts[node]
            shown.update(is_dropped=flag, first_seen=first_seen, last_seen=last_seen)
            datasets.append(shown)
        elif kind == 2:
            node_id = f"job:{node}"
            if flag:
                graph.run_edges_cut.append(node_id)
            jobs.append(
                {
                    "id": node_id,
                    "type": "job",
                    "job_id": node,
                    "namespace": namespace,
                    "name": name,
                    "depth": job_depth.get(node, 0),
                    "aliases": [],
                    "is_dropped": False,
                    "first_seen": first_seen,
                    "last_seen": last_seen,
                }
            )
    return datasets + jobs


def _edges(
    graph: "Graph", drawn: Drawn, halves: set[EdgeKey], declared: design_time.Declared
) -> dict[EdgeKey, dict[str, Any]]:
    """The drawn halves with their job edges' figures (observed) or declarations (static),
    and the lineage types of the dataset → dataset edges behind each."""
    aggregated: dict[EdgeKey, dict[str, Any]] = {}
    sources: dict[EdgeKey, list[int]] = {}
    for row in drawn.job_rows:
        edge_id, job_id, dataset_id, direction, first, last, runs, done, run_uuid, via, now = row
        key = (direction, dataset_id, job_id)
        if dataset_id not in drawn.chosen or key not in halves:
            continue
        source, target = f"dataset:{dataset_id}", f"job:{job_id}"
        if direction == "output":
            source, target = target, source
        aggregated[key] = {
            "id": f"{source}->{target}",
            "kind": direction,
            "source": source,
            "target": target,
            "first_seen": first,
            "last_seen": last,
            "last_run_id": run_uuid,
            "run_count": runs,
            # Runs that completed (catalog.models.writes): 0 of n, every run failed or was
            # aborted, the edge is only attempted I/O (ADR 0069).
            "completed_run_count": done,
            "lineage_types": set(),
            # "" listed in the run's inputs/outputs; "column_lineage": only named in an
            # output's column lineage (ADR 0060).
            "via": via,
            "current": now,
            "observed": True,
            "static": key in declared,
        }
        sources[key] = [edge_id]
    for key in design_time.add_declared_only(aggregated, declared, halves, drawn.chosen):
        sources[key] = []
    # Edge-API lineage types come from the dataset → dataset edges behind each half.
    for source_id, target_id, job_id, lineage_type in drawn.edge_rows:
        for key in (("input", source_id, job_id), ("output", target_id, job_id)):
            if lineage_type and key in aggregated:
                aggregated[key]["lineage_types"].add(lineage_type)
    edges = []
    for key in sorted(aggregated):
        entry = aggregated[key]
        entry["lineage_types"] = sorted(entry["lineage_types"])
        graph.edge_sources[entry["id"]] = sources[key]
        edges.append(entry)
    graph.edges = edges
    return aggregated


def _job_depths(
    aggregated: dict[EdgeKey, Any], depths: dict[int, int], root_job: int | None
) -> dict[int, int]:
    """A job's depth: one more than the nearest dataset it links (root job: 0)."""
    job_depth: dict[int, int] = {}
    for _, dataset_id, job_id in aggregated:
        distance = depths[dataset_id] + 1
        job_depth[job_id] = min(job_depth.get(job_id, distance), distance)
    if root_job is not None:
        job_depth[root_job] = 0
    return job_depth
