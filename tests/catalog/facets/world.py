"""One small world for the facet cases: a run of a job reading one dataset and writing
another, each facet put where the spec puts it, ingested and derived through the real
paths, then read back through /api/v1 and the Marquez mount."""

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.test import Client

from catalog.models import Dataset, Job
from tests.marquez.conftest import MarquezClient

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark"
JOB = ("facets-test", "orders.daily")
RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d7701"
PARENT_RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d7700"
INPUT = ("postgres://db:5432", "shop.public.orders")
OUTPUT = ("s3://lake", "marts/orders")


def facet(schema: str, **content: Any) -> dict[str, Any]:
    """A facet as a producer sends it (``schema``: the spec file's name and version)."""
    name = schema.split("/")[-1]
    return {
        "_producer": PRODUCER,
        "_schemaURL": f"https://openlineage.io/spec/facets/{schema}.json#/$defs/{name}",
        **content,
    }


def event(
    event_type: str = "COMPLETE",
    job: dict[str, Any] | None = None,
    run: dict[str, Any] | None = None,
    input_facets: dict[str, Any] | None = None,
    input_io: dict[str, Any] | None = None,
    output_facets: dict[str, Any] | None = None,
    output_io: dict[str, Any] | None = None,
) -> dict[str, Any]:
    source: dict[str, Any] = {"namespace": INPUT[0], "name": INPUT[1]}
    target: dict[str, Any] = {"namespace": OUTPUT[0], "name": OUTPUT[1]}
    for into, key, value in (
        (source, "facets", input_facets),
        (source, "inputFacets", input_io),
        (target, "facets", output_facets),
        (target, "outputFacets", output_io),
    ):
        if value:
            into[key] = value
    return {
        "eventType": event_type,
        "eventTime": "2026-03-01T10:05:00Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": RUN, "facets": run or {}},
        "job": {"namespace": JOB[0], "name": JOB[1], "facets": job or {}},
        "inputs": [source],
        "outputs": [target],
    }


def q(text: str) -> str:
    return quote(text, safe="")


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.content
    return response.json()


@dataclass
class Reads:
    """The world read back through both surfaces."""

    api: Client
    mz: MarquezClient

    def job(self) -> dict[str, Any]:
        job = Job.objects.get(namespace=JOB[0], name=JOB[1])
        return ok(self.api.get(f"/api/v1/jobs/{job.id}"))

    def run(self) -> dict[str, Any]:
        return ok(self.api.get(f"/api/v1/runs/{RUN}"))

    def dataset(self, alias: tuple[str, str] = OUTPUT) -> dict[str, Any]:
        dataset = Dataset.objects.for_alias(*alias).get()
        return ok(self.api.get(f"/api/v1/datasets/{dataset.id}"))

    def mz_job(self) -> dict[str, Any]:
        return ok(self.mz.get(f"/namespaces/{q(JOB[0])}/jobs/{q(JOB[1])}"))

    def mz_run(self) -> dict[str, Any]:
        return ok(self.mz.get(f"/jobs/runs/{RUN}"))

    def _mz_dataset_path(self, alias: tuple[str, str]) -> str:
        dataset = Dataset.objects.for_alias(*alias).get()
        return f"/namespaces/{q(dataset.namespace)}/datasets/{q(dataset.name)}"

    def mz_dataset(self, alias: tuple[str, str] = OUTPUT) -> dict[str, Any]:
        return ok(self.mz.get(self._mz_dataset_path(alias)))

    def mz_version(self, alias: tuple[str, str] = OUTPUT) -> dict[str, Any]:
        """The dataset's newest version (the run that wrote it)."""
        return ok(self.mz.get(self._mz_dataset_path(alias) + "/versions"))["versions"][0]
