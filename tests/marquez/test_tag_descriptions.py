"""Marquez's ``PUT /tags/{tag}`` on the mount (issue 41 item 1): a steward's description of
a tag (``TagDescription``), listed on ``GET /tags`` with the tags in use, edited in the
admin too, kept across a rederive; a curate token or a staff session that may describe."""

import io
import json
import logging

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from catalog.models import TagDescription
from catalog.permissions import STEWARDS
from ingest.services import create_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_once: None, db: None) -> None:
    """The conftest's world, written once for this module's tests (ADR 0210)."""


BASE = "/marquez/api/v1"


def _put(client: Client, tag: str, body: object, raw: bool = False):
    path = f"{BASE}/tags/{tag}"
    data = body if raw else json.dumps(body)
    return client.put(path, data=data, content_type="application/json", RAW_URI=path)


def _listed(client: Client, **params: str) -> dict[str, str | None]:
    response = client.get(f"{BASE}/tags", params, RAW_URI=f"{BASE}/tags")
    assert response.status_code == 200, response.content
    return {tag["name"]: tag["description"] for tag in response.json()["tags"]}


@pytest.fixture
def curate_client(db) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {create_token('ci', 'curate')[1]}")


def test_a_tag_is_described_listed_and_kept_by_rederive(world, curate_client, read_client, caplog):
    caplog.set_level(logging.INFO, logger="catalog.services.labels")
    response = _put(curate_client, "pii", {"description": "Personal data."})
    assert response.status_code == 200, response.content
    assert response.json() == {"name": "pii", "description": "Personal data."}
    assert "curation actor=ci (api token) tagdescription" in caplog.text
    # Described before anything carries it: listed, as Marquez lists the tags it was given.
    assert _listed(read_client)["pii"] == "Personal data."
    # A tag in use is listed with its description once it has one.
    tagged = f"{BASE}/namespaces/airflow-prod/jobs/etl.load_orders/tags/class:gold"
    assert curate_client.post(tagged, RAW_URI=tagged).status_code == 200
    assert _listed(read_client)["class:gold"] is None
    assert _put(curate_client, "class:gold", {"description": "Tier 1"}).status_code == 200
    assert _listed(read_client) == {"pii": "Personal data.", "class:gold": "Tier 1"}
    # A second PUT replaces; one without a description keeps it (Marquez's upsert).
    assert _put(curate_client, "pii", {"description": "PII"}).json()["description"] == "PII"
    assert _put(curate_client, "pii", {}).json() == {"name": "pii", "description": "PII"}
    assert TagDescription.objects.count() == 2
    call_command("rederive", stdout=io.StringIO())
    assert _listed(read_client) == {"pii": "PII", "class:gold": "Tier 1"}


def test_bad_descriptions_are_400_in_marquez_shape(world, curate_client):
    for body in (["x"], {"description": 5}, {"description": "x" * 2001}):
        response = _put(curate_client, "pii", body)
        assert response.status_code == 400, (body, response.content)
        assert response.json()["code"] == 400
    response = _put(curate_client, "pii", "{not json", raw=True)
    assert response.status_code == 400 and response.json()["code"] == 400
    assert _put(curate_client, "pii", {"description": "a\x00b"}).status_code == 400
    assert _put(curate_client, "k" * 201, {"description": "long"}).status_code == 400
    assert not TagDescription.objects.exists()


@pytest.mark.parametrize("depth", [65, 1000, 1025, 5000])
def test_hostile_bodies_are_400_in_marquez_shape(world, curate_client, depth):
    """DRF's default parser (the stdlib's recursive decoder, no bound) answered a body of
    5,000 nested arrays with a RecursionError, a 500, and read a body of any size whole.
    The mount's body is read as ingest reads one (api/marquez/body.py)."""
    nested = "[" * depth + "]" * depth
    for body in (
        nested,
        '{"description": ' + nested + "}",
        '{"description": "a", "description": "b"}',  # duplicate keys: which one was meant?
        '{"description": "' + "x" * (64 * 1024) + '"}',  # past the body's bound
        '{"description": "\\udc00"}',  # a lone surrogate PostgreSQL cannot store
    ):
        response = _put(curate_client, "pii", body, raw=True)
        assert response.status_code == 400, (depth, body[:40], response.content[:200])
        assert set(response.json()) == {"code", "message", "details"}
    assert not TagDescription.objects.exists()
    assert _put(curate_client, "pii", {"description": "é"}).json()["description"] == "é"


def test_the_tag_list_is_paged_and_reads_no_more_than_the_page_needs(world, read_client):
    """docs/marquez.md: ``/tags`` is paged by name (``offset`` at most 10,000, ``limit`` at
    most 500, tests/marquez/test_list_paging.py); it reads at most ``offset + limit`` names
    of each source and the descriptions of the page's names only."""
    TagDescription.objects.bulk_create(
        TagDescription(name=f"t{number:05}", description="d") for number in range(1005)
    )
    with CaptureQueriesContext(connection) as captured:
        listed = _listed(read_client, limit="500", offset="1000")
    assert listed == {f"t{number:05}": "d" for number in range(1000, 1005)}
    read = [query["sql"] for query in captured if "catalog_tag_description" in query["sql"]]
    assert len(read) == 2 and "LIMIT 1500" in read[0] and '"name" IN' in read[1], read


def test_a_staff_session_needs_the_description_permissions(world):
    user = User.objects.create_user("stew", is_staff=True)
    session = Client()
    session.force_login(user)
    assert _put(session, "pii", {"description": "x"}).status_code == 403
    # A steward holds them (catalog.permissions), and the edit is in the admin log.
    user.groups.add(Group.objects.get(name=STEWARDS))
    session = Client()
    session.force_login(User.objects.get(pk=user.pk))
    response = _put(session, "pii", {"description": "Personal data."})
    assert response.status_code == 200, response.content
    entry = LogEntry.objects.get()
    assert entry.user == user and "described tag pii" in entry.change_message
    assert {"add_tagdescription", "change_tagdescription"} <= set(
        Permission.objects.filter(group__name=STEWARDS).values_list("codename", flat=True)
    )


def test_the_admin_edits_descriptions(world, read_client, django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw"))
    add = reverse("admin:catalog_tagdescription_add")
    response = client.post(add, {"name": "pii", "description": "Personal data."})
    assert response.status_code == 302, response.content.decode()[:2000]
    row = TagDescription.objects.get()
    change = reverse("admin:catalog_tagdescription_change", args=[row.pk])
    page = client.get(change).content.decode()
    assert "Personal data." in page
    assert client.post(change, {"description": "PII only"}).status_code == 302
    assert _listed(read_client) == {"pii": "PII only"}
    listing = client.get(reverse("admin:catalog_tagdescription_changelist")).content.decode()
    assert "PII only" in listing
    bad = client.post(add, {"name": "pii\x00", "description": "x"})
    # Every admin form refuses a NUL with a page naming the field (ADR 0173), nothing saved.
    assert bad.status_code == 400 and TagDescription.objects.count() == 1
    assert "name" in bad.content.decode()
    delete = reverse("admin:catalog_tagdescription_delete", args=[row.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 302
    assert _listed(read_client) == {}
