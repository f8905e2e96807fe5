"""Per-run facts (datasets read/written, column lineage) and the edges aggregated from them.

Facts are upserted with LEAST/GREATEST so that they only ever grow. Edges are then
*recomputed* for the touched runs from the facts: a run's edges are a pure function of its
datasets and its job, and an edge's times and counts a pure function of its runs. That is
what makes the result independent of event order and batching (ADR 0023).
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.db import connection

from catalog.facets import lineage_catalog_edge
from catalog.models.writes import newest_window_sql, write_sql
from catalog.services.derivation import column_edges, retained
from catalog.services.derivation.edge_runs import EdgeRuns, columns_of
from catalog.services.derivation.records import AliasKey, Facts, JobKey, RunKey

_UPSERT_RUN_DATASETS = """
INSERT INTO catalog_run_dataset (
    run_id, alias_id, direction, first_seen, last_seen, via, confirmed
)
SELECT * FROM unnest(
    %s::bigint[], %s::bigint[], %s::text[], %s::timestamptz[], %s::timestamptz[], %s::text[],
    %s::bool[]
)
ON CONFLICT (run_id, alias_id, direction) DO UPDATE SET
    first_seen = LEAST(catalog_run_dataset.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(catalog_run_dataset.last_seen, EXCLUDED.last_seen),
    -- "" (listed in the event's inputs/outputs) beats "column_lineage": a join, so the
    -- row says the same whatever order the run's events came in (ADR 0060).
    via = LEAST(catalog_run_dataset.via, EXCLUDED.via),
    -- Named by a write event in any batch stays named (catalog.models.writes): a join too.
    confirmed = catalog_run_dataset.confirmed OR EXCLUDED.confirmed
"""
# The ``lineage`` facet's per-target pairs (ADR 0102): accumulated like the datasets.
_UPSERT_RUN_PAIRS = """
INSERT INTO catalog_run_dataset_pair (
    run_id, source_alias_id, target_alias_id, first_seen, last_seen
)
SELECT * FROM unnest(
    %s::bigint[], %s::bigint[], %s::bigint[], %s::timestamptz[], %s::timestamptz[]
)
ON CONFLICT (run_id, source_alias_id, target_alias_id) DO UPDATE SET
    first_seen = LEAST(catalog_run_dataset_pair.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(catalog_run_dataset_pair.last_seen, EXCLUDED.last_seen)
"""
_UPSERT_JOB_DATASETS = """
INSERT INTO catalog_job_dataset (job_id, alias_id, direction, first_seen, last_seen, declared)
SELECT * FROM unnest(
    %s::bigint[], %s::bigint[], %s::text[], %s::timestamptz[], %s::timestamptz[], %s::bool[]
)
ON CONFLICT (job_id, alias_id, direction) DO UPDATE SET
    first_seen = LEAST(catalog_job_dataset.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(catalog_job_dataset.last_seen, EXCLUDED.last_seen),
    declared = catalog_job_dataset.declared OR EXCLUDED.declared
"""
_INSERT_EVENT_DATASETS = """
INSERT INTO catalog_event_dataset (alias_id, event_id, role)
SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::text[])
ON CONFLICT DO NOTHING
"""
_UPSERT_COLUMN_FACTS = """
INSERT INTO catalog_column_lineage_fact (
    run_id, target_alias_id, source_alias_id, key_hash, target_field, source_field,
    transformation_type, transformation_subtype, transformation_description, masking,
    dataset_level, field_transformation_type, field_transformation_description,
    first_seen, last_seen
)
SELECT * FROM unnest(
    %s::bigint[], %s::bigint[], %s::bigint[], %s::bytea[], %s::text[], %s::text[],
    %s::text[], %s::text[], %s::text[], %s::bool[], %s::bool[], %s::text[], %s::text[],
    %s::timestamptz[], %s::timestamptz[]
)
ON CONFLICT (run_id, target_alias_id, source_alias_id, key_hash) DO UPDATE SET
    first_seen = LEAST(catalog_column_lineage_fact.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(catalog_column_lineage_fact.last_seen, EXCLUDED.last_seen)
"""
_INSERT_METADATA = """
INSERT INTO catalog_metadata_record (
    event_id, resource, subject, action, timestamp, additional_values
)
SELECT e, r, s, a, t, v::jsonb FROM unnest(
    %s::bigint[], %s::text[], %s::text[], %s::text[], %s::timestamptz[], %s::text[]
) AS u(e, r, s, a, t, v)
ON CONFLICT (event_id) DO NOTHING
"""
# A run's edges: (input dataset, output dataset) pairs of the run (all of them, or the
# ``lineage`` facet's when the run has some, ADR 0102), through its job, with
# what the edge keeps of its last run (UUID for the order, edge API facet) and whether the
# run wrote the output (ADR 0069: under any of the dataset's aliases). At most ``cap`` pairs
# a run, the first by (input, output) dataset id, so the rows an event makes are bounded
# whatever it names (issue 38): inputs are cut to the fewest whose pairs reach the cap
# before the join, and the pairs left out are counted on the run (``lineage_edges_cut``,
# written only when it changes; a data-modifying CTE runs whether or not it is read), and
# its job is marked (``Job.lineage_edges_cut``, once: the graph reads it, ADR 0080).
_RUN_EDGES = """
WITH i AS MATERIALIZED (
    SELECT d.run_id, a.dataset_id, MIN(d.first_seen) AS first_seen,
           MAX(d.last_seen) AS last_seen,
           ROW_NUMBER() OVER (PARTITION BY d.run_id ORDER BY a.dataset_id) AS n
    FROM catalog_run_dataset d JOIN catalog_dataset_alias a ON a.id = d.alias_id
    WHERE d.run_id = ANY(%(runs)s) AND d.direction = 'input'
    GROUP BY d.run_id, a.dataset_id
    HAVING {newest_input}
), o AS MATERIALIZED (
    SELECT o.run_id, a.dataset_id, MIN(o.first_seen) AS first_seen,
           MAX(o.last_seen) AS last_seen, BOOL_OR({writes}) AS writes,
           ROW_NUMBER() OVER (PARTITION BY o.run_id ORDER BY a.dataset_id) AS n,
           COUNT(*) OVER (PARTITION BY o.run_id) AS m
    FROM catalog_run_dataset o JOIN catalog_dataset_alias a ON a.id = o.alias_id
    JOIN catalog_run r ON r.id = o.run_id
    -- The same condition on every per-run table, so the planner looks these runs up by
    -- index instead of hashing a whole table that grows with history (ADR 0025).
    WHERE o.run_id = ANY(%(runs)s) AND r.id = ANY(%(runs)s) AND o.direction = 'output'
    GROUP BY o.run_id, a.dataset_id, r.id
    HAVING {newest_output}
), p AS MATERIALIZED (
    -- The ``lineage`` facet's per-target pairs of these runs, by dataset (ADR 0102): a run
    -- with any has them as its edges instead of its inputs x outputs. Empty (one index
    -- probe) for runs without the facet: they pay no statement.
    SELECT DISTINCT pr.run_id, sa.dataset_id AS source, ta.dataset_id AS target
    FROM catalog_run_dataset_pair pr
    JOIN catalog_dataset_alias sa ON sa.id = pr.source_alias_id
    JOIN catalog_dataset_alias ta ON ta.id = pr.target_alias_id
    WHERE pr.run_id = ANY(%(runs)s)
), pp AS MATERIALIZED (
    -- Through the run's inputs and outputs, so the newest window (ADR 0091) and the writes
    -- rule hold for pairs as for the product; cut at the same cap, by (input, output).
    SELECT i.run_id, i.dataset_id AS source, o.dataset_id AS target,
           GREATEST(i.first_seen, o.first_seen) AS first_seen,
           GREATEST(i.last_seen, o.last_seen) AS last_seen, o.writes,
           ROW_NUMBER() OVER (PARTITION BY i.run_id ORDER BY i.dataset_id, o.dataset_id) AS n
    FROM p JOIN i ON i.run_id = p.run_id AND i.dataset_id = p.source
    JOIN o ON o.run_id = p.run_id AND o.dataset_id = p.target
), sizes AS (
    SELECT x.id, CASE WHEN EXISTS (SELECT 1 FROM p WHERE p.run_id = x.id)
                      THEN (SELECT COUNT(*) FROM pp WHERE pp.run_id = x.id)
                      ELSE (SELECT COUNT(*) FROM i WHERE i.run_id = x.id)
                           * (SELECT COUNT(*) FROM o WHERE o.run_id = x.id) END AS pairs
    FROM unnest(%(runs)s::bigint[]) AS x(id)
), cut AS (
    UPDATE catalog_run r SET lineage_edges_cut = GREATEST(s.pairs - %(cap)s, 0)
    FROM sizes s
    WHERE r.id = s.id AND r.lineage_edges_cut <> GREATEST(s.pairs - %(cap)s, 0)
), job_cut AS (
    UPDATE catalog_job j SET lineage_edges_cut = true
    FROM sizes s JOIN catalog_run r ON r.id = s.id
    WHERE r.id = ANY(%(runs)s) AND s.pairs > %(cap)s AND j.id = r.job_id
      AND NOT j.lineage_edges_cut
)
SELECT i.run_id, i.dataset_id, o.dataset_id, r.job_id,
       GREATEST(i.first_seen, o.first_seen), GREATEST(i.last_seen, o.last_seen),
       r.run_uuid, o.writes, {lineage_type}, {pipeline}
FROM (SELECT DISTINCT run_id, m FROM o) AS oc
JOIN i ON i.run_id = oc.run_id AND i.n <= (%(cap)s + oc.m - 1) / oc.m
JOIN o ON o.run_id = i.run_id AND (i.n - 1) * o.m + o.n <= %(cap)s
JOIN catalog_run r ON r.id = i.run_id
WHERE r.id = ANY(%(runs)s) AND NOT EXISTS (SELECT 1 FROM p WHERE p.run_id = i.run_id)
UNION ALL
SELECT pp.run_id, pp.source, pp.target, r.job_id, pp.first_seen, pp.last_seen,
       r.run_uuid, pp.writes, {lineage_type}, {pipeline}
FROM pp JOIN catalog_run r ON r.id = pp.run_id
WHERE r.id = ANY(%(runs)s) AND pp.n <= %(cap)s
""".format(
    writes=write_sql("r", "o"),
    newest_input=newest_window_sql("d.run_id", "MAX(d.last_seen)"),
    newest_output=newest_window_sql("o.run_id", "MAX(o.last_seen)"),
    lineage_type=lineage_catalog_edge.sql_value("lineage_type"),
    pipeline=lineage_catalog_edge.sql_value("pipeline"),
)
_UPSERT_EDGES = """
INSERT INTO catalog_lineage_edge (
    source_id, target_id, job_id, first_seen, last_seen, run_count, lineage_type, pipeline
)
SELECT s, t, j, f, l, 0, '', '' FROM unnest(
    %s::bigint[], %s::bigint[], %s::bigint[], %s::timestamptz[], %s::timestamptz[]
) AS u(s, t, j, f, l)
ON CONFLICT (source_id, target_id, job_id) DO UPDATE SET run_count = catalog_lineage_edge.run_count
RETURNING id, source_id, target_id, job_id
"""
# The lineage edge takes its lineage type and pipeline (edge API events) from its last run.
LINEAGE_EDGE_RUNS = EdgeRuns(
    "catalog_lineage_edge",
    "catalog_lineage_edge_run",
    carried=(
        ("lineage_type", lineage_catalog_edge.sql_value("lineage_type")),
        ("pipeline", lineage_catalog_edge.sql_value("pipeline")),
    ),
    summary=retained.EDGE_SUMMARY,
)


def upsert_spans(
    cursor: Any, sql: str, items: list[tuple[tuple[Any, ...], datetime, datetime]]
) -> dict[tuple[Any, ...], int]:
    """Upsert one edge per key with the span (earliest first, latest last) of its items.

    ``sql`` takes the key's three columns and first/last as arrays and returns
    ``(id, *key)``; the answer maps each key to its edge id. Keys go in sorted order, so
    concurrent batches lock the same edges in the same order.
    """
    spans: dict[tuple[Any, ...], tuple[datetime, datetime]] = {}
    for key, first, last in items:
        known = spans.get(key)
        spans[key] = (first, last) if known is None else (min(known[0], first), max(known[1], last))
    if not spans:
        return {}
    keys = sorted(spans)
    cursor.execute(
        sql,
        [*columns_of(keys, 3), [spans[key][0] for key in keys], [spans[key][1] for key in keys]],
    )
    return {tuple(row[1:]): row[0] for row in cursor.fetchall()}


@dataclass
class StoredFacts:
    """What the per-run upserts changed: runs whose edges may change, and for the runs that
    got column-lineage facts, those facts as they were before (by alias)."""

    touched: set[int] = field(default_factory=set)
    column_runs: list[int] = field(default_factory=list)
    column_before: set[column_edges.FactKey] = field(default_factory=set)

    def __ior__(self, other: "StoredFacts") -> "StoredFacts":
        self.touched |= other.touched
        self.column_runs = sorted({*self.column_runs, *other.column_runs})
        self.column_before |= other.column_before
        return self


def store_run_facts(
    facts: Facts,
    run_ids: dict[RunKey, int],
    alias_ids: dict[AliasKey, int],
    keys: list[RunKey],
) -> StoredFacts:
    """Upsert the datasets read and written and the column facts of the runs ``keys``.

    Rows of these runs only: the caller holds their runId locks (jobs_runs.split_runs), so
    no other batch writes them meanwhile, and this belongs to the batch's free part. Column
    facts are read before their upsert by alias (``column_edges.facts_before``); the fold
    maps them to datasets once the aliases are locked.
    """
    wanted = set(keys)
    with connection.cursor() as cursor:
        via, confirmed = facts.run_dataset_via, facts.confirmed_outputs
        rows = sorted(
            (
                run_ids[run],
                alias_ids[alias],
                direction,
                first,
                last,
                via.get(key, ""),
                key in confirmed,
            )
            for key, (first, last) in facts.run_datasets.items()
            for run, alias, direction in [key]
            if run in wanted
        )
        if rows:
            cursor.execute(_UPSERT_RUN_DATASETS, columns_of(rows, 7))
        pair_rows = sorted(
            (run_ids[run], alias_ids[source], alias_ids[target], first, last)
            for (run, source, target), (first, last) in facts.run_pairs.items()
            if run in wanted
        )
        if pair_rows:  # only runs with the facet (and the setting on) pay this statement
            cursor.execute(_UPSERT_RUN_PAIRS, columns_of(pair_rows, 5))
        column_rows = sorted(
            (
                run_ids[run],
                alias_ids[target],
                alias_ids[source],
                digest,
                values["target_field"],
                values["source_field"],
                values["transformation_type"],
                values["transformation_subtype"],
                values["transformation_description"],
                values["masking"],
                values["dataset_level"],
                values["field_transformation_type"],
                values["field_transformation_description"],
                values["first_seen"],
                values["last_seen"],
            )
            for (run, target, source, digest), values in facts.column_facts.items()
            if run in wanted
        )
        column_runs = sorted({row[0] for row in column_rows})
        before = column_edges.facts_before(column_runs)
        if column_rows:
            cursor.execute(_UPSERT_COLUMN_FACTS, columns_of(column_rows, 15))
    return StoredFacts({row[0] for row in rows} | set(column_runs), column_runs, before)


def store_event_datasets(facts: Facts, alias_ids: dict[AliasKey, int]) -> None:
    """Insert which events named which aliases: rows of the batch's own events only."""
    rows = sorted(
        (alias_ids[alias], event_id, role) for alias, event_id, role in facts.event_datasets
    )
    if rows:
        with connection.cursor() as cursor:
            cursor.execute(_INSERT_EVENT_DATASETS, columns_of(rows, 3))


def store_job_datasets(
    facts: Facts, job_ids: dict[JobKey, int], alias_ids: dict[AliasKey, int]
) -> None:
    """Upsert the per-job dataset rows, shared with every batch of the job (contended)."""
    rows = sorted(
        (job_ids[job], alias_ids[alias], direction, first, last, declared)
        for (job, alias, direction), (first, last, declared) in facts.job_datasets.items()
    )
    if rows:
        with connection.cursor() as cursor:
            cursor.execute(_UPSERT_JOB_DATASETS, columns_of(rows, 6))


def store_metadata(facts: Facts) -> None:
    if not facts.metadata:
        return
    rows = sorted(
        (
            record["event_id"],
            record["resource"],
            record["subject"],
            record["action"],
            record["timestamp"],
            orjson.dumps(record["additional_values"]).decode(),
        )
        for record in facts.metadata
    )
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_METADATA, columns_of(rows, 6))


def recompute_edges(
    run_ids: set[int],
    old_jobs: dict[int, int] | None = None,
    stored: StoredFacts | None = None,
    rebuild: set[int] | None = None,
    snapshots: set[int] | None = None,
) -> None:
    """Rebuild the edges of ``run_ids`` from their facts, then the touched aggregates.

    ``old_jobs`` maps runs whose job changed to their previous job, whose column edges are
    recomputed too. With ``stored`` (a batch's ``store_run_facts``), column edges are folded
    for its runs except those in ``rebuild`` (moved or merged) and ``snapshots`` (runs
    that emit snapshots: a newer window can take column edges away), whose (target
    dataset, job) column edges are recomputed from all their facts; without it (a
    steward's split), those of every run in ``run_ids`` are.
    """
    if not run_ids:
        return
    runs = sorted(run_ids)
    with connection.cursor() as cursor:
        cursor.execute(_RUN_EDGES, {"runs": runs, "cap": settings.LINEAGE["MAX_RUN_EDGES"]})
        pairs: list[tuple[Any, ...]] = cursor.fetchall()
        edge_ids = upsert_spans(
            cursor,
            _UPSERT_EDGES,
            [
                ((source, target, job), first, last)
                for _, source, target, job, first, last, *_ in pairs
            ],
        )
        cursor.execute(LINEAGE_EDGE_RUNS.delete_runs, [runs])
        before = {(edge, run): done for edge, run, done in cursor.fetchall()}
        rows = sorted(
            (edge_ids[(source, target, job)], run, first, last, *last_run)
            for run, source, target, job, first, last, *last_run in pairs
        )
        # Edges that lost a run (its job changed, datasets merged) are recomputed in full;
        # every other touched edge folds in what this batch added.
        LINEAGE_EDGE_RUNS.replace(cursor, rows, before)
    if stored is None:
        column_edges.recompute(runs, old_jobs)
        return
    # Runs that moved job or touched a merged dataset may have left column edges, and so
    # may a snapshot run's newer window: those edges are recomputed; every other run with
    # new column facts folds in.
    full = set(run_ids) & ((rebuild or set()) | (snapshots or set()))
    fold_runs = [run for run in stored.column_runs if run not in full]
    column_edges.fold(fold_runs, stored.column_before)
    column_edges.recompute(sorted(full), old_jobs)
