"""Jobs: by name, by page, with their newest runs and what they read and wrote."""

from collections import defaultdict

from catalog.models import JOBS_BY_UPDATE, Job, JobDataset, Run
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


def latest_runs(job_ids: list[int], count: int) -> dict[int, list[Run]]:
    """Each job's newest ``count`` started runs, newest first: one index range per job
    (catalog_run_job_started_idx), whatever its run history."""
    latest: dict[int, list[Run]] = defaultdict(list)
    ranked = Run.objects.raw(
        "SELECT r.* FROM unnest(%s::bigint[]) AS j(id) CROSS JOIN LATERAL ("
        " SELECT * FROM catalog_run r WHERE r.job_id = j.id AND r.started_at IS NOT NULL"
        " ORDER BY r.started_at DESC, r.id DESC LIMIT %s) r",
        [job_ids, count],
    )
    for run in ranked:
        latest[run.job_id].append(run)
    return latest


def job_datasets(job_ids: list[int], limit: int) -> dict[int, dict[str, list[Named]]]:
    """What each job read (``input``) and wrote (``output``), by dataset name, at most
    ``limit`` links in all."""
    io: dict[int, dict[str, list[Named]]] = defaultdict(lambda: {"input": [], "output": []})
    links = (
        JobDataset.objects.filter(job_id__in=job_ids, alias__dataset__isnull=False)
        .order_by("job_id", "direction", "alias__dataset__namespace", "alias__dataset__name")
        .values_list("job_id", "direction", "alias__dataset__namespace", "alias__dataset__name")
        .distinct()[:limit]
    )
    for job_id, direction, namespace, name in links:
        io[job_id][direction].append((namespace, name))
    return io
