"""Marquez's writes on the mount that a steward's curation can be: soft deletes and tags.

``DELETE`` of a dataset, a job or a namespace retires it (ADR 0078), answered as Marquez
answers: 200 with the object as it was before (its own shape), 404 when it does not exist
or is retired already. A later event that names it brings it back, as in Marquez.

``POST``/``DELETE`` of a tag on a dataset, a dataset's field or a job tags or untags it
with a steward's label (ADR 0083, catalog.services.labels): 200 with the dataset or job
as it is now, 404 when it (or the field) does not exist. Untagging a producer's tag hides
it. ``PUT /tags/{tag}`` with ``{"description": ...}`` stores the steward's description of
the tag (``TagDescription``), answered as Marquez answers: 200 with the Tag. The catalog's
services write, audit and re-project: the mount parses and shapes.
"""

from collections.abc import Callable
from typing import Any

from rest_framework.request import Request

from api.marquez import resources, shapes
from api.marquez.errors import MarquezError, not_found
from catalog.reads import datasets as dataset_reads
from catalog.reads import jobs as job_reads
from catalog.services import labels, retirement
from catalog.services.retirement import Actor

REASON = "DELETE on the Marquez API"


def delete_dataset(request: Request, namespace: str, dataset: str) -> dict[str, Any]:
    found = dataset_reads.find_dataset(namespace, dataset)
    if found is None:
        raise not_found(f"Dataset '{dataset}' in namespace '{namespace}'")
    body = shapes.datasets_data([found])[0]
    retirement.retire(found, Actor.of(request.user), REASON)
    return body


def delete_job(request: Request, namespace: str, job: str) -> dict[str, Any]:
    found = job_reads.find_job(namespace, job)
    if found is None:
        raise not_found(f"Job '{job}' in namespace '{namespace}'")
    body = shapes.jobs_data([found])[0]
    retirement.retire(found, Actor.of(request.user), REASON)
    return body


def delete_namespace(request: Request, namespace: str) -> dict[str, Any]:
    body = resources.namespace(request, namespace)  # 404 when nothing in it is current
    retirement.retire_namespace(namespace, Actor.of(request.user), REASON)
    return body


def _dataset(namespace: str, dataset: str, field: str | None = None) -> Any:
    found = dataset_reads.find_dataset(namespace, dataset)
    if found is None:
        raise not_found(f"Dataset '{dataset}' in namespace '{namespace}'")
    if field is not None:
        names = {column["name"] for column in shapes.datasets_data([found])[0]["fields"]}
        if field not in names:
            raise not_found(f"Field '{field}' of dataset '{dataset}'")
    return found


def _job(namespace: str, job: str) -> Any:
    found = job_reads.find_job(namespace, job)
    if found is None:
        raise not_found(f"Job '{job}' in namespace '{namespace}'")
    return found


def _checked_tag(tag: str, field: str = "") -> None:
    # Before any lookup: a name the label columns cannot hold is the caller's error (400).
    if (problem := labels.tag_name_problem(tag, field)) is not None:
        raise MarquezError(400, problem)


def _tagged_dataset(request: Request, namespace: str, dataset: str, tag: str, **field: str):
    _checked_tag(tag, field.get("field", ""))
    found = _dataset(namespace, dataset, field.get("field"))
    write = labels.tag if request.method == "POST" else labels.untag
    write(request.user, found, tag, field.get("field", ""))
    return shapes.datasets_data([_dataset(namespace, dataset)])[0]


def tag_dataset(request: Request, namespace: str, dataset: str, tag: str) -> dict[str, Any]:
    return _tagged_dataset(request, namespace, dataset, tag)


def tag_field(
    request: Request, namespace: str, dataset: str, field: str, tag: str
) -> dict[str, Any]:
    return _tagged_dataset(request, namespace, dataset, tag, field=field)


def tag_job(request: Request, namespace: str, job: str, tag: str) -> dict[str, Any]:
    _checked_tag(tag)
    write = labels.tag if request.method == "POST" else labels.untag
    write(request.user, _job(namespace, job), tag)
    return shapes.jobs_data([_job(namespace, job)])[0]


def describe_tag(request: Request, tag: str) -> dict[str, Any]:
    body = request.data
    if not isinstance(body, dict):
        raise MarquezError(400, 'The body is a JSON object: {"description": "..."}.')
    description = body.get("description")
    problem = labels.tag_description_problem(tag, description)
    if problem is not None:
        raise MarquezError(400, problem)
    row = labels.describe_tag(request.user, tag, description)
    return {"name": row.name, "description": row.description or None}


_TAG_DATASET, _TAG_JOB = ("catalog.change_dataset",), ("catalog.change_job",)
# (method, endpoint name of api.marquez.paths.ROUTES) → its write, and the change
# permissions a staff session needs for it (a token needs the curate scope).
WRITES: dict[tuple[str, str], tuple[Callable[..., Any], tuple[str, ...]]] = {
    ("DELETE", "dataset"): (delete_dataset, ("catalog.change_dataset",)),
    ("DELETE", "job"): (delete_job, ("catalog.change_job",)),
    ("DELETE", "namespace"): (delete_namespace, ("catalog.change_dataset", "catalog.change_job")),
    ("POST", "dataset_tag"): (tag_dataset, _TAG_DATASET),
    ("DELETE", "dataset_tag"): (tag_dataset, _TAG_DATASET),
    ("POST", "field_tag"): (tag_field, _TAG_DATASET),
    ("DELETE", "field_tag"): (tag_field, _TAG_DATASET),
    ("POST", "job_tag"): (tag_job, _TAG_JOB),
    ("DELETE", "job_tag"): (tag_job, _TAG_JOB),
    # An upsert: a session needs both (the admin's add and change of a description).
    ("PUT", "tag"): (describe_tag, ("catalog.add_tagdescription", "catalog.change_tagdescription")),
}
