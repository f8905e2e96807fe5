"""Jobs: by name, by page, with their newest runs and what they read and wrote."""

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.db import connection

from catalog.models import JOBS_BY_UPDATE, Job
from catalog.reads.counting import Page, offset_page

Named = tuple[str, str]  # (namespace, name)


def find_job(namespace: str, name: str) -> Job | None:
    """The job of that natural key, its parent selected."""
    return Job.objects.current().for_name(namespace, name).select_related("parent").first()


def job_page(namespace: str | None, latest_states: list[str], offset: int, limit: int) -> Page[Job]:
    """Jobs (of a namespace, or all), newest update first, as Marquez lists them
    (``JobDao.findAll``: ORDER BY updated_at DESC); ``latest_states``: only jobs whose latest
    run is in one of these states (ours, ADR 0021)."""
    jobs = Job.objects.current()
    queryset = jobs if namespace is None else jobs.filter(namespace=namespace)
    if latest_states:
        queryset = queryset.with_latest_run_state().filter(latest_run_state__in=latest_states)
    return offset_page(queryset, JOBS_BY_UPDATE, offset, limit, related=("parent",))


@dataclass(frozen=True, slots=True)
class LatestRun:
    """What Marquez shows of a job's latest run (``api.marquez.shapes.run_data`` reads it as
    it reads a ``Run``): the run's columns it shows, not a model instance (ADR 0110)."""

    id: int
    job_id: int
    run_uuid: UUID
    state: str
    started_at: datetime | None
    ended_at: datetime | None
    duration: timedelta | None
    nominal_start_time: datetime | None
    nominal_end_time: datetime | None
    first_event_time: datetime | None
    last_event_time: datetime | None
    updated_at: datetime
    facets: Any


_LATEST_RUNS = """
SELECT r.id, r.job_id, r.run_uuid, r.state, r.started_at, r.ended_at, r.duration,
       r.nominal_start_time, r.nominal_end_time, r.first_event_time, r.last_event_time,
       r.updated_at, r.facets
FROM unnest(%s::bigint[]) AS j(id) CROSS JOIN LATERAL (
    SELECT * FROM catalog_run r WHERE r.job_id = j.id AND r.started_at IS NOT NULL
    ORDER BY r.started_at DESC, r.id DESC LIMIT %s) r
"""


def latest_runs(job_ids: list[int], count: int) -> dict[int, list[LatestRun]]:
    """Each job's newest ``count`` started runs, newest first: one index range per job
    (catalog_run_job_started_idx), whatever its run history. Rows, not ``Run`` instances:
    a graph of 200 nodes shows a latest run per job, and the model's instances (every
    column, every JSON one parsed) took three quarters of this read's CPU."""
    latest: dict[int, list[LatestRun]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(_LATEST_RUNS, [job_ids, count])
        rows = cursor.fetchall()
    for row in rows:
        # jsonb comes as text on Django's connections; parsed as its JSONField parses it.
        facets = row[-1]
        parsed = json.loads(facets) if isinstance(facets, str | bytes) else facets
        run = LatestRun(*row[:-1], facets=parsed)  # type: ignore[misc]
        latest[run.job_id].append(run)
    return latest


# What jobs read and wrote by dataset name, once per (job, direction, dataset name).
_JOB_DATASETS = """
SELECT DISTINCT jd.job_id, jd.direction, d.namespace, d.name
FROM catalog_job_dataset jd
JOIN catalog_dataset_alias a ON a.id = jd.alias_id
JOIN catalog_dataset d ON d.id = a.dataset_id
WHERE jd.job_id = ANY(%s::bigint[])
ORDER BY jd.job_id, jd.direction, d.namespace, d.name
LIMIT %s
"""


def job_datasets(job_ids: list[int], limit: int) -> dict[int, dict[str, list[Named]]]:
    """What each job read (``input``) and wrote (``output``), by dataset name, at most
    ``limit`` links in all. One plain statement: the ORM's compilation of it cost more than
    its execution for a graph's jobs (ADR 0110)."""
    io: dict[int, dict[str, list[Named]]] = defaultdict(lambda: {"input": [], "output": []})
    if not job_ids:  # as the ORM did: no statement for nothing
        return io
    with connection.cursor() as cursor:
        cursor.execute(_JOB_DATASETS, [job_ids, limit])
        for job_id, direction, namespace, name in cursor.fetchall():
            io[job_id][direction].append((namespace, name))
    return io
