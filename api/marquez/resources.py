"""Namespaces, jobs, runs, datasets and dataset versions in Marquez's shapes.

Handlers take the DRF request and the names decoded from the path, and return the body;
the rows come from the catalog's read services (catalog.reads). Names resolve like the rest
of the catalog: a dataset by any alias it was ever called, a job by its natural key, a run
by its runId.
"""

from collections import defaultdict
from typing import Any
from uuid import UUID

from rest_framework.request import Request

from api.marquez import shapes
from api.marquez.errors import MarquezError, not_found
from api.marquez.paging import limit_offset, within_budget
from catalog.facets import data_source, lifecycle_state_change, tags
from catalog.models import Dataset, Job, Run, RunDataset
from catalog.names import naming
from catalog.reads import datasets as dataset_reads
from catalog.reads import jobs as job_reads
from catalog.reads import namespaces as namespace_reads
from catalog.reads import run_facts
from catalog.reads import runs as run_reads
from catalog.reads import versions as version_reads

# Marquez gives namespaces an owner; events carry none, and Marquez's own default is this.
DEFAULT_OWNER = "anonymous"


# --- namespaces -------------------------------------------------------------------------


def _namespace_rows(namespace: str | None = None) -> list[dict[str, Any]]:
    return [
        {
            "name": row.name,
            "createdAt": shapes.ts(row.created),
            "updatedAt": shapes.ts(row.updated),
            "ownerName": DEFAULT_OWNER,
            "description": None,
            "isHidden": False,
        }
        for row in namespace_reads.namespaces(namespace)
    ]


def namespaces(request: Request) -> dict[str, Any]:
    limit, offset = limit_offset(request)
    rows = _namespace_rows()
    page = within_budget(rows[offset : offset + limit], lambda chunk: chunk)
    return {"namespaces": page, "totalCount": len(rows)}


def namespace(request: Request, namespace: str) -> dict[str, Any]:
    rows = _namespace_rows(namespace)
    if not rows:
        raise not_found(f"Namespace '{namespace}'")
    return rows[0]


# --- jobs and runs ----------------------------------------------------------------------


def _job(namespace: str, name: str) -> Job:
    job = job_reads.find_job(namespace, name)
    if job is None:
        raise not_found(f"Job '{name}' in namespace '{namespace}'")
    return job


def _job_page(request: Request, namespace: str | None) -> dict[str, Any]:
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
    # Marquez: ORDER BY updated_at DESC (JobDao.findAll), so what just ran comes first.
    page = job_reads.job_page(namespace, ours, offset, limit)
    jobs = within_budget(page.ids, lambda ids: shapes.jobs_data(page.rows(ids)))
    return {"jobs": jobs, "totalCount": page.total}


def all_jobs(request: Request) -> dict[str, Any]:
    return _job_page(request, None)


def jobs(request: Request, namespace: str) -> dict[str, Any]:
    return _job_page(request, namespace)


def job(request: Request, namespace: str, job: str) -> dict[str, Any]:
    return shapes.jobs_data([_job(namespace, job)])[0]


def job_runs(request: Request, namespace: str, job: str) -> dict[str, Any]:
    found = _job(namespace, job)
    limit, offset = limit_offset(request)
    page = run_reads.job_runs(found, offset, limit)
    runs = within_budget(page.ids, lambda ids: shapes.runs_data(page.rows(ids)))
    return {"runs": runs, "totalCount": page.total}


def _run(run_id: str) -> Run:
    try:
        value = UUID(run_id)
    except ValueError:
        raise MarquezError(400, f"Run id must be a UUID (got {run_id!r}).") from None
    run = run_reads.find_run(value)
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
    dataset = dataset_reads.find_dataset(namespace, name)
    if dataset is None:
        raise not_found(f"Dataset '{name}' in namespace '{namespace}'")
    return dataset


def datasets(request: Request, namespace: str) -> dict[str, Any]:
    limit, offset = limit_offset(request)
    page = dataset_reads.dataset_page(namespace, offset, limit)
    datasets = within_budget(page.ids, lambda ids: shapes.datasets_data(page.rows(ids)))
    return {"datasets": datasets, "totalCount": page.total}


def dataset(request: Request, namespace: str, dataset: str) -> dict[str, Any]:
    return shapes.datasets_data([_dataset(namespace, dataset)])[0]


def _versions(dataset: Dataset, writes: list[RunDataset]) -> list[dict[str, Any]]:
    """Each version's fields and facets come from the events of its run that wrote the
    dataset (later events override earlier ones, facet by facet), and its run facts
    (``catalog.reads.run_facts.of_versions``): two queries per page."""
    runs = {write.run_id: write.run for write in writes}
    facets: dict[str, dict[str, Any]] = defaultdict(dict)
    names = {(write.alias.namespace, write.alias.name) for write in writes}
    for run_id, outputs in version_reads.written_outputs(writes):
        for output in outputs:
            if not isinstance(output, dict):
                continue
            space, name = output.get("namespace"), output.get("name")
            if not (isinstance(space, str) and isinstance(name, str)):
                continue
            if naming.normalise(space, name) in names:
                facets[run_id].update(output.get("facets") or {})
    # Statistics and data quality facts (ADR 0061, 0064): the writer's output facts, then
    # those of the runs that read this version, on top of the events' dataset facets.
    facts = run_facts.of_versions(dataset.id, list(runs))
    run_shapes = {data["id"]: data for data in shapes.runs_data(list(runs.values()))}
    answer = []
    for write in writes:
        run = runs[write.run_id]
        merged = {**facets.get(run.run_id_text, {}), **facts.get(run.id, {})}
        version_facets = shapes.redact(merged)
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
                "fields": shapes.schema_fields(version_facets, dataset),
                "tags": tags.marquez_names(dataset.tags),
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
    page = version_reads.dataset_writes(found, offset, limit)
    versions = within_budget(page.ids, lambda ids: _versions(found, page.rows(ids)))
    return {"versions": versions, "totalCount": page.total}


def dataset_version(request: Request, namespace: str, dataset: str, version: str) -> dict:
    found = _dataset(namespace, dataset)
    try:
        run_uuid = UUID(version)
    except ValueError:
        raise MarquezError(400, f"version must be a UUID (got {version!r}).") from None
    write = version_reads.dataset_write(found, run_uuid)
    if write is None:
        raise not_found(f"Version '{version}' of dataset '{dataset}'")
    return _versions(found, [write])[0]
