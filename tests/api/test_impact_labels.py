"""Issue 40 item 1: the impact report's owners and tags are the catalog's labels (ADR 0083),
as /api/v1's dataset and job details show them: the producer's and a steward's, a hidden
producer tag left out, a column's tags those of its field; in JSON, CSV and the admin's
Impact view, in a pinned number of queries whatever the number of items."""

import csv
import io

import pytest
from django.test import Client

from catalog.models import Dataset, Job
from catalog.services import labels
from tests.api.test_impact import (  # noqa: F401 (store and the module's rows: fixtures)
    BUILD,
    NS,
    OTHER,
    _store_once,
    by_id,
    impact,
    job_ref,
    ref,
    store,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(store: None, django_user_model) -> Client:  # noqa: F811
    """store, with a steward's labels: orders gets an owner and a tag and hides the
    producer's pii tag, revenue's total column a tag, build_revenue an owner. A superuser's
    admin session to read the Impact view with."""
    user = django_user_model.objects.create_superuser("steward", "s@example.com", "x")
    orders = Dataset.objects.for_alias(NS, "orders").get()
    revenue = Dataset.objects.for_alias(NS, "revenue").get()
    build = Job.objects.get(namespace=BUILD[0], name=BUILD[1])
    labels.label_holder(user, orders, "owner", "user:ana")
    labels.label_holder(user, orders, "tag", "tier", "gold")
    labels.label_holder(user, orders, "tag", "pii", "true", hides=True)
    labels.label_holder(user, revenue, "tag", "sensitive", field="total")
    labels.label_holder(user, build, "owner", "team:etl")
    client = Client()
    client.force_login(user)
    return client


def detail(api, path: str) -> dict:
    response = api.get(path)
    assert response.status_code == 200, response.content
    return response.json()


def test_owners_and_tags_are_those_the_details_show(api, labelled) -> None:
    items = by_id(impact(api, node=ref("dash", OTHER), direction="upstream"))
    orders = items[(ref("orders"), "")]
    shown = detail(api, f"/api/v1/datasets/{ref('orders').split(':')[1]}")
    assert (
        orders["owners"]
        == shown["owners"]
        == [
            {"name": "team:finance", "type": "MAINTAINER", "source": "producer"},
            {"name": "user:ana", "type": "", "source": "steward"},
        ]
    )
    # The hidden producer tag is gone; the column's tag (amount) is the column's.
    assert orders["tags"] == [tag for tag in shown["tags"] if not tag["field"]]
    assert orders["tags"] == [
        {"key": "tier", "value": "gold", "field": "", "source": "steward", "origin": ""}
    ]
    build = items[(job_ref(BUILD), "")]
    job = detail(api, f"/api/v1/jobs/{build['id'].split(':')[1]}")
    assert (
        build["owners"] == job["owners"] == [{"name": "team:etl", "type": "", "source": "steward"}]
    )


def test_a_columns_tags_are_its_fields_as_the_details_show_them(api, labelled) -> None:
    items = by_id(impact(api, node=ref("orders"), field="amount"))
    total = items[(ref("revenue"), "total")]
    shown = detail(api, f"/api/v1/datasets/{ref('revenue').split(':')[1]}")
    assert total["tags"] == [tag for tag in shown["tags"] if tag["field"] == "total"]
    assert total["tags"] == [
        {"key": "sensitive", "value": "", "field": "total", "source": "steward", "origin": ""}
    ]
    assert total["owners"] == []
    assert items[(ref("revenue"), "")]["tags"] == []  # the column's tag is not the dataset's


def test_csv_and_the_admin_view_show_the_same_labels(api, labelled) -> None:
    node = ref("dash", OTHER)
    response = api.get("/api/v1/impact", {"node": node, "direction": "upstream", "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    (orders,) = [row for row in rows if row["id"] == ref("orders") and not row["field"]]
    assert (orders["owners"], orders["tags"]) == ("team:finance user:ana", "tier=gold")
    page = labelled.get(
        f"/admin/catalog/dataset/{node.split(':')[1]}/impact/", {"direction": "upstream"}
    ).content.decode()
    assert "tier=gold" in page and "user:ana" in page
    assert "pii=true" not in page  # hidden by the steward


def test_queries_stay_pinned_with_labels(api, labelled, django_assert_num_queries) -> None:
    node = ref("orders")
    # As tests/api/test_impact.py's pin: the labels are columns of the rows read already.
    with django_assert_num_queries(8):
        response = api.get("/api/v1/impact", {"node": node})
    assert response.status_code == 200
    assert any(item["owners"] for item in response.json()["items"])
