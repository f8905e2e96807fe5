"""A dataset version's facets are its run's events' facets of the dataset, merged in event
order, a later one winning (tests/marquez/test_version_facts.py). A streaming run's every
heartbeat names its outputs, and a page of versions read all of its events whole: 2,001
events of a 100-column schema were 68 MB and 3.2 s for one page. Each write's newest events
are read, ``WRITTEN_EVENTS_PER_PAGE`` for a page, at least a batch run's two (ADR 0172)."""

from urllib.parse import quote

import pytest
from django.test import Client

from catalog.models import Dataset
from catalog.reads import versions as version_reads
from catalog.reads.versions import WRITTEN_EVENTS_PER_PAGE
from catalog.services.derive import derive_events
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import openlineage, store
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

TOPIC = "kafka://k:9092"
STREAM = "00000000-0000-4000-8000-000000000001"
BATCH = "00000000-0000-4000-8000-000000000002"
HEARTBEATS = WRITTEN_EVENTS_PER_PAGE + 50


def _output(n: int) -> dict:
    return dataset(TOPIC, "out", custom=facet(heartbeat=n))


def test_a_page_reads_each_writes_newest_events_and_the_newest_facets_win(
    read_client: Client, steady_token_cache: None
) -> None:
    streaming = {"jobType": facet(processingType="STREAMING", integration="FLINK", jobType="JOB")}
    events = [
        run_event("RUNNING", n, STREAM, ("etl", "stream"), [], [_output(n)], job_facets=streaming)
        for n in range(HEARTBEATS)
    ]
    events.append(
        run_event("COMPLETE", HEARTBEATS, STREAM, ("etl", "stream"), [], [_output(HEARTBEATS)],
                  job_facets=streaming)
    )  # fmt: skip
    events += [
        run_event("START", 0, BATCH, ("etl", "batch"), [], [_output(-1)]),
        run_event("COMPLETE", 1, BATCH, ("etl", "batch"), [], [dataset(TOPIC, "out")]),
    ]
    derive_events(store([openlineage(event) for event in events]))
    response = MarquezClient(read_client).get(
        f"/namespaces/{quote(TOPIC, safe='')}/datasets/out/versions"
    )
    assert response.status_code == 200, response.content
    versions = {version["version"]: version for version in response.json()["versions"]}
    assert versions[STREAM]["facets"]["custom"]["heartbeat"] == HEARTBEATS
    # The batch run's START named a facet its COMPLETE did not: both of its events are read.
    assert versions[BATCH]["facets"]["custom"]["heartbeat"] == -1
    dataset_id = Dataset.objects.for_alias(TOPIC, "out").get().id
    page = version_reads.dataset_writes(Dataset.objects.get(id=dataset_id), 0, 10)
    read = version_reads.written_outputs(page.rows(page.ids))
    assert {run_id for run_id, _ in read} == {STREAM, BATCH}
    assert len(read) <= WRITTEN_EVENTS_PER_PAGE, len(read)  # HEARTBEATS + 3 before
