"""Marquez's tag writes on the mount (issue 41 item 1): POST/DELETE a tag on a dataset, a
dataset's field and a job write a steward's label (ADR 0083), answered with the object in
Marquez's shape; a curate token or a staff session that may change it; audited."""

import copy
import logging
from urllib.parse import quote

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission, User
from django.test import Client

from catalog.models import StewardLabel, TagDescription
from catalog.services.derive import derive_events
from ingest.models import Event
from ingest.services import create_token
from tests.marquez.conftest import EVENTS, JOB_NS, S3, schema

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


def test_a_dataset_is_tagged_and_untagged(world, curate_client, read_client, caplog):
    caplog.set_level(logging.INFO, logger="catalog.services.labels")
    response = _call(curate_client, "post", f"{DAILY}/tags/pii")
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "raw/orders/daily" and "pii" in response.json()["tags"]
    assert _call(read_client, "get", DAILY).json()["tags"] == ["pii"]
    assert "pii" in [
        tag["name"] for tag in _call(read_client, "get", f"{BASE}/tags").json()["tags"]
    ]
    label = StewardLabel.objects.get()
    assert (label.key, label.value, label.hides) == ("pii", "", False)
    assert (
        "curation actor=ci (api token) dataset" in caplog.text
    )  # a token's edit: audited in the log
    response = _call(curate_client, "delete", f"{DAILY}/tags/pii")
    assert response.status_code == 200 and response.json()["tags"] == []
    assert not StewardLabel.objects.exists()


def test_a_field_is_tagged_with_a_key_and_value(world, curate_client, read_client):
    response = _call(curate_client, "post", f"{DAILY}/fields/total/tags/class:money")
    assert response.status_code == 200, response.content
    fields = {field["name"]: field["tags"] for field in response.json()["fields"]}
    assert fields == {"order_id": [], "total": ["class:money"]}
    label = StewardLabel.objects.get()
    assert (label.field, label.key, label.value) == ("total", "class", "money")
    assert _call(curate_client, "post", f"{DAILY}/fields/nope/tags/pii").status_code == 404
    response = _call(curate_client, "delete", f"{DAILY}/fields/total/tags/class:money")
    assert response.status_code == 200
    assert {field["name"]: field["tags"] for field in response.json()["fields"]}["total"] == []


def test_a_job_is_tagged_by_a_staff_session_and_logged(world):
    user = User.objects.create_user("stew", is_staff=True)
    session = Client()
    session.force_login(user)
    assert _call(session, "post", f"{LOAD}/tags/nightly").status_code == 403
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_job", "view_run", "view_dataset"])
    )
    assert _call(session, "post", f"{LOAD}/tags/nightly").status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="change_job"))
    session = Client()
    session.force_login(User.objects.get(pk=user.pk))
    response = _call(session, "post", f"{LOAD}/tags/nightly")
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "etl.load_orders" and response.json()["tags"] == ["nightly"]
    entry = LogEntry.objects.get()
    assert entry.user == user and "nightly" in entry.change_message
    assert _call(session, "delete", f"{LOAD}/tags/nightly").json()["tags"] == []


def test_only_curate_tokens_tag_and_missing_objects_are_404(world, read_client, curate_client):
    assert _call(Client(), "post", f"{DAILY}/tags/pii").status_code == 401
    assert _call(read_client, "post", f"{DAILY}/tags/pii").status_code == 403
    missing = f"{BASE}/namespaces/{quote(S3, safe='')}/datasets/nope/tags/pii"
    response = _call(curate_client, "post", missing)
    assert response.status_code == 404 and response.json()["code"] == 404
    assert _call(curate_client, "post", f"{BASE}/namespaces/x/jobs/y/tags/t").status_code == 404
    # A tag's description is a curate write too.
    assert _call(read_client, "put", f"{BASE}/tags/pii").status_code == 403
    assert _call(Client(), "put", f"{BASE}/tags/pii").status_code == 401
    assert not StewardLabel.objects.exists() and not TagDescription.objects.exists()


def test_a_tag_name_the_labels_cannot_hold_is_a_400_and_stores_nothing(
    world, ingest_client, curate_client
):
    """A key or value over 200 characters reached the label's columns and failed there (a
    500); an empty key (``:``, ``:v``, blanks) was stored as a tag with no name."""
    long_field = "f" * 501
    event = copy.deepcopy(EVENTS[1])
    event["outputs"] = [{"namespace": S3, "name": "wide", "facets": {"schema": schema(long_field)}}]
    assert ingest_client.post(f"{BASE}/lineage", event, "application/json").status_code == 201
    derive_events(list(Event.objects.values_list("id", flat=True)))
    wide = f"{BASE}/namespaces/{quote(S3, safe='')}/datasets/wide"
    bad = ["k" * 201, "k:" + "v" * 201, "k" * 5000, ":", ":v", " ", "  :  "]
    for method in ("post", "delete"):
        for base in (DAILY, f"{DAILY}/fields/total", LOAD):
            for tag in bad:
                response = _call(curate_client, method, f"{base}/tags/{quote(tag, safe='')}")
                assert response.status_code == 400, (method, base, tag[:10], response.content)
                assert set(response.json()) == {"code", "message", "details"}
        response = _call(curate_client, method, f"{wide}/fields/{long_field}/tags/pii")
        assert response.status_code == 400, (method, response.content)
    assert not StewardLabel.objects.exists()
    # At the bounds: stored, and named back as sent.
    edge = "k" * 200 + ":" + "v" * 200
    response = _call(curate_client, "post", f"{DAILY}/tags/{edge}")
    assert response.status_code == 200 and response.json()["tags"] == [edge]
    assert _call(curate_client, "post", f"{wide}/fields/{'f' * 500}/tags/pii").status_code == 404
