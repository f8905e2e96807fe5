"""The job edges of the lineage graph (``JobLineageEdge``): reads used by ``catalog.lineage.graph``.

The walk finds datasets through ``LineageEdge`` (dataset → dataset via a job); the edges it
draws are the bipartite ``input`` (dataset → job) and ``output`` (job → dataset) edges of
``JobLineageEdge``, which exist for every job that read or wrote a dataset, including jobs
that only read (checks, exports) or only write (loaders, sinks). ADR 0027.
"""

from datetime import datetime
from typing import Any

from django.db import connection

from catalog.lineage import currency, window
from core.prepared import read_rows
from core.sql_arrays import bigint_array


def pair_condition(source: str, target: str, job: str, root_job: int | None) -> str:
    """SQL: a dataset → dataset pair among ``%(ids)s``, or, with a root job, any pair of that
    job's (``%(job)s``) that touches them. Observed and declared edges are walked by it alike."""
    among = f"({source} = ANY(%(ids)s::bigint[]) AND {target} = ANY(%(ids)s::bigint[]))"
    if root_job is None:
        return among
    touching = f"({source} = ANY(%(ids)s::bigint[]) OR {target} = ANY(%(ids)s::bigint[]))"
    return f"({among} OR ({job} = %(job)s AND {touching}))"


JobEdgeRow = tuple[int, int, int, str, datetime, datetime, int, int, Any, str, bool]
# (id, job_id, dataset_id, direction, first_seen, last_seen, run_count, completed run count,
#  last run uuid, via, current: catalog.lineage.currency's test, in the same statement)
# ``edge_keys``' rows: the first four, every figure None (not read).
KeyRow = tuple[int, int, int, str, None, None, None, None, None, None, None]


def filters(
    as_of: datetime | None, since: datetime | None, retired: bool = True
) -> tuple[str, dict[str, Any]]:
    """The window on the job-edge table, aliased ``je`` in every query here (``retired``:
    window.observed's)."""
    return window.observed(as_of, since, "je", retired)


JobLink = tuple[int, int, str]  # (job_id, dataset_id, direction)

# The drawn edges' keys, each with its job's reference run (catalog.lineage.currency), then
# the edges by their natural key (the unique (job, dataset, direction) index).
#
# The keys meet the reference runs first, in a subquery the planner plans apart (OFFSET 0):
# two lists whose lengths it knows (a hash join on both bench stores). Joined after the
# edge table, it estimated the drawn edges at one row (it multiplies the three key columns'
# selectivities) and scanned the reference runs once per edge in a nested loop: on
# bench/read.py's 1M-event store 569 edges x 271 jobs, 150,000 rows for ~16 ms of a 28 ms
# statement (ADR 0117). The same rows: each key with its job's reference run, then its edge.
_DRAWN = """
FROM (
    SELECT k.job_id, k.dataset_id, k.direction, ref.run_id
    FROM unnest(%(jobs)s::bigint[], %(datasets)s::bigint[], %(directions)s::text[])
         AS k(job_id, dataset_id, direction)
    JOIN reference ref ON ref.job_id = k.job_id
    OFFSET 0
) AS ref
JOIN catalog_job_edge je
  ON je.job_id = ref.job_id AND je.dataset_id = ref.dataset_id AND je.direction = ref.direction
"""

_NOW = (
    """
SELECT je.id, je.job_id, je.dataset_id, je.direction, je.first_seen, je.last_seen,
       je.run_count, je.completed_run_count, r.run_uuid, je.via, /*current*/"""
    + _DRAWN
    + """LEFT JOIN catalog_run r ON r.id = je.last_run_id
WHERE true {filters}
ORDER BY je.dataset_id, je.direction, je.job_id
"""
)


def history_as_of(alias: str, edge_runs: str) -> tuple[str, str]:
    """An edge's figures as of T (``%(as_of)s``): the select-list columns (first seen, last
    seen, run count, completed run count) and the lateral join (``h``) that computes them,
    for the edge row ``alias`` of a FROM clause before it, from its runs' contributions
    (``edge_runs``) up to T; an edge no run row backs keeps its own. The graph draws job
    edges only, so they alone are read this way.

    Every column it reads is in the edge-run table's unique index (ADR 0050), so this is an
    index-only scan of the edge's entries; ``h.latest`` (the greatest last seen up to T)
    lets the caller find the last run among the few rows seen then, not sort them all."""
    columns = (
        f"COALESCE(h.first_seen, {alias}.first_seen), "
        f"COALESCE(h.last_seen, LEAST({alias}.last_seen, %(as_of)s)), "
        f"COALESCE(NULLIF(h.runs, 0), {alias}.run_count), "
        f"CASE WHEN h.runs > 0 THEN h.completed ELSE {alias}.completed_run_count END"
    )
    source = f"""CROSS JOIN LATERAL (
    SELECT min(er.first_seen) AS first_seen, max(LEAST(er.last_seen, %(as_of)s)) AS last_seen,
           count(*) AS runs, max(er.last_seen) AS latest,
           -- Runs that completed (ADR 0069): ``completed`` is not in the index, so this
           -- one reads the rows' heap pages, for the drawn edges only.
           count(*) FILTER (WHERE er.completed) AS completed
    FROM {edge_runs} er WHERE er.edge_id = {alias}.id AND er.first_seen <= %(as_of)s
) h
"""
    return columns, source


# As of T: the edge's runs' contributions up to T (JobLineageEdgeRun).
_HISTORY_COLUMNS, _HISTORY = history_as_of("je", "catalog_job_edge_run")
_AS_OF = (
    f"SELECT je.id, je.job_id, je.dataset_id, je.direction, {_HISTORY_COLUMNS}, r.run_uuid,\n"
    "COALESCE(last.via, je.via), /*current*/"
    + _DRAWN
    + _HISTORY
    + """LEFT JOIN LATERAL (
    SELECT er.run_id, er.via FROM catalog_job_edge_run er JOIN catalog_run lr ON lr.id = er.run_id
    WHERE er.edge_id = je.id AND er.first_seen <= %(as_of)s AND er.last_seen = h.latest
    ORDER BY lr.run_uuid DESC LIMIT 1
) last ON true
LEFT JOIN catalog_run r ON r.id = COALESCE(last.run_id, je.last_run_id)
WHERE true {filters}
ORDER BY je.dataset_id, je.direction, je.job_id
"""
)


def job_links(
    dataset_ids: list[int],
    as_of: datetime | None,
    since: datetime | None,
    limit: int,
    retired: bool = True,
) -> list[JobLink]:
    """Which jobs read or wrote ``dataset_ids`` (both directions), in a stable order, capped.

    Only the keys: the walk chooses its nodes from these, and most are not drawn (a big
    graph links thousands; ``job_edges`` then reads the figures of the drawn few hundred,
    and as of T computes their history from their runs only for those)."""
    if not dataset_ids:
        return []
    sql, values = filters(as_of, since, retired)
    return read_rows(
        "SELECT je.job_id, je.dataset_id, je.direction FROM catalog_job_edge je "
        f"WHERE je.dataset_id = ANY(%(ids)s::bigint[]) {sql} "
        "ORDER BY je.dataset_id, je.direction, je.job_id LIMIT %(limit)s",
        {**values, "ids": bigint_array(dataset_ids), "limit": limit},
    )


def job_edges(
    keys: set[tuple[str, int, int]],
    as_of: datetime | None,
    since: datetime | None,
    retired: bool = True,
) -> list[JobEdgeRow]:
    """The job edges with these ``(direction, dataset id, job id)`` keys, with their figures
    (as of T: from their runs up to T) and whether each is current, in a stable order.

    One statement: the jobs' reference runs (catalog.lineage.currency) are a CTE of it, where
    they were a second statement that sent every edge and job id again (ADR 0104)."""
    if not keys:
        return []
    reference, select, values = drawn_sql(keys, as_of, since, retired)
    with connection.cursor() as cursor:
        cursor.execute(reference + select, values)
        return cursor.fetchall()


# The drawn keys that have a job edge in the window, without its figures: the same edges
# as ``job_edges`` reads (every key meets its job's reference run there, which drops none),
# with no reference run, last run or currency read (ADR 0125). Each key is a probe of the
# unique (job, dataset, direction) index (a lateral read, OFFSET 0): joined, the planner
# hashed the whole edge table on the small bench store, a read that grows with the table.
_KEYS = """
SELECT je.id, je.job_id, je.dataset_id, je.direction
FROM unnest(%(jobs)s::bigint[], %(datasets)s::bigint[], %(directions)s::text[])
     AS k(job_id, dataset_id, direction)
CROSS JOIN LATERAL (
    SELECT je.id, je.job_id, je.dataset_id, je.direction FROM catalog_job_edge je
    WHERE je.job_id = k.job_id AND je.dataset_id = k.dataset_id
      AND je.direction = k.direction {filters}
    OFFSET 0
) je
ORDER BY je.dataset_id, je.direction, je.job_id
"""
_NO_FIGURES = (None,) * 7


def edge_keys(
    keys: set[tuple[str, int, int]],
    as_of: datetime | None,
    since: datetime | None,
    retired: bool = True,
) -> list[KeyRow]:
    """``job_edges``' rows with every figure None (first and last seen, the run counts, the
    last run, via, current): which of ``keys`` have a job edge in the window, in the same
    order, for a caller that draws the edges and not their figures (the Marquez mount,
    ``catalog.lineage.drawn``). Reading no figure, it reads no reference run and no
    currency, most of ``job_edges``' statement (ADR 0125)."""
    if not keys:
        return []
    ordered = sorted(keys)
    sql, values = filters(as_of, since, retired)
    with connection.cursor() as cursor:
        cursor.execute(
            _KEYS.format(filters=sql),
            {
                **values,
                "directions": "{" + ",".join(key[0] for key in ordered) + "}",
                "datasets": bigint_array(key[1] for key in ordered),
                "jobs": bigint_array(key[2] for key in ordered),
            },
        )
        return [(*row, *_NO_FIGURES) for row in cursor.fetchall()]


def drawn_sql(
    keys: set[tuple[str, int, int]],
    as_of: datetime | None,
    since: datetime | None,
    retired: bool = True,
) -> tuple[str, str, dict[str, Any]]:
    """``job_edges``' statement in two parts, for it and for a statement that goes on from
    its rows (catalog.lineage.prebuilt): ``WITH reference(...) AS (...)`` and the ``SELECT``
    of the ``JobEdgeRow`` columns, and their values (``jobs``, ``datasets``, ``directions``,
    ``job_set``, ``as_of``, ``since``)."""
    ordered = sorted(keys)
    sql, values = filters(as_of, since, retired)
    reference, reference_values = currency.reference_runs({key[2] for key in ordered}, as_of)
    template = _AS_OF if as_of is not None else _NOW
    return (
        reference,
        # Not formatted after this: the currency column's SQL is not a format string.
        template.format(filters=sql).replace("/*current*/", currency.CURRENT_COLUMN),
        {
            **values,
            **reference_values,
            # Literals, not psycopg's per-element dumpers (core.sql_arrays): a
            # 500-node graph draws ~700 edges, and this was a tenth of its Python.
            "directions": "{" + ",".join(key[0] for key in ordered) + "}",
            "datasets": bigint_array(key[1] for key in ordered),
            "jobs": bigint_array(key[2] for key in ordered),
        },
    )


def job_datasets(
    job_ids: list[int],
    direction: str,
    as_of: datetime | None,
    since: datetime | None,
    limit: int,
    retired: bool = True,
) -> list[int]:
    """Datasets the jobs read (``input``) or wrote (``output``): a job root's first hop (the
    root and its child jobs, ADR 0070)."""
    sql, values = job_datasets_sql(job_ids, direction, as_of, since, limit, retired)
    return [row[0] for row in read_rows(sql, values)]


def job_datasets_sql(
    job_ids: list[int],
    direction: str,
    as_of: datetime | None,
    since: datetime | None,
    limit: int,
    retired: bool = True,
    prefix: str = "",
) -> tuple[str, dict[str, Any]]:
    """``job_datasets``' statement and its values, the names of its own values prefixed by
    ``prefix`` (the walk starts from it, one per direction in one statement, ADR 0133)."""
    sql, values = filters(as_of, since, retired)
    return (
        "SELECT DISTINCT je.dataset_id FROM catalog_job_edge je "
        f"WHERE je.job_id = ANY(%({prefix}jobs)s::bigint[]) "
        f"AND je.direction = %({prefix}direction)s {sql} ORDER BY 1 LIMIT %({prefix}limit)s",
        {
            **values,
            f"{prefix}jobs": bigint_array(job_ids),
            f"{prefix}direction": direction,
            f"{prefix}limit": limit,
        },
    )


def reseen_and_active(
    edge_ids: list[int], job_ids: list[int], start: datetime, end: datetime
) -> tuple[set[int], set[int]]:
    """Of ``edge_ids``, those a run produced again in (start, end]; of ``job_ids``, those
    that produced any job edge in that window (the diff's "removed" rule)."""
    if not edge_ids:
        return set(), set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT er.edge_id FROM catalog_job_edge_run er "
            "WHERE er.edge_id = ANY(%(ids)s) AND er.last_seen > %(start)s "
            "AND er.first_seen <= %(end)s",
            {"ids": edge_ids, "start": start, "end": end},
        )
        reseen = {row[0] for row in cursor.fetchall()}
        cursor.execute(
            "SELECT j.id FROM unnest(%(jobs)s::bigint[]) AS j(id) WHERE EXISTS ("
            " SELECT 1 FROM catalog_job_edge je JOIN catalog_job_edge_run er"
            " ON er.edge_id = je.id WHERE je.job_id = j.id AND er.last_seen > %(start)s"
            " AND er.first_seen <= %(end)s)",
            {"jobs": job_ids, "start": start, "end": end},
        )
        active = {row[0] for row in cursor.fetchall()}
    return reseen, active


def links_of_jobs(job_ids: list[int], limit: int) -> list[JobLink]:
    """Every dataset ``job_ids`` read or wrote (the unique (job, dataset, direction) index),
    capped: Marquez's graph draws each job with all of its inputs and outputs."""
    if not job_ids:
        return []
    # A fixed text (the ids one literal, a text parameter): prepared on a kept connection,
    # planned once there, on its kept cursor; its generic plan is the custom one's (ADR 0134).
    return read_rows(
        "SELECT je.job_id, je.dataset_id, je.direction FROM catalog_job_edge je "
        f"WHERE je.job_id = ANY(%(ids)s::bigint[]) {window.not_retired('je')} "
        "ORDER BY je.job_id, je.dataset_id, je.direction "
        "LIMIT %(limit)s",
        {"ids": bigint_array(job_ids), "limit": limit},
    )
