"""Lineage graph reads: a bounded walk over ``LineageEdge`` (dataset → dataset via a job).

The walk is one recursive SQL query per direction (so at most two), whatever the graph's
size; the rest is a fixed handful of queries over the nodes it found. Bounds (invariant 7):
``depth`` counts dataset hops, ``max_nodes`` counts datasets and jobs together; when a bound
cuts the graph the result says so and names what was cut. See docs/adr/0031.

The result is bipartite, as OpenLineage draws lineage: ``dataset → job`` edges (kind
``input``) and ``job → dataset`` edges (kind ``output``), read from ``JobLineageEdge``
(first/last seen, last run, run count over the job's runs; ``catalog.graph_jobs``). Jobs
that only read or only write a dataset are drawn next to it too (ADR 0027). Each edge says
how its last run named the dataset (``via``: an input only column lineage named is one)
and whether the job's latest completed run still produced it (``current``); with
``columns=true`` the column edges and dataset-level dependencies come from the one
column-lineage model, ``catalog.column_lineage`` (ADR 0060).

Static (design-time) lineage, a job's current JobEvent declaration, is walked and drawn
beside the observed edges (``catalog.graph_static``, ADR 0061); ``lineage`` chooses
``observed``, ``static`` or ``all`` (the default), and every edge says which backs it.
The declared column edges come from the same column-lineage model, marked ``static``.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.db import connection

from catalog import column_lineage, currency, graph_jobs, graph_static
from catalog.models import Dataset, DatasetAlias, Job

Direction = Literal["upstream", "downstream", "both"]

DEFAULT_DEPTH = 3
MAX_DEPTH = 10
DEFAULT_MAX_NODES = 200
MAX_MAX_NODES = 2000
# Edges among the chosen nodes and column edges are capped too (multiple jobs per pair).
EDGES_PER_NODE = 20
# "What was cut" lists at most this many node ids.
CUT_LIST_LIMIT = 100


@dataclass(frozen=True)
class NodeRef:
    kind: Literal["dataset", "job"]
    id: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"

    @classmethod
    def parse(cls, text: str) -> "NodeRef":
        """``dataset:12`` or ``job:7``; ValueError otherwise."""
        kind, _, number = text.partition(":")
        if kind not in ("dataset", "job") or not number.isdigit():
            raise ValueError("expected dataset:<id> or job:<id>")
        value = int(number)
        if not 0 < value < 2**63:
            raise ValueError("the id is out of range")
        return cls(kind, value)  # type: ignore[arg-type]


@dataclass
class GraphRequest:
    root: NodeRef
    direction: Direction = "both"
    depth: int = DEFAULT_DEPTH
    max_nodes: int = DEFAULT_MAX_NODES
    as_of: datetime | None = None
    since: datetime | None = None
    columns: bool = False
    lineage: graph_static.Lineage = "all"

    @property
    def observed(self) -> bool:
        return self.lineage != "static"

    @property
    def static(self) -> bool:
        return self.lineage != "observed"


@dataclass
class Graph:
    root: NodeRef
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    column_edges: list[dict[str, Any]] | None = None
    dataset_dependencies: list[dict[str, Any]] | None = None
    truncated: bool = False
    cut: dict[str, Any] = field(default_factory=dict)
    # Internal: the JobLineageEdge id behind each bipartite edge (for diffs).
    edge_sources: dict[str, list[int]] = field(default_factory=dict)


class UnknownNode(LookupError):
    pass


def edge_filters(request: GraphRequest, alias: str = "e") -> tuple[str, dict[str, Any]]:
    sql = ""
    values: dict[str, Any] = {}
    if request.as_of is not None:
        sql += f" AND {alias}.first_seen <= %(as_of)s"
        values["as_of"] = request.as_of
    if request.since is not None:
        sql += f" AND {alias}.last_seen >= %(since)s"
        values["since"] = request.since
    return sql, values


_WALK = """
WITH RECURSIVE walk(dataset_id, depth) AS (
    SELECT unnest(%(start)s::bigint[]), %(start_depth)s::int
  UNION
    SELECT n.next_id, w.depth + 1
    FROM walk w CROSS JOIN LATERAL ({steps}) n
    WHERE w.depth < %(depth)s
)
SELECT dataset_id, depth FROM walk LIMIT %(row_limit)s
"""
_OBSERVED_STEP = (
    "SELECT e.{next} AS next_id FROM catalog_lineage_edge e WHERE e.{here} = w.dataset_id {filters}"
)


def _walk(
    start: list[int], start_depth: int, upstream: bool, request: GraphRequest
) -> tuple[dict[int, int], bool]:
    """Datasets reachable from ``start`` → {id: least depth}; True when the row cap hit.

    UNION (not UNION ALL) drops repeated (dataset, depth) pairs, so cycles end at the depth
    bound and each dataset appears at most depth+1 times. PostgreSQL evaluates a recursive
    query lazily, so the LIMIT stops the walk itself: with ``(max_nodes + 1) * (depth + 1)``
    rows the walk has either finished or found more than max_nodes distinct datasets.
    """
    if not start:
        return {}, False
    filters, values = edge_filters(request)
    here, following = ("target_id", "source_id") if upstream else ("source_id", "target_id")
    row_limit = (request.max_nodes + 1) * (request.depth + 1)
    steps = []
    if request.observed:
        steps.append(_OBSERVED_STEP.format(next=following, here=here, filters=filters))
    if request.static:
        static_step, static_values = graph_static.walk_step(upstream, request.as_of)
        steps.append(static_step)
        values.update(static_values)
    sql = _WALK.format(steps=" UNION ALL ".join(steps))
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                **values,
                "start": start,
                "start_depth": start_depth,
                "depth": request.depth,
                "row_limit": row_limit,
            },
        )
        rows = cursor.fetchall()
    found: dict[int, int] = {}
    for dataset_id, depth in rows:
        if dataset_id not in found or depth < found[dataset_id]:
            found[dataset_id] = depth
    return found, len(rows) >= row_limit


def _job_start(job_id: int, upstream: bool, request: GraphRequest) -> list[int]:
    """A job root's first hop: the datasets it read (upstream) or wrote (downstream)."""
    direction, limit = "input" if upstream else "output", request.max_nodes + 1
    found: set[int] = set()
    if request.observed:
        found.update(
            graph_jobs.job_datasets(job_id, direction, request.as_of, request.since, limit)
        )
    if request.static:
        found.update(graph_static.job_datasets(job_id, direction, request.as_of, limit))
    return sorted(found)[:limit]


# Only the keys the walk chooses by and the lineage type behind each half: the figures
# drawn (first/last seen, run count, last run) are the job edges' (graph_jobs.job_edges),
# and as of T the edge's own first_seen decides whether it existed, as in the walk.
#
# OFFSET 0 keeps the planner from reading the whole table in id order to find the few rows
# among these datasets (it did, 375,000 rows for 958, when one planted job made 360,000
# edges and skewed its estimates): the rows are found by the source and target indexes,
# then sorted. The same rows in the same order.
_EDGES = """
SELECT e.source_id, e.target_id, e.job_id, e.lineage_type FROM (
    SELECT e.id, e.source_id, e.target_id, e.job_id, e.lineage_type
    FROM catalog_lineage_edge e
    WHERE {where} {filters}
    OFFSET 0
) AS e ORDER BY e.id LIMIT %(limit)s
"""


def _edges(dataset_ids: list[int], root_job: int | None, request: GraphRequest) -> list[tuple]:
    """Dataset → dataset edges among ``dataset_ids`` (and a root job's own), capped:
    ``(source_id, target_id, job_id, lineage_type)`` rows."""
    limit = EDGES_PER_NODE * request.max_nodes
    static = (
        graph_static.edges(dataset_ids, root_job, request.as_of, limit) if request.static else []
    )
    if not request.observed:
        return static
    filters, values = edge_filters(request)
    where = graph_jobs.pair_condition("e.source_id", "e.target_id", "e.job_id", root_job)
    with connection.cursor() as cursor:
        cursor.execute(
            _EDGES.format(where=where, filters=filters),
            {
                **values,
                "ids": dataset_ids,
                "job": root_job,
                "limit": limit,
            },
        )
        observed = cursor.fetchall()
    # A pair both observed and declared is one row for the walk (lineage types: observed).
    known = {row[:3] for row in observed}
    return observed + [row for row in static if row[:3] not in known][: limit - len(observed)]


def _has_more(
    dataset_ids: list[int], upstream: bool, request: GraphRequest, jobs: set[int]
) -> list[int]:
    """Of ``dataset_ids`` (at the depth bound), those with lineage beyond it: an edge to
    another dataset, or a job that reads (downstream) / writes (upstream) it and is not
    drawn."""
    if not dataset_ids:
        return []
    filters, values = edge_filters(request)
    job_filters, _ = graph_jobs.filters(request.as_of, request.since)
    column = "target_id" if upstream else "source_id"
    conditions = []
    if request.observed:
        conditions += [
            f"EXISTS (SELECT 1 FROM catalog_lineage_edge e WHERE e.{column} = d {filters})",
            "EXISTS (SELECT 1 FROM catalog_job_edge je WHERE je.dataset_id = d "
            f"AND je.direction = %(direction)s AND NOT (je.job_id = ANY(%(jobs)s)) {job_filters})",
        ]
    if request.static:
        static_condition, static_values = graph_static.has_more_sql(upstream, request.as_of)
        conditions.append(static_condition)
        values.update(static_values)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT d FROM unnest(%(ids)s::bigint[]) AS d WHERE {' OR '.join(conditions)} "
            "ORDER BY d LIMIT %(limit)s",
            {
                **values,
                "ids": dataset_ids,
                "direction": "output" if upstream else "input",
                "jobs": sorted(jobs),
                "limit": CUT_LIST_LIMIT,
            },
        )
        return [row[0] for row in cursor.fetchall()]


def lineage_graph(request: GraphRequest) -> Graph:
    """The graph around ``request.root``; raises UnknownNode when the root does not exist."""
    root = request.root
    directions = {
        "upstream": [True],
        "downstream": [False],
        "both": [True, False],
    }[request.direction]
    root_job: Job | None = None
    if root.kind == "job":
        root_job = Job.objects.filter(pk=root.id).first()
        if root_job is None:
            raise UnknownNode(str(root))
    elif not Dataset.objects.filter(pk=root.id).exists():
        raise UnknownNode(str(root))

    depths: dict[int, int] = {}
    directions_of: dict[int, set[bool]] = defaultdict(set)
    row_cap_hit = False
    for upstream in directions:
        if root.kind == "dataset":
            start, start_depth = [root.id], 0
        else:
            start, start_depth = _job_start(root.id, upstream, request), 1
        found, capped = _walk(start, start_depth, upstream, request)
        row_cap_hit = row_cap_hit or capped
        for dataset_id, depth in found.items():
            directions_of[dataset_id].add(upstream)
            if dataset_id not in depths or depth < depths[dataset_id]:
                depths[dataset_id] = depth

    ordered = sorted(depths, key=lambda dataset_id: (depths[dataset_id], dataset_id))
    budget = request.max_nodes - (1 if root_job is not None else 0)
    candidates = ordered[:budget]
    edge_rows = _edges(candidates, root_job.id if root_job else None, request)
    job_links = graph_static.links(
        candidates,
        request.observed,
        request.static,
        request.as_of,
        request.since,
        EDGES_PER_NODE * request.max_nodes,
    )
    # Jobs next to a dataset in the walk's direction (readers downstream, writers
    # upstream), also those with nothing on the other side: checks, exports, loaders.
    leaf_jobs: dict[int, set[int]] = defaultdict(set)
    leaf_edges: set[tuple[str, int, int]] = set()
    for job_id, dataset_id, direction in job_links:
        walked = directions_of[dataset_id]
        if depths[dataset_id] < request.depth and (
            (direction == "input" and False in walked) or (direction == "output" and True in walked)
        ):
            leaf_jobs[dataset_id].add(job_id)
            leaf_edges.add((direction, dataset_id, job_id))

    # Greedy, nearest first: a dataset comes in with the jobs linking it to what is already in.
    chosen: set[int] = set()
    jobs: set[int] = {root_job.id} if root_job else set()
    rows_by_dataset: dict[int, list[tuple]] = defaultdict(list)
    for row in edge_rows:
        rows_by_dataset[row[0]].append(row)
        if row[1] != row[0]:
            rows_by_dataset[row[1]].append(row)
    omitted = 0
    for dataset_id in candidates:
        new_jobs = {
            row[2]
            for row in rows_by_dataset[dataset_id]
            if row[2] not in jobs and {row[0], row[1]} - {dataset_id} <= chosen
        }
        if len(chosen) + len(jobs) + 1 + len(new_jobs) > request.max_nodes:
            omitted = len(ordered) - len(chosen)
            break
        chosen.add(dataset_id)
        jobs |= new_jobs
    else:
        omitted = len(ordered) - len(chosen)
    # Then the jobs that lead nowhere else (checks, exports, loaders), nearest dataset first,
    # as far as the budget goes: a table read by a thousand tests still shows its lineage.
    omitted_jobs: set[int] = set()
    for dataset_id in sorted(chosen, key=lambda d: (depths[d], d)):
        for job_id in sorted(leaf_jobs[dataset_id] - jobs):
            if len(chosen) + len(jobs) < request.max_nodes:
                jobs.add(job_id)
            else:
                omitted_jobs.add(job_id)

    graph = Graph(root=root)
    # The edges drawn: halves of dataset → dataset edges with both ends drawn, a root job's
    # edges, and the jobs brought in next to a dataset; never a job's edge that leads past
    # the bounds (a job drawn for one pair may have read or written datasets far away).
    drawn: set[tuple[str, int, int]] = {
        key
        for source, target, job_id, _ in edge_rows
        if job_id in jobs and source in chosen and target in chosen
        for key in (("input", source, job_id), ("output", target, job_id))
    }
    drawn |= {key for key in leaf_edges if key[2] in jobs and key[1] in chosen}
    if root_job is not None:
        drawn |= {(link[2], link[1], link[0]) for link in job_links if link[0] == root_job.id}
    drawn = {key for key in drawn if key[1] in chosen}
    job_rows = graph_jobs.job_edges(drawn, request.as_of, request.since) if request.observed else []
    declared = graph_static.declared(drawn, request.as_of) if request.static else {}
    _assemble(graph, request, chosen, jobs, depths, edge_rows, job_rows, drawn, root_job, declared)

    cut: dict[str, Any] = {}
    if omitted or row_cap_hit or omitted_jobs:
        cut["max_nodes"] = {
            "limit": request.max_nodes,
            "omitted_datasets": omitted,
            "omitted_is_lower_bound": row_cap_hit,
        }
        if omitted_jobs:
            cut["max_nodes"]["omitted_jobs"] = len(omitted_jobs)
    if max(len(edge_rows), len(job_links)) >= EDGES_PER_NODE * request.max_nodes:
        cut["edges"] = {"limit": EDGES_PER_NODE * request.max_nodes}
    at_bound = sorted(d for d in chosen if depths[d] >= request.depth)
    beyond: set[int] = set()
    for upstream in directions:
        side = [d for d in at_bound if upstream in directions_of[d]]
        beyond.update(_has_more(side, upstream, request, jobs))
    if beyond:
        cut["depth"] = {
            "limit": request.depth,
            "nodes_with_more": [f"dataset:{d}" for d in sorted(beyond)[:CUT_LIST_LIMIT]],
        }
    graph.truncated = bool(cut)
    graph.cut = cut
    if request.columns:
        lineage = column_lineage.among(
            sorted(chosen),
            EDGES_PER_NODE * request.max_nodes,
            request.as_of,
            request.since,
            observed=request.observed,
            static=request.static,
        )
        graph.column_edges, graph.dataset_dependencies = lineage.native()
    return graph


def _assemble(
    graph: Graph,
    request: GraphRequest,
    chosen: set[int],
    jobs: set[int],
    depths: dict[int, int],
    edge_rows: list[tuple],
    job_rows: list[graph_jobs.JobEdgeRow],
    drawn: set[tuple[str, int, int]],
    root_job: Job | None,
    declared: graph_static.Declared,
) -> None:
    # Nodes and edges are built in the API's field order (api/views/lineage.py's
    # serializers, which document them): the view returns them as they are.
    aggregated: dict[tuple[str, int, int], dict[str, Any]] = {}
    sources: dict[tuple[str, int, int], list[int]] = {}
    current = currency.current_job_edges({row[0]: row[1] for row in job_rows}, request.as_of)
    for edge_id, job_id, dataset_id, direction, first, last, runs, done, run_uuid, via in job_rows:
        key = (direction, dataset_id, job_id)
        if dataset_id not in chosen or key not in drawn:
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
            # Runs that completed (catalog.writes): 0 of n, every run failed or was
            # aborted, the edge is only attempted I/O (ADR 0069).
            "completed_run_count": done,
            "lineage_types": set(),
            # "" listed in the run's inputs/outputs; "column_lineage": only named in an
            # output's column lineage (ADR 0060).
            "via": via,
            "current": edge_id in current,
            "observed": True,
            "static": key in declared,
        }
        sources[key] = [edge_id]
    for key in graph_static.add_declared_only(aggregated, declared, drawn, chosen):
        sources[key] = []
    # Edge-API lineage types come from the dataset → dataset edges behind each half.
    for source_id, target_id, job_id, lineage_type in edge_rows:
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

    dataset_nodes = []
    aliases: dict[int, list[dict[str, str]]] = defaultdict(list)
    for alias in (
        DatasetAlias.objects.filter(dataset_id__any=chosen)
        .order_by("dataset_id", "namespace", "name", "id")
        .values("dataset_id", "namespace", "name", "reason")
    ):
        aliases[alias["dataset_id"]].append(
            {"namespace": alias["namespace"], "name": alias["name"], "reason": alias["reason"]}
        )
    # Only the columns a node shows: a dataset's or job's facets (schemas) can be large.
    node_columns = ("id", "namespace", "name", "first_seen", "last_seen")
    for dataset in (
        Dataset.objects.filter(id__any=chosen).order_by("id").values(*node_columns, "is_dropped")
    ):
        dataset_nodes.append(
            {
                "id": f"dataset:{dataset['id']}",
                "type": "dataset",
                "dataset_id": dataset["id"],
                "namespace": dataset["namespace"],
                "name": dataset["name"],
                "depth": depths[dataset["id"]],
                "aliases": aliases[dataset["id"]],
                "is_dropped": dataset["is_dropped"],
                "first_seen": dataset["first_seen"],
                "last_seen": dataset["last_seen"],
            }
        )
    # A job's depth: one more than the nearest dataset it links (root job: 0).
    job_depth: dict[int, int] = {}
    for _, dataset_id, job_id in aggregated:
        distance = depths[dataset_id] + 1
        job_depth[job_id] = min(job_depth.get(job_id, distance), distance)
    if root_job is not None:
        job_depth[root_job.id] = 0
    job_nodes: list[dict[str, Any]] = [
        {
            "id": f"job:{job['id']}",
            "type": "job",
            "job_id": job["id"],
            "namespace": job["namespace"],
            "name": job["name"],
            "depth": job_depth.get(job["id"], 0),
            "aliases": [],
            "is_dropped": False,
            "first_seen": job["first_seen"],
            "last_seen": job["last_seen"],
        }
        for job in Job.objects.filter(id__any=jobs).order_by("id").values(*node_columns)
    ]
    graph.nodes = dataset_nodes + job_nodes


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
    reseen, active_jobs = graph_jobs.reseen_and_active(underlying, jobs, start, end)
    edges_removed = [
        edge
        for key, edge in before_edges.items()
        if edge["observed"] and _job_of(edge) in active_jobs and not behind[key] & reseen
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
