"""Issue 12 in the stewards' admin: facet problems, shared runIds, job edges, pinned titles.

The events are the project's own fixtures (tests/fixtures/fidelity, README there).
"""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from catalog.models import Dataset, DatasetAlias, Job, Run
from catalog.services import derive
from ingest.models import Event
from tests.admin.conftest import ingest_and_derive

pytestmark = pytest.mark.django_db

FIDELITY = Path(__file__).resolve().parents[1] / "fixtures" / "fidelity"


def fixtures(*names: str) -> list[dict[str, Any]]:
    return [orjson.loads((FIDELITY / name).read_bytes()) for name in names]


def test_facet_problems_filter_and_event_page(ingest_client, super_client: Client) -> None:
    ingest_and_derive(
        ingest_client, fixtures("ge_assertions_null_column.json", "runid_shared_a_start.json")
    )
    with_problems = Event.objects.get(job_name="customers_suite.validate")
    listed = super_client.get("/admin/ingest/event/?facet_problems=yes").context["cl"]
    assert [event.pk for event in listed.result_list] == [with_problems.pk]
    page = super_client.get(f"/admin/ingest/event/{with_problems.pk}/change/").content.decode()
    assert "/inputs/0/facets/schema/fields" in page
    assert "skipped by derivation" in page


def test_shared_run_ids_are_filtered_and_shown(ingest_client, super_client: Client) -> None:
    ingest_and_derive(
        ingest_client,
        fixtures(
            "runid_shared_a_start.json",
            "runid_shared_a_complete.json",
            "runid_shared_b_complete.json",
        ),
    )
    listed = super_client.get("/admin/catalog/run/?shares_run_id=yes").context["cl"]
    assert sorted(run.job.name for run in listed.result_list) == ["load_customers", "load_orders"]
    run = Run.objects.get(job__name="load_orders")
    page = super_client.get(f"/admin/catalog/run/{run.pk}/change/").content.decode()
    assert "load_customers" in page
    event = Event.objects.get(job_name="load_orders")
    event_page = super_client.get(f"/admin/ingest/event/{event.pk}/change/").content.decode()
    assert "runId also sent by another job" in event_page


def test_job_and_dataset_pages_show_job_edges(ingest_client, super_client: Client) -> None:
    ingest_and_derive(ingest_client, fixtures("ge_assertions_null_column.json"))
    check = Job.objects.get(name="customers_suite.validate")
    dataset = Dataset.objects.get(aliases__name="jaffle.public.customers")
    job_page = super_client.get(f"/admin/catalog/job/{check.pk}/change/").content.decode()
    assert "datasets it read and wrote (graph edges)" in job_page.lower()
    assert f"/admin/catalog/dataset/{dataset.pk}/change/" in job_page
    dataset_page = super_client.get(f"/admin/catalog/dataset/{dataset.pk}/change/").content
    assert f"/admin/catalog/job/{check.pk}/change/" in dataset_page.decode()
    edges = super_client.get(f"/admin/catalog/joblineageedge/?job={check.pk}").context["cl"]
    assert [(edge.direction, edge.dataset_id) for edge in edges.result_list] == [
        ("input", dataset.pk)
    ]


def test_a_steward_pins_a_display_name_and_rederive_keeps_it(
    ingest_client, steward_client: Client
) -> None:
    ingest_and_derive(ingest_client, fixtures("hive_warehouse_table.json"))
    path = DatasetAlias.objects.get(namespace="file", name="/tmp/warehouse/test.db/t1")
    assert (path.dataset.namespace, path.dataset.name) == ("hive://metastore:9083", "test.t1")
    response = steward_client.post(
        "/admin/catalog/datasetalias/",
        {"action": "pin_action", "_selected_action": [path.pk]},
    )
    assert response.status_code == 302
    dataset = Dataset.objects.get(pk=path.dataset_id)
    assert (dataset.namespace, dataset.name) == ("file", "/tmp/warehouse/test.db/t1")
    page = steward_client.get(f"/admin/catalog/dataset/{dataset.pk}/change/").content.decode()
    assert "pinned by a steward" in page

    derive.rederive()  # a clean derivation: new rows, the pin (steward input) kept
    dataset = DatasetAlias.objects.get(namespace="file", name=path.name).dataset
    assert (dataset.namespace, dataset.name) == ("file", "/tmp/warehouse/test.db/t1")

    steward_client.post(
        "/admin/catalog/dataset/", {"action": "unpin_action", "_selected_action": [dataset.pk]}
    )
    dataset.refresh_from_db()
    assert (dataset.namespace, dataset.name) == ("hive://metastore:9083", "test.t1")
