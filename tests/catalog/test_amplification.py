"""Work in proportion to what was sent (issue 38): one wide event makes bounded rows."""

import uuid

import pytest
from django.conf import settings
from django.test import Client, override_settings

from catalog.models import ColumnLineageEdge, Dataset, JobLineageEdge, LineageEdge, Run
from catalog.services.derive import derive_events
from tests.catalog.conftest import dataset, facet, run_event
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


def test_a_run_within_the_cap_cuts_nothing(api) -> None:
    run = _wide_run(3, 3)
    assert LineageEdge.objects.count() == 9
    assert run.lineage_edges_cut == 0
    assert not run.job.lineage_edges_cut
    body = api.get(f"/api/v1/lineage/graph?node=job:{run.job_id}").json()
    assert "run_edges" not in body["cut"]


def test_an_input_whose_pairs_were_cut_still_draws_its_job(api) -> None:
    with override_settings(LINEAGE={**settings.LINEAGE, "MAX_RUN_EDGES": 10}):
        _wide_run(5, 4)
    last = Dataset.objects.get(aliases__name="in4")  # none of its pairs was kept
    assert not LineageEdge.objects.filter(source=last).exists()
    body = api.get(f"/api/v1/lineage/graph?node=dataset:{last.id}&direction=downstream").json()
    assert ("job", "job") in {(node["type"], node.get("name")) for node in body["nodes"]}
    # The walk stops at the job (ADR 0080: the cut is kept) and the answer says where.
    job = Run.objects.get().job
    assert job.lineage_edges_cut
    assert not any(node["name"].startswith("out") for node in body["nodes"])
    assert body["truncated"] is True
    limit = settings.LINEAGE["MAX_RUN_EDGES"]
    assert body["cut"]["run_edges"] == {"limit": limit, "jobs": [f"job:{job.id}"]}
    # Not only from a cut input: any graph drawing the job says so.
    around = api.get(f"/api/v1/lineage/graph?node=job:{job.id}").json()
    assert around["cut"]["run_edges"]["jobs"] == [f"job:{job.id}"]


def _transformations_of_one_field(count: int) -> None:
    """One event: ``count`` transformations of one input field into one output field."""
    transformations = [
        {"type": "DIRECT", "subtype": "TRANSFORMATION", "description": f"t{index}"}
        for index in range(count)
    ]
    column_lineage = facet(
        fields={
            "total": {
                "inputFields": [
                    {
                        "namespace": "ns",
                        "name": "in",
                        "field": "amount",
                        "transformations": transformations,
                    }
                ]
            }
        }
    )
    event = run_event(
        "COMPLETE",
        1,
        str(uuid.uuid4()),
        inputs=[dataset("ns", "in")],
        outputs=[dataset("ns", "out", columnLineage=column_lineage)],
    )
    derive_events(store([openlineage(event)]))


def test_column_edges_served_stop_at_the_cap_and_say_how_many_were_left_out(api) -> None:
    _transformations_of_one_field(8)
    assert ColumnLineageEdge.objects.count() == 8
    root = Dataset.objects.get(aliases__name="in")
    with override_settings(LINEAGE={**settings.LINEAGE, "MAX_COLUMN_EDGES": 5}):
        response = api.get(f"/api/v1/lineage/graph?node=dataset:{root.id}&columns=true")
    assert response.status_code == 200, response.content
    body = response.json()
    assert len(body["column_edges"]) == 5
    assert all(edge["current"] for edge in body["column_edges"])  # the one run made them
    assert body["truncated"] is True
    assert body["cut"]["column_edges"] == {
        "limit": 5,
        "omitted": 3,
        "omitted_is_lower_bound": False,
    }
    # Within the cap nothing is cut, and the answer says so.
    whole = api.get(f"/api/v1/lineage/graph?node=dataset:{root.id}&columns=true").json()
    assert len(whole["column_edges"]) == 8
    assert whole["truncated"] is False and "column_edges" not in whole["cut"]
