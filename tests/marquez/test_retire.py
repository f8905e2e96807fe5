"""Marquez's soft deletes on the mount (ADR 0078): DELETE retires, answered as Marquez
answers; the object is then gone from the mount's reads, lists, search and lineage."""

from urllib.parse import quote

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from catalog.models import Job, Retirement
from ingest.services import create_token
from tests.marquez.conftest import JOB_NS, PG, S3

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_once: None, db: None) -> None:
    """The conftest's world, written once for this module's tests (ADR 0210)."""


BASE = "/marquez/api/v1"
DAILY = f"{BASE}/namespaces/{quote(S3, safe='')}/datasets/{quote('raw/orders/daily', safe='')}"
LOAD = f"{BASE}/namespaces/{JOB_NS}/jobs/etl.load_orders"


def _call(client: Client, method: str, path: str):
    return getattr(client, method)(path, RAW_URI=path)


@pytest.fixture
def curate_client(db) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {create_token('ci', 'curate')[1]}")


def test_delete_dataset_answers_the_dataset_then_it_is_gone(world, curate_client, read_client):
    before = _call(read_client, "get", DAILY).json()
    response = _call(curate_client, "delete", DAILY)
    assert response.status_code == 200
    assert response.json() == before
    assert Retirement.objects.get().retired_by == "token:ci"
    assert _call(read_client, "get", DAILY).status_code == 404
    listed = _call(read_client, "get", f"{BASE}/namespaces/{quote(S3, safe='')}/datasets")
    assert listed.json()["totalCount"] == 0
    found = _call(read_client, "get", f"{BASE}/search?q=daily").json()["results"]
    assert [hit["name"] for hit in found if hit["type"] == "DATASET"] == [
        "analytics.public.daily_totals"
    ]
    # Its lineage: the graph around the job no longer reaches it.
    node = f"job:{JOB_NS}:etl.load_orders"
    graph = _call(read_client, "get", f"{BASE}/lineage?nodeId={quote(node, safe='')}").json()
    assert not [n for n in graph["graph"] if "daily" in n["id"]]
    assert _call(curate_client, "delete", DAILY).status_code == 404  # retired already


def test_delete_job_unlinks_what_it_connected(world, curate_client, read_client):
    response = _call(curate_client, "delete", LOAD)
    assert response.status_code == 200 and response.json()["name"] == "etl.load_orders"
    assert _call(read_client, "get", LOAD).status_code == 404
    orders = f"dataset:{PG}:shop.public.orders"
    graph = _call(read_client, "get", f"{BASE}/lineage?nodeId={quote(orders, safe='')}").json()
    assert [n["id"] for n in graph["graph"]] == [orders]  # no path through the retired job


def test_delete_namespace_retires_everything_in_it(world, curate_client, read_client):
    response = _call(curate_client, "delete", f"{BASE}/namespaces/{JOB_NS}")
    assert response.status_code == 200 and response.json()["name"] == JOB_NS
    assert not Job.objects.current().exists()
    names = [
        n["name"] for n in _call(read_client, "get", f"{BASE}/namespaces").json()["namespaces"]
    ]
    assert JOB_NS not in names
    assert _call(read_client, "get", f"{BASE}/namespaces/{JOB_NS}").status_code == 404


def test_only_curate_tokens_and_sessions_that_may_change_retire(world, read_client, ingest_client):
    assert _call(Client(), "delete", LOAD).status_code == 401
    assert _call(read_client, "delete", LOAD).status_code == 403
    assert _call(ingest_client, "delete", LOAD).status_code == 403
    session = Client()
    user = User.objects.create_user("stew", is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_job", "view_dataset", "view_run"])
    )
    session.force_login(user)
    assert _call(session, "delete", LOAD).status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="change_job"))
    session.force_login(User.objects.get(pk=user.pk))
    assert _call(session, "delete", LOAD).status_code == 200
    assert Retirement.objects.get().retired_by == "stew"
