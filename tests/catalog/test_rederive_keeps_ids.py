"""A full rederive keeps every dataset's, job's and run's id (ADR 0077): same identity, same
id, so a bookmarked ``dataset:5`` or a client's stored job id still answers afterwards."""

import uuid

import pytest
from django.test import Client

from catalog.models import Dataset, DatasetAlias, Job, RememberedId, Run
from catalog.services.derive import derive_events, rederive
from ingest import demo
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db


def _identities() -> dict[str, dict]:
    aliases: dict[int, list[tuple[str, str]]] = {}
    for dataset_id, namespace, name in DatasetAlias.objects.values_list(
        "dataset_id", "namespace", "name"
    ):
        aliases.setdefault(dataset_id, []).append((namespace, name))
    return {
        "datasets": {key: sorted(names) for key, names in aliases.items()},
        "jobs": {job.id: (job.namespace, job.name) for job in Job.objects.all()},
        "runs": {run.id: (run.run_uuid, run.job_id) for run in Run.objects.all()},
    }


def test_rederive_of_the_real_fixtures_keeps_every_id(read_client: Client) -> None:
    loaded = demo.load(demo.demo_events())
    assert derive_events(loaded.event_ids).failed == 0
    before = _identities()
    assert len(before["datasets"]) >= 10 and len(before["runs"]) >= 10
    # The Spark/Hive identity case: one dataset under its HDFS location and its Hive table.
    t1 = Dataset.objects.for_alias("hive://dataproc-producer-test-m:9083", "default.t1").get()
    assert len(before["datasets"][t1.id]) >= 2

    result = rederive(batch_size=7)  # several batches, as a real rederive
    assert result.failed == 0

    assert _identities() == before
    assert not RememberedId.objects.exists()  # the memory goes once everything is derived
    answer = read_client.get(f"/api/v1/lineage/graph?node=dataset:{t1.id}&depth=1")
    assert answer.status_code == 200, answer.content
    for dataset_id in before["datasets"]:
        graph = read_client.get(f"/api/v1/lineage/graph?node=dataset:{dataset_id}&depth=1")
        assert graph.status_code == 200


def test_a_merge_during_rederive_keeps_the_remembered_id() -> None:
    """Derived one event per batch, the Hive table first gets a fresh id (its remembered id
    is held by the location seen before it); the symlink that joins them keeps the
    remembered id, although the table's name is the better display name (ADR 0020)."""
    table = {"namespace": "hive://m:9083", "name": "db.t", "type": "TABLE"}
    events = [
        run_event(
            "COMPLETE",
            1,
            str(uuid.uuid4()),
            job=("spark", "a"),
            outputs=[dataset("s3://lake", "t")],
        ),
        run_event(
            "COMPLETE",
            2,
            str(uuid.uuid4()),
            job=("trino", "b"),
            inputs=[dataset("hive://m:9083", "db.t")],
        ),
        run_event(
            "COMPLETE",
            3,
            str(uuid.uuid4()),
            job=("spark", "c"),
            outputs=[dataset("s3://lake", "t", symlinks=facet(identifiers=[table]))],
        ),
    ]
    assert derive_events(store([openlineage(event) for event in events])).failed == 0
    (only,) = Dataset.objects.all()
    assert (only.namespace, only.name) == ("hive://m:9083", "db.t")

    assert rederive(batch_size=1).failed == 0

    (again,) = Dataset.objects.all()
    assert again.id == only.id
    assert (again.namespace, again.name) == ("hive://m:9083", "db.t")
    assert Dataset.objects.for_alias("s3://lake", "t").get().id == only.id
