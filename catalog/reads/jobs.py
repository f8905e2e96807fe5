"""Jobs: by name, by page; what Marquez shows of a latest run (read with what jobs read
and wrote by ``catalog.reads.marquez_graph``)."""

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

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


@dataclass(slots=True)  # not frozen: a frozen one's fields cost ~0.25 µs each to set (ADR 0129)
class LatestRun:
    """What Marquez shows of a job's latest run (``api.marquez.shapes.run_data`` reads it as
    it reads a ``Run``): the run's columns it shows, not a model instance (ADR 0110); its id
    and moments as the answer writes them (``core.sql_timestamps``, ADR 0129)."""

    id: int
    job_id: int
    run_uuid: str
    state: str
    started_at: str | None
    ended_at: str | None
    duration: timedelta | None
    nominal_start_time: str | None
    nominal_end_time: str | None
    first_event_time: str | None
    last_event_time: str | None
    updated_at: str
    facets: Any
