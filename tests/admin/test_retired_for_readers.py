"""What is retired is gone from the admin for a catalog reader, and there for a steward
(ADR 0078, issue 37 item 1): the lists, search, autocomplete, pages by id, the rows of other
pages that link to it, the explorer (for no one: it draws no retired node), the impact page
and the retirements' history.

End to end: events ingested and derived, a dataset and a job retired through the service,
every page fetched through the admin by a reader (view permissions only) and a steward.
"""

import pytest
from django.test import Client
from django.urls import reverse

from catalog.models import Dataset, DatasetAlias, Job
from catalog.services import retirement
from catalog.services.retirement import Actor

pytestmark = pytest.mark.django_db


@pytest.fixture
def retired(catalog: list[int], steward: object) -> tuple[Dataset, Job]:
    """lake/orders_report (written by report, out of lake/orders) and the legacy_load job
    (which wrote lake/raw/orders_v1 and _v2), retired by a steward."""
    dataset = Dataset.objects.get(name="orders_report")
    job = Job.objects.get(name="legacy_load")
    actor = Actor.of(steward)
    retirement.retire(dataset, actor, "replaced")
    retirement.retire(job, actor, "switched off")
    return dataset, job


def _pages(dataset: Dataset, job: Job) -> dict[str, str]:
    """Pages a reader may open that would name the retired dataset or job."""
    upstream = DatasetAlias.objects.get(namespace="s3://lake", name="orders").dataset
    source = Dataset.objects.get(name="shop.public.orders")
    return {
        "dataset list": reverse("admin:catalog_dataset_changelist"),
        "dataset list, retired": reverse("admin:catalog_dataset_changelist") + "?retired=yes",
        "dataset list, all": reverse("admin:catalog_dataset_changelist") + "?retired=all",
        "dataset search": reverse("admin:catalog_dataset_changelist") + "?q=report",
        "job list": reverse("admin:catalog_job_changelist") + "?retired=all",
        "job search": reverse("admin:catalog_job_changelist") + "?q=legacy",
        "autocomplete": reverse("admin:autocomplete")
        + "?app_label=catalog&model_name=lineageedge&field_name=source&term=report",
        "its upstream's page": reverse("admin:catalog_dataset_change", args=[upstream.pk]),
        "the legacy job's source's page": reverse("admin:catalog_dataset_change", args=[source.pk]),
        "edges": reverse("admin:catalog_lineageedge_changelist"),
        "job edges": reverse("admin:catalog_joblineageedge_changelist"),
        "aliases": reverse("admin:catalog_datasetalias_changelist"),
        "runs": reverse("admin:catalog_run_changelist"),
        # Retiring records a change naming the dataset (ADR 0088): a reader sees none.
        "changes": reverse("admin:catalog_datasetchange_changelist"),
        # Retiring is a curation in the admin log, which names and links what it retired.
        "admin log": reverse("admin:admin_logentry_changelist"),
        "admin log search": reverse("admin:admin_logentry_changelist") + "?q=report",
        "explorer": reverse("lineage-explorer") + "?q=orders",
        "explorer, legacy": reverse("lineage-explorer") + "?q=legacy",
    }


def _names(dataset: Dataset, job: Job) -> list[str]:
    return [
        reverse("admin:catalog_dataset_change", args=[dataset.pk]),
        reverse("admin:catalog_job_change", args=[job.pk]),
        "orders_report",
        "legacy_load",
    ]


def _shown(client: Client, pages: dict[str, str], names: list[str]) -> dict[str, list[str]]:
    """Per page, which of ``names`` it shows (every page must answer 200)."""
    shown = {}
    for title, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, (title, response.status_code)
        shown[title] = [name for name in names if name in response.content.decode()]
    return shown


def test_a_reader_sees_nothing_retired_on_any_page(retired, reader_client):
    dataset, job = retired
    shown = _shown(reader_client, _pages(dataset, job), _names(dataset, job))
    assert {title: names for title, names in shown.items() if names} == {}


def test_a_steward_sees_what_is_retired_where_asked_for(retired, steward_client):
    dataset, job = retired
    pages = _pages(dataset, job)
    shown = _shown(steward_client, pages, _names(dataset, job))
    # The default lists, search and the explorer hide it for a steward too; asked for, and
    # on the pages that link to it, it is there: the reader's test above could fail.
    assert shown["dataset list"] == shown["dataset search"] == shown["explorer, legacy"] == []
    assert "orders_report" in shown["dataset list, retired"]
    assert "legacy_load" in shown["job list"]
    assert "orders_report" in shown["autocomplete"]
    assert "orders_report" in shown["its upstream's page"]
    assert "legacy_load" in shown["the legacy job's source's page"]
    assert "orders_report" in shown["edges"] and "legacy_load" in shown["runs"]
    assert "orders_report" in shown["changes"]
    assert {"orders_report", "legacy_load"} <= set(shown["admin log"])


def test_pages_by_id_of_what_is_retired_answer_only_a_steward(
    retired, reader_client, steward_client
):
    dataset, job = retired
    for url in (
        reverse("admin:catalog_dataset_change", args=[dataset.pk]),
        reverse("admin:catalog_job_change", args=[job.pk]),
    ):
        page = steward_client.get(url)
        assert page.status_code == 200 and "Retired" in page.content.decode()
        # The admin's answer to an id it does not have: back to the index, "does not exist".
        assert reader_client.get(url).status_code == 302
    impact = reverse("admin:catalog_dataset_impact", args=[dataset.pk])
    assert steward_client.get(impact).status_code == 200
    assert reader_client.get(impact).status_code == 404
    history = reverse("admin:catalog_retirement_changelist")
    assert "switched off" in steward_client.get(history).content.decode()
    assert reader_client.get(history).status_code == 403
    assert "retirement" not in reader_client.get(reverse("admin:index")).content.decode().lower()
