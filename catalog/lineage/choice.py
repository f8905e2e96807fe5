"""The lineage graph's choice of nodes (``catalog.lineage.graph``) in one statement: the
walk, the pairs among the nearest datasets, their job links, the choice within the budget
and the depth bound's probe, whose result is the chosen nodes (issue 42 item 1, ADR 0139).

The rule is ``graph._choose``'s, which still serves a store that declares lineage (its
declared pairs and links are merged in Python): datasets nearest first (then by id), each
with the jobs of the pairs that link it to the datasets already in, as far as ``max_nodes``
goes, then the jobs next to a drawn dataset that lead nowhere else, nearest dataset first.
Datasets are taken in that order until one does not fit, so the chosen datasets are the
first k, and the jobs in after k datasets are the root jobs and every job of a pair whose
later end is among the first k: k is the largest for which k + those jobs <= max_nodes.
That count is one window sum in SQL; the Python loop over rows it replaces was ~2 ms of a
request (ADR 0128), and the pairs and the links were two more statements and round trips.
"""

from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from catalog.lineage import design_time, job_edges, window
from catalog.lineage.depth_probe import side_select
from catalog.lineage.request import CUT_LIST_LIMIT, EDGES_PER_NODE, GraphRequest
from core.sql_arrays import bigint_array

# One recursive CTE per direction walked, each read through its own LIMIT.
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


def walk_sql(starts: list[WalkStart], request: GraphRequest) -> tuple[list[str], list[str], dict]:
    """The walks' CTEs, one per direction with a start, and a ``SELECT (upstream,
    dataset_id, depth)`` of each, capped at ``%(row_limit)s`` rows; and their values.

    UNION (not UNION ALL) drops repeated (dataset, depth) pairs, so cycles end at the depth
    bound and each dataset appears at most depth+1 times. PostgreSQL evaluates a recursive
    query lazily, so the LIMIT stops the walk itself: with ``(max_nodes + 1) * (depth + 1)``
    rows the walk has either finished or found more than max_nodes distinct datasets."""
    values: dict[str, Any] = {
        "depth": request.depth,
        "row_limit": (request.max_nodes + 1) * (request.depth + 1),
    }
    ctes, selects = [], []
    for upstream, start, start_depth in starts:
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
    return ctes, selects, values


def applies(request: GraphRequest) -> bool:
    """Whether the choice is made in SQL: observed lineage only (``lineage=observed``, or a
    store that declares nothing, as the root check read). Declared pairs and links are
    merged with the observed in Python (``graph._choose``)."""
    return request.observed and not request.reads_static


@dataclass
class Chosen:
    """What the graph draws, and what its bounds cut.

    ``edge_rows``: the ``(source, target, job, lineage_type)`` pairs whose lineage type a
    drawn half may carry (the assembly's and prebuilt's types); ``halves`` the drawn
    ``(direction, dataset, job)`` edges; ``beyond`` the drawn datasets at the depth bound
    with lineage past it."""

    chosen: set[int]
    depths: dict[int, int]
    jobs: set[int]
    edge_rows: list[tuple]
    halves: set[tuple[str, int, int]]
    omitted: int = 0
    row_cap_hit: bool = False
    omitted_jobs: int = 0
    edges_cut: bool = False
    beyond: set[int] = field(default_factory=set)


# The walk's rows to each dataset's least depth and the directions that reached it; the
# nearest ``budget`` of them numbered (``pos``, nearest first, then by id); the pairs among
# them (a root job's own touching them too), capped by edge id as graph._edges; their job
# links, capped in job_edges.job_links' order; each job a pair brings in, at its later end.
# OFFSET 0 keeps the pairs found by the source and target indexes, then sorted (graph._EDGES).
_CHOICE = """
WITH RECURSIVE {ctes},
walked(upstream, dataset_id, depth) AS ({selects}),
reach AS (
    SELECT dataset_id, min(depth) AS depth, bool_or(upstream) AS up,
           bool_or(NOT upstream) AS down
    FROM walked GROUP BY dataset_id
),
candidates AS MATERIALIZED (
    SELECT r.*, row_number() OVER (ORDER BY r.depth, r.dataset_id) AS pos
    FROM reach r ORDER BY r.depth, r.dataset_id LIMIT %(budget)s
),
pairs AS MATERIALIZED (
    SELECT e.source_id, e.target_id, e.job_id, e.lineage_type, e.source_pos, e.target_pos
    FROM (
        {pairs}
        OFFSET 0
    ) AS e ORDER BY e.id LIMIT %(cap)s
),
links AS MATERIALIZED (
    SELECT je.job_id, je.dataset_id, je.direction, c.pos,
           c.depth < %(depth)s AND CASE je.direction WHEN 'input' THEN c.down ELSE c.up END
             AS leaf
    FROM candidates c JOIN catalog_job_edge je ON je.dataset_id = c.dataset_id
    WHERE true {job_filters}
    ORDER BY je.dataset_id, je.direction, je.job_id LIMIT %(cap)s
),
brought AS MATERIALIZED (
    SELECT job_id, min(greatest(source_pos, target_pos)) AS pos FROM pairs
    WHERE source_pos IS NOT NULL AND target_pos IS NOT NULL
      AND job_id <> ALL(%(root_jobs)s::bigint[])
    GROUP BY job_id
),
sizes AS (
    SELECT pos, pos + sum(sum(brought)::int) OVER (ORDER BY pos ROWS UNBOUNDED PRECEDING) AS size
    FROM (SELECT pos, 0 AS brought FROM candidates UNION ALL SELECT pos, 1 FROM brought) AS s
    GROUP BY pos
),
kept AS MATERIALIZED (
    SELECT count(*) AS k FROM sizes WHERE size + %(root_count)s <= %(max_nodes)s
),
chosen AS MATERIALIZED (
    SELECT c.* FROM candidates c WHERE c.pos <= (SELECT k FROM kept)
),
paired AS MATERIALIZED (
    SELECT job_id FROM brought WHERE pos <= (SELECT k FROM kept)
),
leaves AS MATERIALIZED (
    SELECT job_id, row_number() OVER (ORDER BY min(pos), job_id) AS rank
    FROM links l
    WHERE l.leaf AND l.pos <= (SELECT k FROM kept)
      AND l.job_id <> ALL(%(root_jobs)s::bigint[])
      AND l.job_id NOT IN (SELECT job_id FROM paired)
    GROUP BY job_id
),
room AS MATERIALIZED (
    SELECT %(max_nodes)s - kept.k - %(root_count)s - (SELECT count(*) FROM paired) AS n
    FROM kept
),
jobs AS MATERIALIZED (
    SELECT unnest(%(root_jobs)s::bigint[]) AS job_id
    UNION ALL SELECT job_id FROM paired
    UNION ALL SELECT job_id FROM leaves WHERE rank <= (SELECT n FROM room)
),
halves AS (
    SELECT 'input' AS direction, source_id AS dataset_id, job_id FROM pairs
    WHERE source_pos <= (SELECT k FROM kept) AND target_pos <= (SELECT k FROM kept)
    UNION SELECT 'output', target_id, job_id FROM pairs
    WHERE source_pos <= (SELECT k FROM kept) AND target_pos <= (SELECT k FROM kept)
    UNION SELECT l.direction, l.dataset_id, l.job_id FROM links l
    WHERE l.pos <= (SELECT k FROM kept)
      AND (l.job_id = ANY(%(root_jobs)s::bigint[])
           OR (l.leaf AND (l.job_id IN (SELECT job_id FROM jobs)) IS TRUE))
),
beyond AS ({beyond})
SELECT chosen.ids, chosen.depths, drawn_jobs.ids, halves.directions, halves.datasets,
       halves.jobs, typed.sources, typed.targets, typed.jobs, typed.types,
       (SELECT count(*) FROM reach) - kept.k,
       (SELECT count(*) FROM walked WHERE upstream) >= %(row_limit)s
         OR (SELECT count(*) FROM walked WHERE NOT upstream) >= %(row_limit)s,
       greatest((SELECT count(*) FROM leaves) - (SELECT n FROM room), 0),
       greatest((SELECT count(*) FROM pairs), (SELECT count(*) FROM links)) >= %(cap)s,
       (SELECT array_agg(d) FROM beyond)
FROM kept,
     (SELECT array_agg(dataset_id) AS ids, array_agg(depth) AS depths FROM chosen) AS chosen,
     (SELECT array_agg(job_id) AS ids FROM jobs) AS drawn_jobs,
     (SELECT array_agg(direction) AS directions, array_agg(dataset_id) AS datasets,
             array_agg(job_id) AS jobs FROM halves) AS halves,
     (SELECT array_agg(source_id) AS sources, array_agg(target_id) AS targets,
             array_agg(job_id) AS jobs, array_agg(lineage_type) AS types
      FROM pairs p
      WHERE p.lineage_type IS NOT NULL AND (p.job_id IN (SELECT job_id FROM jobs)) IS TRUE
        AND (p.source_pos <= (SELECT k FROM kept) OR p.target_pos <= (SELECT k FROM kept))) AS typed
"""

# The pairs among the candidates, each with its ends' places in the order: found from its
# source's index entry, its target looked up among the candidates.
_AMONG = """SELECT e.id, e.source_id, e.target_id, e.job_id, e.lineage_type,
               s.pos AS source_pos, t.pos AS target_pos
        FROM candidates s JOIN catalog_lineage_edge e ON e.source_id = s.dataset_id
        JOIN candidates t ON t.dataset_id = e.target_id
        WHERE true {filters}"""
# A job root's own pairs that touch a candidate (graph._edges' ``OR``), by the job's index.
_ROOT_JOBS_PAIRS = """
        UNION
        SELECT e.id, e.source_id, e.target_id, e.job_id, e.lineage_type, s.pos, t.pos
        FROM catalog_lineage_edge e
        LEFT JOIN candidates s ON s.dataset_id = e.source_id
        LEFT JOIN candidates t ON t.dataset_id = e.target_id
        WHERE e.job_id = %(job)s AND (s.pos IS NOT NULL OR t.pos IS NOT NULL) {filters}"""


def choose(
    request: GraphRequest, starts: list[WalkStart], root_job: int | None, root_jobs: list[int]
) -> Chosen:
    """The chosen nodes of the graph walked from ``starts`` (``root_jobs``: a job root and
    its child jobs, drawn whatever the budget; none for a dataset root)."""
    ctes, selects, values = walk_sql(starts, request)
    filters, window_values = window.observed(request.as_of, request.since, "e", request.retirements)
    job_filters, _ = job_edges.filters(request.as_of, request.since, request.retirements)
    pairs = _AMONG.format(filters=filters)
    if root_job is not None:
        pairs += _ROOT_JOBS_PAIRS.format(filters=filters)
    sides = [
        side_select(
            upstream,
            "(SELECT dataset_id AS d FROM chosen WHERE depth >= %(depth)s AND "
            f"{'up' if upstream else 'down'}) AS b",
            request,
            "(SELECT coalesce(array_agg(job_id), '{}') FROM jobs)::bigint[]",
        )
        for upstream in (True, False)
        if any(start[0] == upstream for start in starts)
    ]
    for _, side_values in sides:
        values.update(side_values)
    sql = _CHOICE.format(
        ctes=",\n".join(ctes),
        selects="\nUNION ALL\n".join(selects),
        pairs=pairs,
        job_filters=job_filters,
        beyond="SELECT d FROM (" + " UNION ALL ".join(s for s, _ in sides) + ") AS p(up, d)",
    )
    values.update(window_values)
    values.update(
        {
            "budget": request.max_nodes - len(root_jobs),
            "cap": EDGES_PER_NODE * request.max_nodes,
            "max_nodes": request.max_nodes,
            "root_jobs": bigint_array(root_jobs),
            "root_count": len(root_jobs),
            "job": root_job,
            "limit": CUT_LIST_LIMIT,
        }
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        (row,) = cursor.fetchall()
    (ids, depths, jobs, directions, datasets, job_ids, *typed) = row[:10]
    omitted, row_cap_hit, omitted_jobs, edges_cut, beyond = row[10:]
    return Chosen(
        chosen=set(ids or ()),
        depths=dict(zip(ids or (), depths or (), strict=True)),
        jobs=set(jobs or ()),
        edge_rows=list(zip(*(column or () for column in typed), strict=True)),
        halves=set(zip(directions or (), datasets or (), job_ids or (), strict=True)),
        omitted=omitted,
        row_cap_hit=row_cap_hit,
        omitted_jobs=omitted_jobs,
        edges_cut=edges_cut,
        beyond=set(beyond or ()),
    )
