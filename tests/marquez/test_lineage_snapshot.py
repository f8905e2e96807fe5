"""The Marquez mount's graph and the objects it shares its shapes with, byte for byte, on a
fixed store (issue 42, ADR 0110).

The mount's ``/lineage`` nodes were made cheaper (versions named without ``uuid.UUID``, a
job's version named once for the job and its latest run): the answers must not change.
tests/fixtures/marquez_snapshot.json holds, for each request below, the status and the
body's SHA-256 and length that the code before that change gave on
``reads_snapshot_store``'s store (fixed ids and times). A change that alters an answer on
purpose regenerates it: ``MARQUEZ_SNAPSHOT_WRITE=1 .venv/bin/pytest
tests/marquez/test_lineage_snapshot.py`` (and says why in its commit).
"""

from pathlib import Path
from urllib.parse import quote

import pytest

from catalog.models import Dataset, Job, Run
from tests.api import reads_snapshot_store
from tests.api.snapshots import assert_answers_unchanged

pytestmark = pytest.mark.django_db

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "marquez_snapshot.json"
MOUNT = "/marquez/api/v1"


def _node(kind: str, row: Dataset | Job) -> str:
    return quote(f"{kind}:{row.namespace}:{row.name}", safe="")


def test_the_marquez_answers_are_unchanged(read_client, steady_token_cache):
    reads_snapshot_store.build()
    # Run facets, one with a secret that must come out redacted, on every other run: the
    # graph's jobs show their latest run whole.
    for run in Run.objects.filter(id__in=range(0, 400, 2)):
        run.facets = {
            "processing_engine": {"name": "spark", "version": "3.5.1", "id": run.id},
            "spark_properties": {"properties": {"spark.password": "s3cr3t-run-facet", "n": 1.5e-7}},
        }
        run.save(update_fields=["facets"])
    datasets = {row.id: row for row in Dataset.objects.filter(id__in=(1, 3, 14, 23, 45))}
    jobs = {row.id: row for row in Job.objects.filter(id__in=(1, 3, 7))}
    requests = [
        *(f"{MOUNT}/lineage?nodeId={_node('dataset', row)}" for row in datasets.values()),
        *(f"{MOUNT}/lineage?nodeId={_node('job', row)}&depth=2" for row in jobs.values()),
        f"{MOUNT}/lineage?nodeId={_node('dataset', datasets[3])}&depth=1",
        f"{MOUNT}/lineage?nodeId={_node('dataset', datasets[14])}&depth=20",
        *(
            f"{MOUNT}/namespaces/{quote(row.namespace, safe='')}/jobs/{quote(row.name, safe='')}"
            for row in jobs.values()
        ),
        *(
            f"{MOUNT}/namespaces/{quote(row.namespace, safe='')}/jobs/"
            f"{quote(row.name, safe='')}/runs?limit=5"
            for row in jobs.values()
        ),
        *(
            f"{MOUNT}/namespaces/{quote(row.namespace, safe='')}/datasets/"
            f"{quote(row.name, safe='')}"
            for row in datasets.values()
        ),
        f"{MOUNT}/jobs?limit=20",
    ]
    bodies = {path: read_client.get(path) for path in requests}
    assert_answers_unchanged(bodies, ANSWERS, "MARQUEZ_SNAPSHOT_WRITE")
    # Not vacuous: the graphs have jobs with a latest run, and datasets with fields.
    graph = bodies[requests[1]].json()["graph"]
    latest = [node["data"]["latestRun"] for node in graph if node["type"] == "JOB"]
    assert any(run and run["facets"] for run in latest)
    assert b"s3cr3t-run-facet" not in b"".join(body.content for body in bodies.values())
    assert any(node["type"] == "DATASET" and node["data"]["fields"] for node in graph)
