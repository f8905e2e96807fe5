"""Control edges from ``jobDependencies`` run facets: read into facts, upserted (ADR 0090).

A run of job J naming upstream job U states U → J; naming downstream job D states J → D.
The pair is one row whatever how many runs state it: first and last seen are the least and
greatest event times, the rules and last run those of the greatest event version, so the
upsert gives the same row for any order, batching or duplicates of the events. Nothing
here touches data lineage: the row is in its own table, which no data read joins.
"""

from typing import Any

from django.db import connection

from catalog.facets import job_dependencies
from catalog.services.derivation.records import (
    EPOCH,
    ControlFact,
    Extractor,
    Facts,
    JobFact,
    JobKey,
    RawEvent,
    RunFact,
    version_text,
)


def read_dependencies(
    extractor: Extractor, event: RawEvent, run: RunFact, job: JobFact, run_facets: Any
) -> None:
    """Note the control edges one run event's facet states (none for a bad shape)."""
    trigger = job_dependencies.trigger_rule(run_facets)
    for dependency in job_dependencies.dependencies(run_facets):
        other = extractor.job(dependency.namespace, dependency.name, own=False).key
        if other == job.key:
            continue  # a job depending on itself says nothing about control flow
        pair = (other, job.key) if dependency.upstream else (job.key, other)
        rules = (
            dependency.dependency_type,
            dependency.sequence_trigger_rule,
            dependency.status_trigger_rule,
            # The run's trigger rule is over its upstream jobs: on those edges only.
            trigger if dependency.upstream else "",
        )
        _note(extractor.facts, pair, event, run, rules)


def _note(
    facts: Facts,
    pair: tuple[JobKey, JobKey],
    event: RawEvent,
    run: RunFact,
    rules: tuple[str, str, str, str],
) -> None:
    time, version = event.event_time or EPOCH, version_text(event)
    known = facts.control.get(pair)
    if known is None:
        facts.control[pair] = ControlFact(time, time, version, run.run_uuid, rules)
        return
    known.first_seen, known.last_seen = min(known.first_seen, time), max(known.last_seen, time)
    if version > known.version:
        known.version, known.run_uuid, known.rules = version, run.run_uuid, rules


# The columns an edge's greatest event version decides; the span is least/greatest.
_RULE_COLUMNS = (
    "last_run_uuid",
    "dependency_type",
    "sequence_trigger_rule",
    "status_trigger_rule",
    "trigger_rule",
)


def newer_wins(target: str) -> str:
    """The ``DO UPDATE SET`` list that folds a control edge row into ``target`` (the
    conflicting row's alias) the same way whatever the order: span widened, rules and last
    run from the greater version. Shared by the live table and its retained snapshot, so a
    rederive folding a snapshot with the kept events gives the row the catalog showed."""
    rules = ",\n    ".join(
        f"{column} = CASE WHEN EXCLUDED.version > {target}.version "
        f"THEN EXCLUDED.{column} ELSE {target}.{column} END"
        for column in _RULE_COLUMNS
    )
    return (
        f"first_seen = LEAST({target}.first_seen, EXCLUDED.first_seen),\n"
        f"    last_seen = GREATEST({target}.last_seen, EXCLUDED.last_seen),\n"
        f"    version = GREATEST({target}.version, EXCLUDED.version),\n    {rules}"
    )


_UPSERT = f"""
INSERT INTO catalog_control_edge AS c (upstream_id, downstream_id, first_seen, last_seen,
    version, last_run_uuid, dependency_type, sequence_trigger_rule, status_trigger_rule,
    trigger_rule)
SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::timestamptz[], %s::timestamptz[],
    %s::text[], %s::uuid[], %s::text[], %s::text[], %s::text[], %s::text[])
ON CONFLICT (upstream_id, downstream_id) DO UPDATE SET
    {newer_wins("c")}
"""


def store_control_edges(facts: Facts, job_ids: dict[JobKey, int]) -> None:
    """Upsert the batch's control edges, in (upstream, downstream) id order (the jobs are
    locked by ``merge_jobs`` before this runs, so two batches wait rather than deadlock)."""
    rows = sorted(
        (
            (job_ids[up], job_ids[down], fact)
            for (up, down), fact in facts.control.items()
            if up in job_ids and down in job_ids
        ),
        key=lambda row: (row[0], row[1]),
    )
    if not rows:
        return
    columns: list[list[Any]] = [[] for _ in range(10)]
    for up, down, fact in rows:
        values = (up, down, fact.first_seen, fact.last_seen, fact.version, fact.run_uuid)
        for column, value in zip(columns, (*values, *fact.rules), strict=True):
            column.append(value)
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, columns)
