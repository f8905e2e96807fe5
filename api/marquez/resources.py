"""Namespaces, jobs, runs, datasets and dataset versions in Marquez's shapes.

Handlers take the DRF request and the names decoded from the raw path, and return the body.
Names resolve like the rest of the catalog: a dataset by any alias it was ever called
(``Dataset.objects.for_alias``), a job by its natural key, a run by its runId.
"""

from collections import defaultdict
from typing import Any
from uuid import UUID

from django.db.models import Max, Min, Q
from rest_framework.request import Request

from api.marquez import shapes
from api.marquez.errors import MarquezError, not_found
from api.marquez.paging import limit_offset, total_count
from catalog import naming
from catalog.facets import data_source, lifecycle_state_change
from catalog.models import (
    DATASETS_BY_NAME,
    JOBS_BY_UPDATE,
    Dataset,
    DatasetAlias,
    EventDataset,
    Job,
    Run,
    RunDataset,
)

# Marquez gives namespaces an owner; events carry none, and Marquez's own default is this.
DEFAULT_OWNER = "anonymous"


# --- namespaces -------------------------------------------------------------------------


def _namespace_rows(namespace: str | None = None) -> list[dict[str, Any]]:
    """One GROUP BY per table over the namespace columns (as /api/v1/namespaces, ADR 0030)."""
    merged: dict[str, dict[str, Any]] = {}
    for model in (Job, Dataset):
        rows = model.objects.order_by()
        if namespace is not None:
            rows = rows.filter(namespace=namespace)
        row: Any
        for row in rows.values("namespace").annotate(
            created=Min("first_seen"), updated=Max("last_seen")
        ):
            entry = merged.setdefault(
                row["namespace"], {"created": row["created"], "updated": row["updated"]}
            )
            for key, pick in (("created", min), ("updated", max)):
                values = [v for v in (entry[key], row[key]) if v is not None]
                entry[key] = pick(values) if values else None
    return [
        {
            "name": name,
            "createdAt": shapes.ts(merged[name]["created"]),
            "updatedAt": shapes.ts(merged[name]["updated"]),
            "ownerName": DEFAULT_OWNER,
            "description": None,
            "isHidden": False,
        }
        for name in sorted(merged)
    ]


def namespaces(request: Request) -> dict[str, Any]:
    limit, offset = limit_offset(request)
    rows = _namespace_rows()
    return {"namespaces": rows[offset : offset + limit], "totalCount": len(rows)}


def namespace(request: Request, namespace: str) -> dict[str, Any]:
    rows = _namespace_rows(namespace)
    if not rows:
        raise not_found(f"Namespace '{namespace}'")
    return rows[0]


# --- jobs and runs ----------------------------------------------------------------------


def _job(namespace: str, name: str) -> Job:
    job = Job.objects.for_name(namespace, name).select_related("parent").first()
    if job is None:
        raise not_found(f"Job '{name}' in namespace '{namespace}'")
    return job


def _job_page(request: Request, queryset: Any) -> dict[str, Any]:
    limit, offset = limit_offset(request)
    states = [
        state
        for value in request.query_params.getlist("lastRunStates")
        for state in value.upper().split(",")
        if state
    ]
    if states:
        unknown = sorted(set(states) - set(shapes.OUR_STATES))
        if unknown:
            raise MarquezError(400, f"Unknown run state(s) in lastRunStates: {unknown}.")
        ours = [state for name in states for state in shapes.OUR_STATES[name]]
        queryset = queryset.with_latest_run_state().filter(latest_run_state__in=ours)
    # Marquez: ORDER BY updated_at DESC (JobDao.findAll), so what just ran comes first.
    page = list(
        queryset.select_related("parent").order_by(*JOBS_BY_UPDATE)[offset : offset + limit]
    )
    return {"jobs": shapes.jobs_data(page), "totalCount": total_count(queryset)}


def all_jobs(request: Request) -> dict[str, Any]:
    return _job_page(request, Job.objects.all())


def jobs(request: Request, namespace: str) -> dict[str, Any]:
    return _job_page(request, Job.objects.filter(namespace=namespace))


def job(request: Request, namespace: str, job: str) -> dict[str, Any]:
    return shapes.jobs_data([_job(namespace, job)])[0]


def _runs_of(job: Job) -> Any:
    # Runs known only from a child's parent facet have no start: Marquez never saw them.
    return Run.objects.filter(job=job, started_at__isnull=False).order_by("-started_at", "-id")


def job_runs(request: Request, namespace: str, job: str) -> dict[str, Any]:
    found = _job(namespace, job)
    limit, offset = limit_offset(request)
    queryset = _runs_of(found)
    page = list(queryset.select_related("job")[offset : offset + limit])
    return {"runs": shapes.runs_data(page), "totalCount": total_count(queryset)}


def _run(run_id: str) -> Run:
    try:
        value = UUID(run_id)
    except ValueError:
        raise MarquezError(400, f"Run id must be a UUID (got {run_id!r}).") from None
    run = Run.objects.filter(run_uuid=value).select_related("job").first()
    if run is None:
        raise not_found(f"Run '{run_id}'")
    return run


def run(request: Request, run: str) -> dict[str, Any]:
    return shapes.runs_data([_run(run)])[0]


def run_facets(request: Request, run: str) -> dict[str, Any]:
    kind = request.query_params.get("type", "run").lower()
    if kind not in ("run", "job"):
        raise MarquezError(400, "type must be run or job.")
    found = _run(run)
    facets = found.facets if kind == "run" else found.job.facets
    return {"runId": str(found.run_uuid), "facets": shapes.redact(facets)}


# --- datasets ---------------------------------------------------------------------------


def _dataset(namespace: str, name: str) -> Dataset:
    dataset = Dataset.objects.for_alias(namespace, name).first()
    if dataset is None:
        raise not_found(f"Dataset '{name}' in namespace '{namespace}'")
    return dataset


def datasets(request: Request, namespace: str) -> dict[str, Any]:
    limit, offset = limit_offset(request)
    # Datasets are listed under their normalised namespace (s3a://lake/ is s3://lake).
    queryset = Dataset.objects.filter(namespace=naming.normalise_namespace(namespace))
    # Marquez: ORDER BY name (DatasetDao.findAll).
    page = list(queryset.order_by(*DATASETS_BY_NAME)[offset : offset + limit])
    return {"datasets": shapes.datasets_data(page), "totalCount": total_count(queryset)}


def dataset(request: Request, namespace: str, dataset: str) -> dict[str, Any]:
    return shapes.datasets_data([_dataset(namespace, dataset)])[0]


def _writes(dataset: Dataset) -> Any:
    """A dataset version is a run that wrote the dataset (newest first)."""
    aliases = list(DatasetAlias.objects.filter(dataset=dataset).values_list("id", flat=True))
    return RunDataset.objects.filter(alias_id__in=aliases, direction="output")


def _versions(dataset: Dataset, writes: list[RunDataset]) -> list[dict[str, Any]]:
    """Each version's fields and facets come from the events of its run that wrote the
    dataset (later events override earlier ones, facet by facet): one query per page."""
    runs = {write.run_id: write.run for write in writes}
    facets: dict[str, dict[str, Any]] = defaultdict(dict)
    names = {(write.alias.namespace, write.alias.name) for write in writes}
    links = (
        EventDataset.objects.filter(
            alias_id__in={write.alias_id for write in writes},
            role="output",
            event__run_id__in={run.run_id_text for run in runs.values()},
        )
        .order_by("event__event_time", "event_id")
        .values("event__run_id", "event__payload__outputs")
    )
    for link in links:
        for output in link["event__payload__outputs"] or []:
            if not isinstance(output, dict):
                continue
            space, name = output.get("namespace"), output.get("name")
            if not (isinstance(space, str) and isinstance(name, str)):
                continue
            if naming.normalise(space, name) in names:
                facets[str(link["event__run_id"])].update(output.get("facets") or {})
    run_shapes = {data["id"]: data for data in shapes.runs_data(list(runs.values()))}
    answer = []
    for write in writes:
        run = runs[write.run_id]
        version_facets = shapes.redact(facets.get(run.run_id_text, {}))
        source = data_source.source_name(version_facets)
        answer.append(
            {
                "id": {
                    "namespace": dataset.namespace,
                    "name": dataset.name,
                    "version": str(run.run_uuid),
                },
                "type": shapes.dataset_type(dataset.namespace),
                "name": dataset.name,
                "physicalName": dataset.name,
                "createdAt": shapes.ts(write.first_seen),
                "version": str(run.run_uuid),
                "namespace": dataset.namespace,
                "sourceName": source if isinstance(source, str) else dataset.namespace,
                "fields": shapes.schema_fields(version_facets),
                "tags": [],
                "lifecycleState": lifecycle_state_change.version_state(version_facets),
                "description": dataset.description or None,
                "createdByRun": run_shapes[str(run.run_uuid)],
                "facets": version_facets,
            }
        )
    return answer


def dataset_versions(request: Request, namespace: str, dataset: str) -> dict[str, Any]:
    found = _dataset(namespace, dataset)
    limit, offset = limit_offset(request)
    queryset = _writes(found)
    page = list(
        queryset.select_related("run", "run__job", "alias").order_by("-last_seen", "-id")[
            offset : offset + limit
        ]
    )
    return {"versions": _versions(found, page), "totalCount": total_count(queryset)}


def dataset_version(request: Request, namespace: str, dataset: str, version: str) -> dict:
    found = _dataset(namespace, dataset)
    try:
        run_uuid = UUID(version)
    except ValueError:
        raise MarquezError(400, f"version must be a UUID (got {version!r}).") from None
    write = (
        _writes(found)
        .filter(Q(run__run_uuid=run_uuid))
        .select_related("run", "run__job", "alias")
        .order_by("-last_seen")
        .first()
    )
    if write is None:
        raise not_found(f"Version '{version}' of dataset '{dataset}'")
    return _versions(found, [write])[0]
