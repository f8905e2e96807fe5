"""Static (design-time) lineage in the graph: reads over a job's current JobEvent
declaration (``catalog.models.static``), used by ``catalog.lineage.graph`` beside the observed
edges (ADR 0061).

Declarations point at aliases; every read here goes through the aliases' current
datasets, so merges need no upkeep. A static edge is the job's current declaration: it
has no runs, its first and last seen are the declaration's time, and it is in the graph
as of T when it was declared at or before T. ``since`` filters observed edges only: a
declaration holds until a newer JobEvent of the job replaces it, however old it is.
"""

from datetime import datetime
from typing import Any

from django.db import connection

from catalog.lineage import job_edges, window
from core.sql_arrays import bigint_array

LINEAGES = ("all", "observed", "static")

# (direction, dataset id, job id) → (declared at, via)
Declared = dict[tuple[str, int, int], tuple[datetime, str]]


def _paired(job: str, source: str, target: str) -> str:
    """The declaration of ``job`` links dataset ``source`` to ``target``: its ``lineage``
    facet's per-target pairs say so when it has any, else every input feeds every output
    (ADR 0102). One index probe for a job without pairs."""
    return f"""(NOT EXISTS (SELECT 1 FROM catalog_static_dataset_pair p WHERE p.job_id = {job})
        OR EXISTS (SELECT 1 FROM catalog_static_dataset_pair p
                   JOIN catalog_dataset_alias pa ON pa.id = p.source_alias_id
                   JOIN catalog_dataset_alias pb ON pb.id = p.target_alias_id
                   WHERE p.job_id = {job} AND pa.dataset_id = {source}
                     AND pb.dataset_id = {target}))"""


def walk_step(upstream: bool, as_of: datetime | None) -> tuple[str, dict[str, Any]]:
    """The walk's static step from ``w.dataset_id`` (a LATERAL subquery selecting
    ``next_id``): upstream from a job's declared output to its declared inputs, downstream
    the other way."""
    here, there = ("output", "input") if upstream else ("input", "output")
    filters, values = window.declared(as_of, "l", ("a2.dataset_id",))
    ends = ("a2.dataset_id", "w.dataset_id") if upstream else ("w.dataset_id", "a2.dataset_id")
    # The jobs declaring this dataset first (OFFSET 0 keeps the planner from joining a
    # job's declared sides to each other before it knows the dataset: with 1,000 inputs
    # and outputs, a million rows per step; issue 38), then their far side.
    sql = f"""SELECT a2.dataset_id AS next_id
        FROM (SELECT DISTINCT s1.job_id FROM catalog_dataset_alias a1
              JOIN catalog_static_dataset s1 ON s1.alias_id = a1.id AND s1.direction = '{here}'
              WHERE a1.dataset_id = w.dataset_id OFFSET 0) AS j
        JOIN catalog_static_lineage l ON l.job_id = j.job_id
        JOIN catalog_static_dataset s2 ON s2.job_id = j.job_id AND s2.direction = '{there}'
        JOIN catalog_dataset_alias a2 ON a2.id = s2.alias_id
        WHERE a2.dataset_id IS NOT NULL{filters}
          AND {_paired("j.job_id", *ends)}"""
    return sql, values


# Declared pairs, costing what they draw (issue 38): a job declaring 5,000 inputs and
# 5,000 outputs states 25 million pairs, and sorting them all took most of a minute. The
# inputs that can be a pair's source are sorted (as many as the declarations touching the
# datasets), and each one's outputs are read in order in a LATERAL subquery, so the pairs
# come out in (source, job, target) order and the LIMIT stops the loop after ``limit``.
_PAIRS = """
SELECT i.source, o.target, i.job_id, ''
FROM (
    SELECT DISTINCT ai.dataset_id AS source, si.job_id
    FROM catalog_static_dataset si
    JOIN catalog_static_lineage l ON l.job_id = si.job_id
    JOIN catalog_dataset_alias ai ON ai.id = si.alias_id
    WHERE si.direction = 'input' AND ai.dataset_id IS NOT NULL AND {sources} {filters}
    ORDER BY 1, 2
) AS i
CROSS JOIN LATERAL (
    SELECT DISTINCT ao.dataset_id AS target
    FROM catalog_static_dataset so
    JOIN catalog_dataset_alias ao ON ao.id = so.alias_id
    WHERE so.job_id = i.job_id AND so.direction = 'output' AND {where}
    ORDER BY 1 LIMIT %(limit)s
) AS o
LIMIT %(limit)s
"""


def edges(
    dataset_ids: list[int], root_job: int | None, as_of: datetime | None, limit: int
) -> list[tuple]:
    """Declared dataset → dataset pairs among ``dataset_ids`` (and a root job's own), as
    ``(source_id, target_id, job_id, lineage_type)`` rows like the observed ones, the
    first ``limit`` by (source, job, target)."""
    if not dataset_ids:
        return []
    filters, values = window.declared(as_of, "l", ("ai.dataset_id",))
    where = job_edges.pair_condition("i.source", "ao.dataset_id", "i.job_id", root_job)
    where += window.datasets_not_retired("ao.dataset_id")
    where += " AND " + _paired("i.job_id", "i.source", "ao.dataset_id")
    sources = "ai.dataset_id = ANY(%(ids)s::bigint[])"
    if root_job is not None:  # the root job's pairs touch the datasets from either end
        sources = f"({sources} OR si.job_id = %(job)s)"
    with connection.cursor() as cursor:
        cursor.execute(
            _PAIRS.format(where=where, sources=sources, filters=filters),
            {**values, "ids": bigint_array(dataset_ids), "job": root_job, "limit": limit},
        )
        return cursor.fetchall()


_LINKS = """
SELECT DISTINCT s.job_id, a.dataset_id, s.direction
FROM catalog_dataset_alias a
JOIN catalog_static_dataset s ON s.alias_id = a.id
JOIN catalog_static_lineage l ON l.job_id = s.job_id
WHERE a.dataset_id = ANY(%(ids)s::bigint[]) {filters}
ORDER BY a.dataset_id, s.direction, s.job_id LIMIT %(limit)s
"""


def job_links(dataset_ids: list[int], as_of: datetime | None, limit: int) -> list[tuple]:
    """Which jobs declare ``dataset_ids`` as inputs or outputs: ``(job, dataset, direction)``."""
    if not dataset_ids:
        return []
    filters, values = window.declared(as_of, "l", ("a.dataset_id",))
    with connection.cursor() as cursor:
        cursor.execute(
            _LINKS.format(filters=filters),
            {**values, "ids": bigint_array(dataset_ids), "limit": limit},
        )
        return cursor.fetchall()


def job_datasets(
    job_ids: list[int], direction: str, as_of: datetime | None, limit: int
) -> list[int]:
    """The datasets the jobs declare reading (``input``) or writing (``output``)."""
    filters, values = window.declared(as_of, "l", ("a.dataset_id",))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT a.dataset_id FROM catalog_static_dataset s "
            "JOIN catalog_static_lineage l ON l.job_id = s.job_id "
            "JOIN catalog_dataset_alias a ON a.id = s.alias_id "
            "WHERE s.job_id = ANY(%(jobs)s::bigint[]) AND s.direction = %(direction)s "
            f"AND a.dataset_id IS NOT NULL {filters} ORDER BY 1 LIMIT %(limit)s",
            {**values, "jobs": bigint_array(job_ids), "direction": direction, "limit": limit},
        )
        return [row[0] for row in cursor.fetchall()]


def has_more_sql(upstream: bool, as_of: datetime | None) -> tuple[str, dict[str, Any]]:
    """An EXISTS condition on dataset ``d``: a job not in ``%(jobs)s`` declares it on the
    walk's far side (writes it, upstream; reads it, downstream)."""
    filters, values = window.declared(as_of, "l")
    direction = "output" if upstream else "input"
    sql = (
        "EXISTS (SELECT 1 FROM catalog_dataset_alias a JOIN catalog_static_dataset s "
        f"ON s.alias_id = a.id AND s.direction = '{direction}' "
        "JOIN catalog_static_lineage l ON l.job_id = s.job_id "
        f"WHERE a.dataset_id = d AND NOT (s.job_id = ANY(%(jobs)s::bigint[])){filters})"
    )
    return sql, values


def declared(keys: set[tuple[str, int, int]], as_of: datetime | None) -> Declared:
    """Of the ``(direction, dataset id, job id)`` keys, those a declaration holds, with its
    time and how the dataset is named there (``""`` or ``column_lineage``; a declared one
    wins)."""
    if not keys:
        return {}
    ordered = sorted(keys)
    filters, values = window.declared(as_of, "l", ("a.dataset_id",))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.direction, a.dataset_id, s.job_id, l.declared_at, MIN(s.via) "
            "FROM unnest(%(directions)s::text[], %(datasets)s::bigint[], %(jobs)s::bigint[]) "
            "AS k(direction, dataset_id, job_id) "
            "JOIN catalog_static_dataset s ON s.job_id = k.job_id AND s.direction = k.direction "
            "JOIN catalog_dataset_alias a ON a.id = s.alias_id AND a.dataset_id = k.dataset_id "
            f"JOIN catalog_static_lineage l ON l.job_id = s.job_id WHERE true {filters} "
            "GROUP BY 1, 2, 3, 4",
            {
                **values,
                "directions": "{" + ",".join(key[0] for key in ordered) + "}",
                "datasets": bigint_array(key[1] for key in ordered),
                "jobs": bigint_array(key[2] for key in ordered),
            },
        )
        return {(row[0], row[1], row[2]): (row[3], row[4]) for row in cursor.fetchall()}


def links(
    dataset_ids: list[int],
    observed: bool,
    static: bool,
    as_of: datetime | None,
    since: datetime | None,
    limit: int,
    retired: bool = True,
) -> list[job_edges.JobLink]:
    """The (job, dataset, direction) links of ``dataset_ids``, observed and/or declared, in
    the order of ``job_edges.job_links``, capped."""
    found: list[job_edges.JobLink] = []
    if observed:
        found = job_edges.job_links(dataset_ids, as_of, since, limit, retired)
    declared_only: list[job_edges.JobLink] = []
    if static:
        known = set(found)
        declared_only = [link for link in job_links(dataset_ids, as_of, limit) if link not in known]
    if observed and not declared_only:
        # Already in this order and capped (job_edges.job_links): a sort of the ~1,500 links
        # of a 500-node graph was a tenth of its Python (issue 42).
        return found
    return sorted(found + declared_only, key=lambda link: (link[1], link[2], link[0]))[:limit]


def add_declared_only(
    aggregated: dict[tuple[str, int, int], dict[str, Any]],
    declared: Declared,
    drawn: set[tuple[str, int, int]],
    chosen: set[int],
) -> list[tuple[str, int, int]]:
    """Add to the graph's ``aggregated`` edges those only a declaration holds (no runs; seen
    when declared); returns their keys."""
    added = []
    for key, (declared_at, via) in sorted(declared.items()):
        if key in aggregated or key not in drawn or key[1] not in chosen:
            continue
        direction, dataset_id, job_id = key
        source, target = f"dataset:{dataset_id}", f"job:{job_id}"
        if direction == "output":
            source, target = target, source
        aggregated[key] = {
            "id": f"{source}->{target}",
            "kind": direction,
            "source": source,
            "target": target,
            "first_seen": declared_at,
            "last_seen": declared_at,
            "last_run_id": None,
            "run_count": 0,
            "completed_run_count": 0,
            "lineage_types": set(),
            # How the declaration names the dataset; no run produced it, so not current
            # (ADR 0060's currency is about the job's runs).
            "via": via,
            "current": False,
            "observed": False,
            "static": True,
        }
        added.append(key)
    return added
