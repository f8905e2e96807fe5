"""What the Marquez mount's ``/lineage`` reads besides the walk: its root by name, with the
two store-wide facts the walk is planned by, and its nodes' facts, few statements each.

The root is found by its name (a Marquez node id names it) and handed to the walk as a
row, so the walk does not read it again (``catalog.lineage.drawn``). A walk handed a row
assumes the store holds declarations and retirements, as it cannot know otherwise: static
reads (a step of the walk, a probe, three statements) and a retirement probe in every edge
read were then sent for every Marquez graph, most of them finding nothing, as most stores
declare nothing and retire little. The root's own statement reads both facts
(``GraphRoot``), as the walk's root check does for the catalog's API (ADR 0104), anew on
every request: nothing is remembered between requests (ADR 0116).

The nodes' facts (a job's latest run, what it read and wrote; a dataset's schema fields and
newest write) are one statement per kind of node, where they were two (ADR 0116): each is
a round trip and a plan, which cost a graph of a hundred nodes more than the reads did.
"""

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from catalog.models import Dataset, Job, any_declared_sql, any_retired_sql, writes
from catalog.reads.jobs import LatestRun, Named


@dataclass(frozen=True)
class GraphRoot:
    """The root's row (a job with its parent selected), and whether the store holds any
    declaration (static lineage) and any retirement not restored, read with it."""

    row: Dataset | Job
    declarations: bool
    retirements: bool


def graph_root(kind: str, namespace: str, name: str) -> GraphRoot | None:
    """The current job or dataset (``kind``) of that name, as ``find_job`` and
    ``find_dataset`` find it, with the store's two facts; None when there is none."""
    facts = {
        "store_declares": RawSQL(any_declared_sql(), (), output_field=BooleanField()),
        "store_retires": RawSQL(any_retired_sql(), (), output_field=BooleanField()),
    }
    queryset: Any = (
        Job.objects.current().for_name(namespace, name).select_related("parent")
        if kind == "job"
        else Dataset.objects.current().for_alias(namespace, name)
    )
    row = queryset.annotate(**facts).first()
    if row is None:
        return None
    return GraphRoot(row, row.store_declares, row.store_retires)


@dataclass(frozen=True)
class JobFacts:
    """Each job's newest started runs, newest first, and what it read (``input``) and wrote
    (``output``) by dataset name."""

    latest_runs: dict[int, list[LatestRun]]
    datasets: dict[int, dict[str, list[Named]]]


# Part 0: each job's newest %(runs)s started runs, one index range per job
# (catalog_run_job_started_idx); part 1: what the jobs read and wrote by dataset name, once
# per (job, direction, dataset name), at most %(limit)s in all in that order. The columns a
# Marquez Run shows (LatestRun), then the link's three.
_JOB_FACTS = """
SELECT * FROM (
    SELECT 0 AS part, j.id AS job_id, r.id, r.run_uuid, r.state, r.started_at,
           r.ended_at, r.duration, r.nominal_start_time, r.nominal_end_time,
           r.first_event_time, r.last_event_time, r.updated_at, r.facets,
           NULL::text AS direction, NULL::text AS namespace, NULL::text AS name
    FROM unnest(%(jobs)s::bigint[]) AS j(id) CROSS JOIN LATERAL (
        SELECT * FROM catalog_run r WHERE r.job_id = j.id AND r.started_at IS NOT NULL
        ORDER BY r.started_at DESC, r.id DESC LIMIT %(runs)s) r
    UNION ALL
    (SELECT DISTINCT 1, jd.job_id, NULL::bigint, NULL::uuid, NULL::text,
            NULL::timestamptz, NULL::timestamptz, NULL::interval, NULL::timestamptz,
            NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz,
            NULL::jsonb, jd.direction, d.namespace, d.name
     FROM catalog_job_dataset jd
     JOIN catalog_dataset_alias a ON a.id = jd.alias_id
     JOIN catalog_dataset d ON d.id = a.dataset_id
     WHERE jd.job_id = ANY(%(jobs)s::bigint[])
     ORDER BY jd.job_id, jd.direction, d.namespace, d.name
     LIMIT %(limit)s)
) facts
ORDER BY part, job_id, started_at DESC, id DESC, direction, namespace, name
"""


def job_facts(job_ids: list[int], runs: int, limit: int) -> JobFacts:
    """The jobs' ``runs`` newest started runs (rows, not ``Run`` instances: ADR 0110) and
    their links by dataset name (at most ``limit``): one statement, none for no job."""
    latest: dict[int, list[LatestRun]] = defaultdict(list)
    io: dict[int, dict[str, list[Named]]] = defaultdict(lambda: {"input": [], "output": []})
    if not job_ids:
        return JobFacts(latest, io)
    with connection.cursor() as cursor:
        cursor.execute(_JOB_FACTS, {"jobs": job_ids, "runs": runs, "limit": limit})
        rows = cursor.fetchall()
    for part, job_id, *run, facets, direction, namespace, name in rows:
        if part == 1:
            io[job_id][direction].append((namespace, name))
            continue
        # jsonb comes as text on Django's connections; parsed as its JSONField parses it.
        parsed = json.loads(facets) if isinstance(facets, str | bytes) else facets
        latest[job_id].append(LatestRun(run[0], job_id, *run[1:], facets=parsed))  # type: ignore[misc]
    return JobFacts(latest, io)


@dataclass(frozen=True)
class DatasetFacts:
    """Each dataset's schema fields in order (``name``, ``type``, ``description``) and its
    newest write: (when, the writing run's runId)."""

    fields: dict[int, list[dict[str, Any]]]
    latest_writes: dict[int, tuple[datetime, str]]


# Part 0: the fields in schema order; part 1: each dataset's newest write, a completed run's
# output that is a write (catalog.models.writes, ADR 0069), newest last_seen then id first.
_DATASET_FACTS = """
SELECT part, dataset_id, name, type, description, last_seen, run_uuid FROM (
    SELECT 0 AS part, f.dataset_id, f.ordinal AS k1, f.name, f.type,
           f.description, NULL::timestamptz AS last_seen, NULL::uuid AS run_uuid
    FROM catalog_dataset_field f WHERE f.dataset_id = ANY(%(datasets)s::bigint[])
    UNION ALL
    (SELECT DISTINCT ON (a.dataset_id) 1, a.dataset_id, NULL, NULL, NULL, NULL,
            rd.last_seen, r.run_uuid
     FROM catalog_run_dataset rd
     JOIN catalog_dataset_alias a ON a.id = rd.alias_id
     JOIN catalog_run r ON r.id = rd.run_id
     WHERE a.dataset_id = ANY(%(datasets)s::bigint[]) AND rd.direction = 'output'
       AND {write}
     ORDER BY a.dataset_id, rd.last_seen DESC, rd.id DESC)
) facts
ORDER BY part, dataset_id, k1
""".replace("{write}", writes.write_sql("r", "rd"))


def dataset_facts(dataset_ids: list[int]) -> DatasetFacts:
    """The datasets' fields and newest writes: one statement, none for no dataset."""
    fields: dict[int, list[dict[str, Any]]] = defaultdict(list)
    latest: dict[int, tuple[datetime, str]] = {}
    if not dataset_ids:
        return DatasetFacts(fields, latest)
    with connection.cursor() as cursor:
        cursor.execute(_DATASET_FACTS, {"datasets": dataset_ids})
        rows = cursor.fetchall()
    for part, dataset_id, name, kind, description, last_seen, run_uuid in rows:
        if part == 0:
            fields[dataset_id].append({"name": name, "type": kind, "description": description})
        else:
            latest[dataset_id] = (last_seen, str(run_uuid))
    return DatasetFacts(fields, latest)
