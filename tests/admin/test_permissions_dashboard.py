"""Who may do what in the admin, and the dashboard on its index."""

import pytest
from django.test import Client

from catalog.admin.dashboard import build_dashboard
from catalog.models import AliasRule, Dataset


@pytest.mark.django_db
def test_reader_can_look_but_not_curate(catalog: list[int], reader_client: Client) -> None:
    dataset = Dataset.objects.first()
    assert reader_client.get("/admin/catalog/dataset/").status_code == 200
    assert reader_client.get(f"/admin/catalog/dataset/{dataset.pk}/change/").status_code == 200
    assert reader_client.get("/admin/catalog/aliasrule/").status_code == 200
    assert reader_client.get("/admin/catalog/aliasrule/add/").status_code == 403
    page = reader_client.get("/admin/catalog/dataset/").content.decode()
    assert "merge_action" not in page
    assert "rederive_selected" not in reader_client.get("/admin/ingest/event/").content.decode()
    assert reader_client.get("/admin/ingest/event/rederive/").status_code == 403
    response = reader_client.post(
        "/admin/catalog/aliasrule/add/",
        {
            "slug": "x",
            "action": "equate",
            "namespace": "a",
            "target_namespace": "b",
            "name_pattern": "(.*)",
            "target_name": r"\1",
            "priority": "1",
        },
    )
    assert response.status_code == 403
    assert not AliasRule.objects.exists()


@pytest.mark.django_db
def test_steward_can_curate(catalog: list[int], steward_client: Client) -> None:
    assert steward_client.get("/admin/catalog/aliasrule/add/").status_code == 200
    assert "merge_action" in steward_client.get("/admin/catalog/dataset/").content.decode()
    assert "rederive_selected" in steward_client.get("/admin/ingest/event/").content.decode()
    assert steward_client.get("/admin/ingest/event/rederive/").status_code == 200
    # Derived rows stay read-only even for stewards.
    dataset = Dataset.objects.first()
    assert steward_client.post(f"/admin/catalog/dataset/{dataset.pk}/delete/").status_code == 403


@pytest.mark.django_db
def test_only_superusers_manage_tokens(
    steward_client: Client, reader_client: Client, super_client: Client
) -> None:
    for client in (steward_client, reader_client):
        assert client.get("/admin/ingest/apitoken/").status_code == 403
        assert "apitoken" not in client.get("/admin/").content.decode()
    assert super_client.get("/admin/ingest/apitoken/").status_code == 200


@pytest.mark.django_db
def test_dashboard_draws_charts_on_the_index(catalog: list[int], steward_client: Client) -> None:
    page = steward_client.get("/admin/").content.decode()
    assert 'id="lineage-dashboard"' in page
    assert page.count('<svg class="lc-chart"') >= 3  # per hour, producers, runs by state
    assert "https://example.com/admin-tests" in page  # top producer
    assert "/admin/ingest/event/?derivation_status__exact=failed" in page


@pytest.mark.django_db
def test_dashboard_figures(catalog: list[int]) -> None:
    dashboard = build_dashboard()
    assert len(dashboard.hourly) == 48
    assert dashboard.events_48h == len(catalog)  # lineage events and one metadata record
    assert dashboard.backlog == 0 and dashboard.lag_seconds is None
    assert dashboard.totals["datasets"] == Dataset.objects.count()
    assert dict(dashboard.runs_by_state).get("FAIL") == 1


@pytest.mark.django_db
def test_dashboard_counts_failures_and_lag(catalog: list[int]) -> None:
    from ingest.models import Event

    Event.objects.filter(pk=catalog[0]).update(derivation_status="failed", derivation_error="boom")
    Event.objects.filter(pk=catalog[1]).update(derivation_status="pending")
    dashboard = build_dashboard()
    assert dashboard.failed == 1 and dashboard.failed_recent[0][2] == "boom"
    assert dashboard.backlog == 1 and dashboard.lag_seconds is not None
