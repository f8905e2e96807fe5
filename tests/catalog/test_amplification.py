"""Work in proportion to what was sent (issue 38): one wide event makes bounded rows."""

import uuid

import pytest
from django.conf import settings
from django.test import Client, override_settings

from catalog.models import Dataset, JobLineageEdge, LineageEdge, Run
from catalog.services.derive import derive_events
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(read_client: Client) -> Client:
    return read_client


def _wide_run(inputs: int, outputs: int) -> Run:
    event = run_event(
        "COMPLETE",
        1,
        str(uuid.uuid4()),
        inputs=[dataset("ns", f"in{index}") for index in range(inputs)],
        outputs=[dataset("ns", f"out{index}") for index in range(outputs)],
    )
    derive_events(store([openlineage(event)]))
    return Run.objects.get()


def test_a_runs_edges_stop_at_the_cap_and_the_cut_is_on_the_run(api) -> None:
    with override_settings(LINEAGE={**settings.LINEAGE, "MAX_RUN_EDGES": 10}):
        run = _wide_run(5, 4)  # 20 (input, output) pairs
    assert LineageEdge.objects.count() == 10
    assert run.lineage_edges_cut == 10
    # The first pairs by (input, output) dataset: two inputs x every output, then a third
    # input x two outputs.
    kept = sorted(LineageEdge.objects.values_list("source_id", "target_id"))
    inputs = sorted(
        Dataset.objects.filter(aliases__name__startswith="in").values_list("id", flat=True)
    )
    outputs = sorted(
        Dataset.objects.filter(aliases__name__startswith="out").values_list("id", flat=True)
    )
    assert kept == [
        *((i, o) for i in inputs[:2] for o in outputs),
        *((inputs[2], o) for o in outputs[:2]),
    ]
    # The job edges still name every input and output.
    assert JobLineageEdge.objects.count() == 9
    body = api.get(f"/api/v1/runs/{run.run_uuid}").json()
    assert body["lineage_edges_cut"] == 10


def test_a_run_within_the_cap_cuts_nothing() -> None:
    run = _wide_run(3, 3)
    assert LineageEdge.objects.count() == 9
    assert run.lineage_edges_cut == 0


def test_an_input_whose_pairs_were_cut_still_draws_its_job(api) -> None:
    with override_settings(LINEAGE={**settings.LINEAGE, "MAX_RUN_EDGES": 10}):
        _wide_run(5, 4)
    last = Dataset.objects.get(aliases__name="in4")  # none of its pairs was kept
    assert not LineageEdge.objects.filter(source=last).exists()
    body = api.get(f"/api/v1/lineage/graph?node=dataset:{last.id}&direction=downstream").json()
    assert ("job", "job") in {(node["type"], node.get("name")) for node in body["nodes"]}
