"""Column edges: (target dataset.field ← source dataset.field, job, transformation), folded.

A column edge is a pure function of its per-run facts (``ColumnLineageFact``): first/last
seen are their min/max, ``run_count`` the number of distinct runs, the last run the one
whose fact was seen last (ties: greater run UUID). A batch *folds* its runs into the
stored edges: it reads only the facts of its own runs, before and after upserting them,
and an (edge, run) pair that did not exist before adds one run; first/last seen only
widen; the last run is the greater of the stored one and the batch's best. So a batch
costs what it touches whatever the edge's history, and a redelivered event (whose pairs
already exist) never counts twice (ADR 0025).

Runs whose facts may have left an edge (their job changed, a dataset they touched was
merged or split) are not folded: every column edge of their (target dataset, job) is
recomputed from all of its facts, whose cost grows with that pair's history; that only
happens on such rare changes. So is a snapshot run's (``Run.emits_snapshots``, ADR 0091)
at each batch with its events: its column edges are its newest window's facts
(``newest_window_sql``), and a newer window takes the older one's away, which a fold,
that only adds, cannot do.
"""

from typing import Any

from django.db import connection

from catalog.models.writes import newest_window_sql
from catalog.services.derivation import retained

# Every (column edge, run) pair of the given runs with the pair's span; ``key_hash`` fixes
# the text columns (it is their digest), so MIN() of each just names the one value.
_RUN_PAIRS = """
SELECT at.dataset_id, src.dataset_id, r.job_id, f.key_hash, f.run_id, r.run_uuid,
       MIN(f.first_seen), MAX(f.last_seen), MIN(f.target_field), MIN(f.source_field),
       MIN(f.transformation_type), MIN(f.transformation_subtype),
       MIN(f.transformation_description), BOOL_OR(f.masking), BOOL_OR(f.dataset_level),
       MIN(f.field_transformation_type), MIN(f.field_transformation_description)
FROM catalog_column_lineage_fact f
JOIN catalog_run r ON r.id = f.run_id
JOIN catalog_dataset_alias at ON at.id = f.target_alias_id
JOIN catalog_dataset_alias src ON src.id = f.source_alias_id
WHERE f.run_id = ANY(%(runs)s) AND r.id = ANY(%(runs)s)  -- both by index (ADR 0025)
GROUP BY at.dataset_id, src.dataset_id, r.job_id, f.key_hash, f.run_id, r.run_uuid
"""
_FOLD = """
INSERT INTO catalog_column_lineage_edge AS e (
    target_id, source_id, job_id, key_hash, target_field, source_field, transformation_type,
    transformation_subtype, transformation_description, masking, dataset_level,
    field_transformation_type, field_transformation_description, first_seen, last_seen,
    last_run_id, run_count
)
SELECT * FROM unnest(
    %s::bigint[], %s::bigint[], %s::bigint[], %s::bytea[], %s::text[], %s::text[], %s::text[],
    %s::text[], %s::text[], %s::bool[], %s::bool[], %s::text[], %s::text[],
    %s::timestamptz[], %s::timestamptz[], %s::bigint[], %s::int[]
)
ON CONFLICT (target_id, source_id, job_id, key_hash) DO UPDATE SET
    first_seen = LEAST(e.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(e.last_seen, EXCLUDED.last_seen),
    run_count = e.run_count + EXCLUDED.run_count,
    last_run_id = CASE
        WHEN e.last_run_id IS NULL OR EXCLUDED.last_seen > e.last_seen
          OR (EXCLUDED.last_seen = e.last_seen
              AND (SELECT run_uuid FROM catalog_run WHERE id = EXCLUDED.last_run_id)
                  >= (SELECT run_uuid FROM catalog_run WHERE id = e.last_run_id))
        THEN EXCLUDED.last_run_id ELSE e.last_run_id END
"""
_FACTS = """
SELECT run_id, target_alias_id, source_alias_id, key_hash
FROM catalog_column_lineage_fact WHERE run_id = ANY(%s)
"""
_ALIAS_DATASETS = "SELECT id, dataset_id FROM catalog_dataset_alias WHERE id = ANY(%s)"
# The (target dataset, job) pairs whose column edges a full recompute rebuilds.
_KEYS = """
SELECT DISTINCT at.dataset_id, r.job_id
FROM catalog_column_lineage_fact f
JOIN catalog_run r ON r.id = f.run_id
JOIN catalog_dataset_alias at ON at.id = f.target_alias_id
WHERE f.run_id = ANY(%s)
"""
_OLD_KEYS = """
SELECT DISTINCT at.dataset_id, k.job_id
FROM unnest(%s::bigint[], %s::bigint[]) AS k(run_id, job_id)
JOIN catalog_column_lineage_fact f ON f.run_id = k.run_id
JOIN catalog_dataset_alias at ON at.id = f.target_alias_id
"""
_DELETE = """
DELETE FROM catalog_column_lineage_edge ce
USING unnest(%s::bigint[], %s::bigint[]) AS k(target_id, job_id)
WHERE ce.target_id = k.target_id AND ce.job_id = k.job_id
"""
_RECOMPUTE = """
INSERT INTO catalog_column_lineage_edge (
    target_id, source_id, job_id, key_hash, target_field, source_field, transformation_type,
    transformation_subtype, transformation_description, masking, dataset_level,
    field_transformation_type, field_transformation_description, first_seen, last_seen,
    last_run_id, run_count
)
SELECT at.dataset_id, src.dataset_id, r.job_id, f.key_hash, f.target_field, f.source_field,
       f.transformation_type, f.transformation_subtype, f.transformation_description, f.masking,
       f.dataset_level, f.field_transformation_type, f.field_transformation_description,
       MIN(f.first_seen), MAX(f.last_seen),
       (ARRAY_AGG(f.run_id ORDER BY f.last_seen DESC, r.run_uuid DESC))[1],
       COUNT(DISTINCT f.run_id)
FROM unnest(%s::bigint[], %s::bigint[]) AS k(target_id, job_id)
JOIN catalog_dataset_alias at ON at.dataset_id = k.target_id
JOIN catalog_column_lineage_fact f ON f.target_alias_id = at.id
JOIN catalog_run r ON r.id = f.run_id AND r.job_id = k.job_id
JOIN catalog_dataset_alias src ON src.id = f.source_alias_id
WHERE {newest}
GROUP BY at.dataset_id, src.dataset_id, r.job_id, f.key_hash, f.target_field, f.source_field,
         f.transformation_type, f.transformation_subtype, f.transformation_description, f.masking,
         f.dataset_level, f.field_transformation_type, f.field_transformation_description
""".replace("{newest}", newest_window_sql("f.run_id", "f.last_seen"))

Pair = tuple[int, int, int, bytes, int]  # target dataset, source dataset, job, key, run
FactKey = tuple[int, int, int, bytes]  # run, target alias, source alias, key


def facts_before(run_ids: list[int]) -> set[FactKey]:
    """The column facts of ``run_ids`` as stored now (read before an upsert), by alias.

    By alias, not by dataset: the batch reads them before it locks its aliases, and
    ``fold`` maps them to datasets under those locks, when the datasets cannot move.
    """
    if not run_ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(_FACTS, [run_ids])
        return {(run, target, source, bytes(key)) for run, target, source, key in cursor}


def _pairs(facts: set[FactKey], jobs: dict[int, int]) -> set[Pair]:
    """``facts`` as (column edge, run) pairs through their aliases' current datasets."""
    if not facts:
        return set()
    aliases = sorted({alias for _, target, source, _ in facts for alias in (target, source)})
    with connection.cursor() as cursor:
        cursor.execute(_ALIAS_DATASETS, [aliases])
        datasets = dict(cursor.fetchall())
    return {
        (datasets[target], datasets[source], jobs[run], key, run)
        for run, target, source, key in facts
        if run in jobs
    }


def _pair(row: tuple[Any, ...]) -> Pair:
    return (row[0], row[1], row[2], bytes(row[3]), row[4])


def fold(run_ids: list[int], before: set[FactKey]) -> None:
    """Fold the facts of ``run_ids`` (whose facts before the batch were ``before``)."""
    if not run_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(_RUN_PAIRS, {"runs": run_ids})
        rows = cursor.fetchall()
    old = _pairs(before, {row[4]: row[2] for row in rows})
    edges: dict[tuple[int, int, int, bytes], list[Any]] = {}
    for row in rows:
        pair = _pair(row)
        key = pair[:4]
        run_uuid, first, last = row[5], row[6], row[7]
        new = 0 if pair in old else 1
        edge = edges.get(key)
        if edge is None:
            # first, last, (best last_seen, best uuid, best run), added, text columns
            edges[key] = [first, last, (last, run_uuid, pair[4]), new, row[8:17]]
        else:
            edge[0], edge[1] = min(edge[0], first), max(edge[1], last)
            edge[2] = max(edge[2], (last, run_uuid, pair[4]))
            edge[3] += new
    if not edges:
        return
    keys = sorted(edges)  # lock order between concurrent workers
    columns: list[list[Any]] = [[] for _ in range(17)]
    for key in keys:
        first, last, best, added, text = edges[key]
        values = [*key, *text, first, last, best[2], added]
        for column, value in zip(columns, values, strict=True):
            column.append(value)
    with connection.cursor() as cursor:
        cursor.execute(_FOLD, columns)


def recompute(run_ids: list[int], old_jobs: dict[int, int] | None = None) -> None:
    """Rebuild from all their facts the column edges of every (target dataset, job) that
    ``run_ids`` touch, and those of the previous jobs of runs that moved (``old_jobs``)."""
    with connection.cursor() as cursor:
        keys: set[tuple[int, int]] = set()
        if run_ids:
            cursor.execute(_KEYS, [run_ids])
            keys.update(cursor.fetchall())
        if old_jobs:
            cursor.execute(_OLD_KEYS, [list(old_jobs), list(old_jobs.values())])
            keys.update(cursor.fetchall())
        if keys:
            ordered = sorted(keys)
            targets, jobs = [key[0] for key in ordered], [key[1] for key in ordered]
            cursor.execute(_DELETE, [targets, jobs])
            cursor.execute(_RECOMPUTE, [targets, jobs])
            retained.add_column_edges(cursor, targets, jobs)  # removed runs' part (ADR 0079)
