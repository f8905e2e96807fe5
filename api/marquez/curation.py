"""Marquez's soft deletes on the mount (ADR 0078): ``DELETE`` of a dataset, a job or a
namespace retires it, answered as Marquez answers: 200 with the object as it was before
(its own shape), 404 when it does not exist or is retired already.

A later event that names it brings it back, as in Marquez. The retirement is the catalog's
(catalog.services.retirement): the mount parses the path and shapes the answer.
"""

from collections.abc import Callable
from typing import Any

from rest_framework.request import Request

from api.marquez import resources, shapes
from api.marquez.errors import not_found
from catalog.reads import datasets as dataset_reads
from catalog.reads import jobs as job_reads
from catalog.services import retirement
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


# Endpoint name (api.marquez.paths.ROUTES) → its DELETE, and the change permissions a
# staff session needs for it (a token needs the curate scope).
DELETES: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "dataset": (delete_dataset, ("catalog.change_dataset",)),
    "job": (delete_job, ("catalog.change_job",)),
    "namespace": (delete_namespace, ("catalog.change_dataset", "catalog.change_job")),
}
