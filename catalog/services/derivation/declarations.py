"""Static (design-time) lineage from JobEvents: read into facts, then the job's
declaration replaced when the batch holds a newer one (ADR 0061).

A JobEvent that carries ``inputs`` or ``outputs`` is a declaration: its inputs, outputs
and their column lineage, as designed. Per job, the declaration with the greatest version
``(eventTime, digest)`` is the job's static lineage; the batch keeps its own greatest, and
the upsert of ``catalog_static_lineage`` replaces the stored one only when it is greater,
so an older JobEvent that arrives later changes nothing and a redelivered one is a no-op.
A JobEvent with neither key (only job facets) declares nothing and leaves the lineage.

Cost: a replacement deletes and inserts the rows of that job's declaration only; nothing
reads the job's runs.
"""

from typing import Any

from django.db import connection

from catalog.facets import column_lineage
from catalog.facets import lineage as lineage_facet
from catalog.services.derivation import column_facts
from catalog.services.derivation.edge_runs import columns_of
from catalog.services.derivation.records import (
    EPOCH,
    AliasKey,
    Extractor,
    Facts,
    JobKey,
    RawEvent,
    StaticFact,
    version_text,
)


def read_declaration(
    extractor: "Extractor",
    event: RawEvent,
    job: JobKey,
    payload: dict[str, Any],
    pairs: list[lineage_facet.Pair],
) -> None:
    """Note the JobEvent's declaration in the batch's facts if it is the job's newest, with
    the ``lineage`` facet's ``pairs`` (source, target names; ADR 0102) when it has any."""
    if "inputs" not in payload and "outputs" not in payload:
        return
    # Read whole even when the batch holds a newer declaration: the names it notes (alias
    # reasons, first seen) must not depend on which JobEvents share a batch.
    fact = StaticFact(version_text(event), event.id, event.event_time or EPOCH)
    for direction in ("inputs", "outputs"):
        for position, dataset in enumerate(payload.get(direction) or []):
            # _io has checked the shape and noted the alias; this reads the same names.
            key = extractor.alias(
                dataset.get("namespace"),
                dataset.get("name"),
                event,
                "event",
                f"{direction}/{position}",
            )
            fact.datasets[(key, direction[:-1])] = ""
            if direction == "outputs":
                _columns(extractor, event, fact, key, dataset)
    for source, target in pairs:  # named in the applied inputs and outputs already
        source_key = extractor.try_alias(*source, event, lineage_facet.NAME)
        target_key = extractor.try_alias(*target, event, lineage_facet.NAME)
        if source_key is not None and target_key is not None:
            fact.pairs.add((source_key, target_key))
    current = extractor.facts.static.get(job)
    if current is None or fact.version > current.version:
        extractor.facts.static[job] = fact


def _columns(
    extractor: "Extractor", event: RawEvent, fact: StaticFact, target: AliasKey, dataset: Any
) -> None:
    """A declared output's column lineage, read as a run's is (``column_facts.entries``):
    field-level edges with both transformation forms and dataset-level dependencies, text
    redacted, keyed alike (ADR 0060)."""
    for target_field, source, transformation, kept, dataset_level in column_facts.entries(dataset):
        source_key = extractor.try_alias(
            source.get("namespace"), source.get("name"), event, column_lineage.NAME
        )
        if source_key is None:
            continue
        # A source only named in column lineage is an input all the same.
        fact.datasets.setdefault((source_key, "input"), column_facts.VIA_COLUMN_LINEAGE)
        values, digest = column_facts.column_values(
            target_field, source["field"], transformation, kept, dataset_level
        )
        fact.columns[(target, source_key, digest)] = values


_REPLACE = """
INSERT INTO catalog_static_lineage (job_id, version, event_id, declared_at)
SELECT * FROM unnest(%s::bigint[], %s::text[], %s::bigint[], %s::timestamptz[])
ON CONFLICT (job_id) DO UPDATE SET
    version = EXCLUDED.version, event_id = EXCLUDED.event_id, declared_at = EXCLUDED.declared_at
WHERE catalog_static_lineage.version < EXCLUDED.version
RETURNING job_id
"""
_INSERT_DATASETS = """
INSERT INTO catalog_static_dataset (job_id, alias_id, direction, via)
SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[])
"""
# Columns in column_facts.column_values's order.
_INSERT_COLUMNS = """
INSERT INTO catalog_static_column_lineage (
    job_id, target_alias_id, source_alias_id, key_hash, target_field, source_field,
    transformation_type, transformation_subtype, transformation_description, masking,
    dataset_level, field_transformation_type, field_transformation_description
)
SELECT * FROM unnest(
    %s::bigint[], %s::bigint[], %s::bigint[], %s::bytea[], %s::text[], %s::text[],
    %s::text[], %s::text[], %s::text[], %s::bool[], %s::bool[], %s::text[], %s::text[]
)
"""

# The declaration's datasets and its pairs (ADR 0102) in one statement: a declaration
# without the facet pays no statement for pairs it never had.
_DELETE_DATASETS = """
WITH pairs AS (DELETE FROM catalog_static_dataset_pair WHERE job_id = ANY(%(jobs)s))
DELETE FROM catalog_static_dataset WHERE job_id = ANY(%(jobs)s)
"""
_INSERT_PAIRS = """
INSERT INTO catalog_static_dataset_pair (job_id, source_alias_id, target_alias_id)
SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[])
"""


def store_declarations(
    facts: "Facts", job_ids: dict[JobKey, int], alias_ids: dict[AliasKey, int]
) -> set[int]:
    """Replace the declarations of the jobs for which the batch holds a newer JobEvent;
    returns those jobs' ids. Contended part: after the jobs' rows are locked (locks.py),
    jobs in id order."""
    if not facts.static:
        return set()
    by_id = sorted((job_ids[job], fact) for job, fact in facts.static.items())
    with connection.cursor() as cursor:
        cursor.execute(
            _REPLACE,
            [
                [job for job, _ in by_id],
                [fact.version for _, fact in by_id],
                [fact.event_id for _, fact in by_id],
                [fact.declared_at for _, fact in by_id],
            ],
        )
        replaced = {row[0] for row in cursor.fetchall()}
        if not replaced:
            return replaced
        jobs = sorted(replaced)
        cursor.execute(_DELETE_DATASETS, {"jobs": jobs})
        cursor.execute("DELETE FROM catalog_static_column_lineage WHERE job_id = ANY(%s)", [jobs])
        facts_of = dict(by_id)
        datasets = sorted(
            (job, alias_ids[alias], direction, via)
            for job in jobs
            for (alias, direction), via in facts_of[job].datasets.items()
        )
        if datasets:
            cursor.execute(_INSERT_DATASETS, columns_of(datasets, 4))
        columns = sorted(
            (
                job,
                alias_ids[target],
                alias_ids[source],
                digest,
                *values.values(),
            )
            for job in jobs
            for (target, source, digest), values in facts_of[job].columns.items()
        )
        if columns:
            cursor.execute(_INSERT_COLUMNS, columns_of(columns, 13))
        pairs = sorted(
            (job, alias_ids[source], alias_ids[target])
            for job in jobs
            for source, target in facts_of[job].pairs
        )
        if pairs:
            cursor.execute(_INSERT_PAIRS, columns_of(pairs, 3))
    return replaced
