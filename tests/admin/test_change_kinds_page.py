"""Issue 40 item 3 (ADR 0088): the Changes page, a dataset's page and a job's page show
the lineage and run changes."""

import pytest

from catalog.models import Dataset, DatasetChange, Job
from tests.api.project_fixtures import derive
from tests.api.test_change_kinds import EVENTS, NS, RUNS

pytestmark = pytest.mark.django_db


def test_the_admin_pages_show_them(steward_client) -> None:
    derive(*EVENTS)
    page = steward_client.get("/admin/catalog/datasetchange/").content.decode()
    assert "from b via load" in page and f"run {RUNS[3]} failed after run {RUNS[2]}" in page
    out = Dataset.objects.for_alias(NS, "out").get().id
    body = steward_client.get(f"/admin/catalog/dataset/{out}/change/").content.decode()
    assert "from a via load" in body
    job = Job.objects.get(name="load").id
    body = steward_client.get(f"/admin/catalog/job/{job}/change/").content.decode()
    assert f"run {RUNS[3]} failed after run {RUNS[2]}" in body
    stopped = DatasetChange.objects.get(kind="edge_stopped")
    detail = steward_client.get(f"/admin/catalog/datasetchange/{stopped.pk}/change/")
    assert detail.status_code == 200 and RUNS[1] in detail.content.decode()
