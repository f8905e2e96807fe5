"""Lineage graph reads: a bounded walk over ``LineageEdge`` (dataset → dataset via a job).

The walk is one recursive SQL query per direction (so at most two), whatever the graph's
size; the rest is a fixed handful of queries over the nodes it found. Bounds (invariant 7):
``depth`` counts dataset hops, ``max_nodes`` counts datasets and jobs together; when a bound
cuts the graph the result says so and names what was cut. See docs/adr/0031.

The result is bipartite, as OpenLineage draws lineage: ``dataset → job`` edges (kind
``input``) and ``job → dataset`` edges (kind ``output``), read from ``JobLineageEdge``
(first/last seen, last run, run count over the job's runs; ``catalog.lineage.job_edges``). Jobs
that only read or only write a dataset are drawn next to it too (ADR 0027). Each edge says
how its last run named the dataset (``via``: an input only column lineage named is one)
and whether the job's latest completed run still produced it (``current``); with
``columns=true`` the column edges and dataset-level dependencies come from the one
column-lineage model, ``catalog.lineage.column_lineage`` (ADR 0060).

Static (design-time) lineage, a job's current JobEvent declaration, is walked and drawn
beside the observed edges (``catalog.lineage.design_time``, ADR 0061); ``lineage`` chooses
``observed``, ``static`` or ``all`` (the default), and every edge says which backs it.
The declared column edges come from the same column-lineage model, marked ``static``.

A job root that is a parent (an Airflow DAG) draws its child jobs too, linked by ``parent``
edges, and walks from their datasets as from its own (``catalog.lineage.child_jobs``, ADR 0070).
"""

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection

from catalog.lineage import (
    assembly,
    child_jobs,
    column_lineage,
    control,
    design_time,
    job_edges,
    prebuilt,
    temporary,
    window,
)
from catalog.lineage.depth_probe import has_more_sides
from catalog.lineage.request import (
    CUT_LIST_LIMIT,
    EDGES_PER_NODE,
    Graph,
    GraphRequest,
    NodeRef,
    UnknownNode,
)
from catalog.models import Dataset, Job, RetiredKind, any_declared_sql, any_retired_sql, retired_sql
from core.prepared import read_rows
from core.sql_arrays import bigint_array

# One recursive CTE per direction walked, each read through its own LIMIT, in one statement.
_WALK = """
WITH RECURSIVE {ctes}
{selects}
"""
_WALK_CTE = """{name}(dataset_id, depth) AS (
    {start}
  UNION
    SELECT n.next_id, w.depth + 1
    FROM {name} w CROSS JOIN LATERAL ({steps}) n
    WHERE w.depth < %(depth)s
)"""
_WALK_SELECT = "(SELECT {upstream}, dataset_id, depth FROM {name} LIMIT %(row_limit)s)"
_OBSERVED_STEP = (
    "SELECT e.{next} AS next_id FROM catalog_lineage_edge e WHERE e.{here} = w.dataset_id {filters}"
)

_START = "SELECT unnest(%({name}_start)s::bigint[]), %({name}_start_depth)s::int"
# A job root's first hop (job_edges.job_datasets) read by the walk's statement: two
# statements and their round trips fewer for a job root (ADR 0133).
_JOB_START = "SELECT s.dataset_id, {depth:d} FROM ({datasets}) AS s"


@dataclass(frozen=True)
class JobStart:
    """A walk's start that is the datasets these jobs read (upstream) or wrote."""

    job_ids: list[int]


# One direction's start: (upstream, the dataset ids or the jobs whose, their depth).
WalkStart = tuple[bool, list[int] | JobStart, int]


def walk(
    start: list[int], start_depth: int, upstream: bool, request: GraphRequest
) -> tuple[dict[int, int], bool]:
    """Datasets reachable from ``start`` → {id: least depth}; True when the row cap hit."""
    return walks([(upstream, start, start_depth)], request)[upstream]


def walks(
    starts: list[WalkStart], request: GraphRequest
) -> dict[bool, tuple[dict[int, int], bool]]:
    """For each direction (upstream True/False): the datasets reachable from its start →
    {id: least depth}, and True when its row cap hit. One statement for every direction.

    UNION (not UNION ALL) drops repeated (dataset, depth) pairs, so cycles end at the depth
    bound and each dataset appears at most depth+1 times. PostgreSQL evaluates a recursive
    query lazily, so the LIMIT stops the walk itself: with ``(max_nodes + 1) * (depth + 1)``
    rows the walk has either finished or found more than max_nodes distinct datasets. Each
    direction has its own CTE and its own LIMIT, so the two are bounded as apart (one
    statement instead of two: a round trip and a plan less per graph, issue 42).
    """
    row_limit = (request.max_nodes + 1) * (request.depth + 1)
    values: dict[str, Any] = {"depth": request.depth, "row_limit": row_limit}
    ctes, selects = [], []
    result: dict[bool, tuple[dict[int, int], bool]] = {}
    for upstream, start, start_depth in starts:
        result[upstream] = ({}, False)
        if not start:
            continue
        name = "up" if upstream else "down"
        filters, window_values = window.observed(
            request.as_of, request.since, "e", request.retirements
        )
        values.update(window_values)
        here, following = ("target_id", "source_id") if upstream else ("source_id", "target_id")
        steps = []
        if request.observed:
            steps.append(_OBSERVED_STEP.format(next=following, here=here, filters=filters))
        if request.reads_static:
            static_step, static_values = design_time.walk_step(upstream, request.as_of)
            steps.append(static_step)
            values.update(static_values)
        if isinstance(start, JobStart):
            datasets, start_values = job_edges.job_datasets_sql(
                start.job_ids,
                "input" if upstream else "output",
                request.as_of,
                request.since,
                request.max_nodes + 1,
                request.retirements,
                prefix=f"{name}_",
            )
            start_sql = _JOB_START.format(datasets=datasets, depth=start_depth)
            values.update(start_values)
        else:
            start_sql = _START.format(name=name)
            values[f"{name}_start"] = bigint_array(start)
            values[f"{name}_start_depth"] = start_depth
        ctes.append(_WALK_CTE.format(name=name, start=start_sql, steps=" UNION ALL ".join(steps)))
        selects.append(_WALK_SELECT.format(upstream="true" if upstream else "false", name=name))
    if not ctes:
        return result
    sql = _WALK.format(ctes=",\n".join(ctes), selects="\nUNION ALL\n".join(selects))
    # Not prepared (ADR 0133): the generic plan PostgreSQL chose for it on the 1M-event
    # store after five runs cost a job root's walk ~2.5 ms more than a custom plan.
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        rows = cursor.fetchall()
    counts: dict[bool, int] = defaultdict(int)
    for upstream, dataset_id, depth in rows:
        found = result[upstream][0]
        counts[upstream] += 1
        if dataset_id not in found or depth < found[dataset_id]:
            found[dataset_id] = depth
    return {
        upstream: (found, counts[upstream] >= row_limit) for upstream, (found, _) in result.items()
    }


def _job_start(job_ids: list[int], upstream: bool, request: GraphRequest) -> list[int]:
    """A job root's first hop: the datasets it (and its child jobs) read (upstream) or
    wrote (downstream)."""
    direction, limit = "input" if upstream else "output", request.max_nodes + 1
    found: set[int] = set()
    if request.observed:
        found.update(
            job_edges.job_datasets(
                job_ids, direction, request.as_of, request.since, limit, request.retirements
            )
        )
    if request.reads_static:
        found.update(design_time.job_datasets(job_ids, direction, request.as_of, limit))
    return sorted(found)[:limit]


# Only the keys the walk chooses by and the lineage type behind each half: the figures
# drawn (first/last seen, run count, last run) are the job edges' (job_edges.job_edges),
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
        design_time.edges(dataset_ids, root_job, request.as_of, limit)
        if request.reads_static
        else []
    )
    if not request.observed:
        return static
    filters, values = window.observed(request.as_of, request.since, "e", request.retirements)
    where = job_edges.pair_condition("e.source_id", "e.target_id", "e.job_id", root_job)
    # Prepared for a dataset root only: a job root's pairs (the job's own, ``OR``) cost ~2.5
    # ms more by their generic plan on the 1M-event store, as much by custom (ADR 0133).
    sql = _EDGES.format(where=where, filters=filters)
    values.update({"ids": bigint_array(dataset_ids), "job": root_job, "limit": limit})
    if root_job is None:
        observed = read_rows(sql, values)
    else:
        with connection.cursor() as cursor:
            cursor.execute(sql, values)
            observed = cursor.fetchall()
    # A pair both observed and declared is one row for the walk (lineage types: observed).
    known = {row[:3] for row in observed}
    return observed + [row for row in static if row[:3] not in known][: limit - len(observed)]


@dataclass
class _Reach:
    """What the walks found: each dataset's least depth, and each direction's datasets (no
    set per dataset: ~5,700 per job root on the 1M-event store, ADR 0117)."""

    depths: dict[int, int] = field(default_factory=dict)
    walked: dict[bool, dict[int, int]] = field(default_factory=lambda: {True: {}, False: {}})
    row_cap_hit: bool = False


@dataclass
class _Choice:
    """The nodes drawn within the budget, and what the budget left out."""

    ordered: list[int]
    edge_rows: list[tuple]
    job_links: list[job_edges.JobLink]
    leaf_edges: set[tuple[str, int, int]]
    chosen: set[int] = field(default_factory=set)
    jobs: set[int] = field(default_factory=set)
    omitted: int = 0
    omitted_jobs: set[int] = field(default_factory=set)


def lineage_graph(request: GraphRequest, prebuild: bool = False, figures: bool = True) -> Graph:
    """The graph around ``request.root``; raises UnknownNode when the root does not exist.

    ``prebuild``: a caller that only renders the answer (the API's graph) takes the nodes
    and edges as JSON text (``Graph.prebuilt``) where ``prebuilt.applies`` (ADR 0109).
    ``figures`` False: a caller that draws which edges there are, not their figures (the
    Marquez mount), gets the same edges with the figures None (``job_edges.edge_keys``, no
    reference run or currency read, ADR 0125), unless a drawn dataset is temporary (its
    fold composes its halves' figures, ADR 0089).
    """
    directions = {"upstream": [True], "downstream": [False], "both": [True, False]}
    upstreams = directions[request.direction]
    root_job, declarations, retirements = _root_job(request.root)
    if not (declarations and retirements):  # a copy: the caller's request is not changed
        request = replace(request, declarations=declarations, retirements=retirements)
    child_limit = min(child_jobs.CHILDREN_PER_PARENT, request.max_nodes - 1)
    child_ids, omitted_children = (
        child_jobs.children(root_job, request.as_of, child_limit)
        if root_job is not None
        else ([], 0)
    )
    reach = _reach(request, upstreams, child_ids)
    choice = _choose(request, reach, root_job, child_ids)
    drawn = _drawn_edges(choice, {root_job, *child_ids} if root_job is not None else set())
    graph = Graph(root=request.root)
    chosen = assembly.Drawn(request, choice.chosen, choice.jobs, reach.depths, choice.edge_rows, [])
    # The rule (ADR 0109): asked for by the caller, only what prebuilt draws is asked for,
    # and no drawn dataset is temporary (build says None, and the Python assembly folds).
    built = (
        prebuilt.build(chosen, drawn, root_job)
        if prebuild and prebuilt.applies(request, child_ids)
        else None
    )
    if built is not None:
        graph.prebuilt = (built.nodes, built.edges)
        graph.run_edges_cut = built.run_edges_cut
    else:
        # The nodes first: whether one is temporary decides whether figures are read.
        node_rows = assembly.node_rows(chosen)
        read = (
            job_edges.job_edges
            if figures or assembly.any_temporary(node_rows)
            else job_edges.edge_keys
        )
        job_rows = (
            read(drawn, request.as_of, request.since, request.retirements)
            if request.observed
            else []
        )
        declared = design_time.declared(drawn, request.as_of) if request.reads_static else {}
        assembly.assemble(
            graph,
            replace(chosen, job_rows=job_rows),
            drawn,
            declared,
            root_job,
            node_rows,
        )
    if root_job is not None:
        child_jobs.draw(graph, root_job, child_ids)
    graph.cut = {
        **_cut(request, reach, choice, upstreams),
        **child_jobs.cut(child_limit, omitted_children),
        **_run_edges_cut(graph),
    }
    graph.truncated = bool(graph.cut)
    if request.control:  # asked for: control flow is never drawn as data (ADR 0090)
        control.draw(graph, request, root_job)
    # Column edges are bounded apart from the nodes: one event can state a hundred
    # thousand among two datasets (issue 38), and each is a row of the answer.
    limit = min(EDGES_PER_NODE * request.max_nodes, settings.LINEAGE["MAX_COLUMN_EDGES"])
    if request.columns:
        lineage = column_lineage.among(
            sorted(choice.chosen),
            limit,
            request.as_of,
            request.since,
            observed=request.observed,
            static=request.static,
        )
        graph.column_edges, graph.dataset_dependencies = lineage.native()
        if lineage.left_out:
            graph.cut["column_edges"] = {
                "limit": limit,
                "omitted": lineage.left_out,
                "omitted_is_lower_bound": lineage.left_out >= column_lineage.COUNT_CAP - limit,
            }
            graph.truncated = True
    # Temporary job outputs become job-to-job links, their column edges composed (ADR 0089).
    temporary.fold(graph, graph.temporary, limit, EDGES_PER_NODE * request.max_nodes)
    return graph


def _root_job(root: NodeRef) -> tuple[int | None, bool, bool]:
    """The root job's id (None for a dataset root), whether the store holds any declaration
    (static lineage), and whether anything is retired; UnknownNode when the root is not
    there.

    The two store-wide facts are read in the root's statement, for nothing (ADR 0104). Most
    stores declare nothing and retire little: the static reads (a step of the walk, a probe,
    three statements) and the retirement probes (three per edge row, in every edge read)
    were then a third of the graph's database CPU, much of it planning. Both are read anew
    by every graph, so a declaration or a retirement committed before a request is seen by
    it: nothing is remembered between requests.
    """
    kind = RetiredKind.JOB if root.kind == "job" else RetiredKind.DATASET
    table = (Job if root.kind == "job" else Dataset)._meta.db_table
    # ``objects.current().filter(pk=...).exists()`` as SQL: the ORM's compilation cost more
    # than the index probe (issue 42). Retired: no node (ADR 0078).
    rows = read_rows(
        f"SELECT {any_declared_sql()}, {any_retired_sql()} "
        f"FROM {table} n WHERE n.id = %(id)s AND NOT {retired_sql(kind, 'n.id')}",
        {"id": root.id},
    )
    if not rows:
        raise UnknownNode(str(root))
    row = rows[0]
    return (root.id if root.kind == "job" else None), row[0], row[1]


def _reach(request: GraphRequest, upstreams: list[bool], child_ids: list[int]) -> _Reach:
    """The bounded walks from the root, both directions in one statement (a job root: from
    its and its child jobs' first hop)."""
    reach = _Reach()
    root = request.root
    starts: list[WalkStart] = []
    for upstream in upstreams:
        if root.kind == "dataset":
            starts.append((upstream, [root.id], 0))
        elif request.reads_static or not request.observed:  # declared: merged in Python
            starts.append((upstream, _job_start([root.id, *child_ids], upstream, request), 1))
        else:
            starts.append((upstream, JobStart([root.id, *child_ids]), 1))
    walked = walks(starts, request)
    depths = reach.depths
    for upstream in upstreams:
        found, capped = walked[upstream]
        reach.row_cap_hit = reach.row_cap_hit or capped
        reach.walked[upstream] = found
        for dataset_id, depth in found.items():
            if depth < depths.get(dataset_id, depth + 1):
                depths[dataset_id] = depth
    return reach


def _choose(
    request: GraphRequest, reach: _Reach, root_job: int | None, child_ids: list[int]
) -> _Choice:
    """The datasets and jobs drawn: nearest first, each dataset with the jobs linking it to
    what is already in, then the jobs that lead nowhere else, as far as the budget goes."""
    depths = reach.depths
    by_depth: dict[int, list[int]] = defaultdict(list)  # nearest first, then by id
    for dataset_id, depth in depths.items():
        by_depth[depth].append(dataset_id)
    ordered = [d for depth in sorted(by_depth) for d in sorted(by_depth[depth])]
    budget = request.max_nodes - (1 + len(child_ids) if root_job is not None else 0)
    candidates = ordered[:budget]
    edge_rows = _edges(candidates, root_job, request)
    job_links = design_time.links(
        candidates,
        request.observed,
        request.reads_static,
        request.as_of,
        request.since,
        EDGES_PER_NODE * request.max_nodes,
        request.retirements,
    )
    # Jobs next to a dataset in the walk's direction (readers downstream, writers
    # upstream), also those with nothing on the other side: checks, exports, loaders.
    leaf_jobs: dict[int, set[int]] = defaultdict(set)
    leaf_edges: set[tuple[str, int, int]] = set()
    up, down = reach.walked[True], reach.walked[False]
    for job_id, dataset_id, direction in job_links:
        if depths[dataset_id] < request.depth and (
            (direction == "input" and dataset_id in down)
            or (direction == "output" and dataset_id in up)
        ):
            leaf_jobs[dataset_id].add(job_id)
            leaf_edges.add((direction, dataset_id, job_id))
    choice = _Choice(ordered, edge_rows, job_links, leaf_edges)
    if root_job is not None:
        choice.jobs.add(root_job)
        choice.jobs.update(child_ids)
    rows_by_dataset: dict[int, list[tuple]] = defaultdict(list)
    for row in edge_rows:
        rows_by_dataset[row[0]].append(row)
        if row[1] != row[0]:
            rows_by_dataset[row[1]].append(row)
    chosen, jobs = choice.chosen, choice.jobs
    for dataset_id in candidates:
        # Each row's other end (its source or target that is not this dataset; a self-loop
        # is its own) is already in: what ``{source, target} - {dataset} <= chosen`` said,
        # without two sets per row (issue 42).
        new_jobs = {
            job_id
            for source, target, job_id, _ in rows_by_dataset[dataset_id]
            if job_id not in jobs
            and ((target if source == dataset_id else source) in chosen or source == target)
        }
        if len(chosen) + len(jobs) + 1 + len(new_jobs) > request.max_nodes:
            break
        chosen.add(dataset_id)
        jobs |= new_jobs
    choice.omitted = len(ordered) - len(chosen)
    # Then the jobs that lead nowhere else, nearest dataset first: a table read by a
    # thousand tests still shows its lineage.
    for dataset_id in [d for d in candidates if d in chosen]:  # in ``ordered``'s order
        for job_id in sorted(leaf_jobs[dataset_id] - jobs):
            if len(chosen) + len(jobs) < request.max_nodes:
                jobs.add(job_id)
            else:
                choice.omitted_jobs.add(job_id)
    return choice


def _drawn_edges(choice: _Choice, root_jobs: set[int]) -> set[tuple[str, int, int]]:
    """The (direction, dataset, job) halves drawn: of dataset → dataset edges with both ends
    drawn, a root job's (and its child jobs') edges, and the jobs brought in next to a
    dataset; never a job's edge that leads past the bounds (a job drawn for one pair may
    have read or written datasets far away)."""
    chosen, jobs = choice.chosen, choice.jobs
    drawn: set[tuple[str, int, int]] = {
        key
        for source, target, job_id, _ in choice.edge_rows
        if job_id in jobs and source in chosen and target in chosen
        for key in (("input", source, job_id), ("output", target, job_id))
    }
    drawn.update(key for key in choice.leaf_edges if key[2] in jobs and key[1] in chosen)
    # Each half's dataset is drawn: the pairs' ends and the leaves' are tested above, the
    # root jobs' links here (not a pass over every half again; a dataset root has none).
    if root_jobs:
        drawn.update(
            (link[2], link[1], link[0])
            for link in choice.job_links
            if link[0] in root_jobs and link[1] in chosen
        )
    return drawn


def _run_edges_cut(graph: Graph) -> dict[str, Any]:
    """``cut.run_edges`` when a drawn job's runs had input x output pairs past
    LINEAGE_MAX_RUN_EDGES: the walk went through the job only along the pairs kept, so from
    a cut input it reaches the job but not its outputs (ADR 0080)."""
    if not graph.run_edges_cut:
        return {}
    jobs = sorted(graph.run_edges_cut, key=lambda node_id: int(node_id.split(":")[1]))
    return {
        "run_edges": {"limit": settings.LINEAGE["MAX_RUN_EDGES"], "jobs": jobs[:CUT_LIST_LIMIT]}
    }


def _cut(
    request: GraphRequest, reach: _Reach, choice: _Choice, upstreams: list[bool]
) -> dict[str, Any]:
    """What the bounds cut: nodes past the budget, edges past their cap, and the datasets
    at the depth bound that have lineage beyond it."""
    cut: dict[str, Any] = {}
    if choice.omitted or reach.row_cap_hit or choice.omitted_jobs:
        cut["max_nodes"] = {
            "limit": request.max_nodes,
            "omitted_datasets": choice.omitted,
            "omitted_is_lower_bound": reach.row_cap_hit,
        }
        if choice.omitted_jobs:
            cut["max_nodes"]["omitted_jobs"] = len(choice.omitted_jobs)
    if max(len(choice.edge_rows), len(choice.job_links)) >= EDGES_PER_NODE * request.max_nodes:
        cut["edges"] = {"limit": EDGES_PER_NODE * request.max_nodes}
    at_bound = sorted(d for d in choice.chosen if reach.depths[d] >= request.depth)
    sides = {side: [d for d in at_bound if d in reach.walked[side]] for side in upstreams}
    beyond: set[int] = set()
    for found in has_more_sides(sides, request, choice.jobs).values():
        beyond.update(found)
    if beyond:
        cut["depth"] = {
            "limit": request.depth,
            "nodes_with_more": [f"dataset:{d}" for d in sorted(beyond)[:CUT_LIST_LIMIT]],
        }
    return cut


def hidden_neighbours(
    candidates: list[int], shown: list[int], direction: str, as_of: datetime | None, cap: int
) -> list[tuple[int, int]]:
    """(dataset, how many neighbours one hop ``direction`` are not drawn) where any are.

    One query: per candidate an index probe (catalog_edge_target_idx upstream, the unique
    (source, target, job) index downstream), each capped at ``cap`` rows.
    """
    if not candidates:
        return []
    here, other = (
        ("target_id", "source_id") if direction == "upstream" else ("source_id", "target_id")
    )
    filters, values = window.observed(as_of, None, "e")
    sql = (
        "SELECT d, n FROM unnest(%(ids)s::bigint[]) AS d CROSS JOIN LATERAL ("
        " SELECT count(*) AS n FROM ("
        f"  SELECT DISTINCT e.{other} FROM catalog_lineage_edge e"
        f"  WHERE e.{here} = d AND e.{other} <> ALL(%(shown)s::bigint[]) {filters}"
        "   LIMIT %(cap)s) AS hidden) AS c WHERE n > 0 ORDER BY d"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {**values, "ids": candidates, "shown": shown, "cap": cap})
        return [(row[0], row[1]) for row in cursor.fetchall()]
