"""After ``purge_namespace`` a dataset that survives shows what its surviving events say and
nothing the purged events said (ADR 0167): its facets, schema fields, documentation, owners,
tags, column lineage and schema changes, on every read surface, exactly as a full rederive
of the log that is left shows it.

End to end: the events are posted through the HTTP ingest, derived by the worker's task,
purged by the command, and read through the REST API, search, the Marquez mount, the
admin and /changes."""

import re
from io import StringIO
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client

from catalog import tasks
from catalog.models import Dataset, DatasetField
from catalog.services import purge, purge_datasets
from catalog.services.derive import derive_events, derive_pending_batch, rederive
from catalog.services.retention import apply_retention
from ingest.models import Event
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

GONE = "mysql://gone:3306"
KEEP = "postgres://keep:5432"
# Words only the purged events say: none of them may be shown anywhere after the purge.
PURGED_WORDS = (
    "leaked_col",
    "purged documentation",
    "team:gone",
    "gone_tag",
    "gone_name",
    "gone_scratch",
    GONE,
    "db.src",
)


def _schema(*columns: tuple[str, str]) -> dict[str, Any]:
    return facet(fields=[{"name": name, "type": type_} for name, type_ in columns])


def _owners(name: str) -> dict[str, Any]:
    return facet(owners=[{"name": name, "type": "team"}])


def _run(seconds: int, job: tuple[str, str], **sides: Any) -> dict[str, Any]:
    run_id = f"00000000-0000-0000-0000-{seconds:012d}"
    return run_event("COMPLETE", seconds, run_id, job, **sides)


def _events() -> list[dict[str, Any]]:
    return [
        # What survives: a job of another namespace wrote keep.orders, and keep.view.
        _run(
            10,
            ("etl", "load"),
            outputs=[
                dataset(
                    KEEP,
                    "public.orders",
                    schema=_schema(("id", "int")),
                    documentation=facet(description="kept documentation"),
                    ownership=_owners("team:keep"),
                )
            ],
        ),
        _run(
            11,
            ("etl", "view"),
            outputs=[dataset(KEEP, "public.view", schema=_schema(("v", "int")))],
        ),
        # A later event of another job that read a dataset of the purged namespace wrote
        # keep.orders too: it goes with the namespace, and so must all it said.
        _run(
            20,
            ("etl", "copy"),
            inputs=[dataset(GONE, "db.src", schema=_schema(("leaked_col", "text")))],
            outputs=[
                dataset(
                    KEEP,
                    "public.orders",
                    schema=_schema(("id", "int"), ("leaked_col", "text")),
                    documentation=facet(description="purged documentation"),
                    ownership=_owners("team:gone"),
                    tags=facet(tags=[{"key": "gone_tag", "value": "x", "source": "t"}]),
                    # A name only this event gave it (and shown by, as a TABLE symlink).
                    symlinks=facet(
                        identifiers=[{"namespace": KEEP, "name": "gone_name", "type": "TABLE"}]
                    ),
                    columnLineage=facet(
                        fields={
                            "leaked_col": {
                                "inputFields": [
                                    {"namespace": GONE, "name": "db.src", "field": "leaked_col"}
                                ]
                            }
                        }
                    ),
                ),
                # A dataset only this event named.
                dataset(KEEP, "public.gone_scratch", schema=_schema(("leaked_col", "text"))),
            ],
        ),
        # keep.view is also called gone.db.view (a symlink); a later event of another job
        # wrote it under that name, with a schema of its own.
        _run(
            30,
            ("etl", "publish"),
            outputs=[
                dataset(
                    GONE,
                    "db.view",
                    schema=_schema(("v", "int"), ("leaked_col", "text")),
                    symlinks=facet(
                        identifiers=[{"namespace": KEEP, "name": "public.view", "type": "TABLE"}]
                    ),
                )
            ],
        ),
    ]


def _post_and_derive(client: Client, events: list[dict[str, Any]]) -> None:
    for event in events:
        response = client.post("/api/v1/lineage", event, content_type="application/json")
        assert response.status_code in (200, 201), response.content
    tasks.derive_events(list(Event.objects.order_by("id").values_list("id", flat=True)))


def _admin() -> Client:
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def _surfaces(reader: Client, admin: Client) -> dict[str, Any]:
    """What each read surface answers about the surviving datasets (times of writing left
    out: a rederive rewrites them)."""
    answers: dict[str, Any] = {}
    for name in ("public.orders", "public.view"):
        pk = Dataset.objects.for_alias(KEEP, name).get().pk
        detail = reader.get(f"/api/v1/datasets/{pk}").json()
        detail.pop("updated_at", None)
        answers[f"detail {name}"] = detail
        marquez = reader.get(f"/marquez/api/v1/namespaces/{quote(KEEP, safe='')}/datasets/{name}")
        body = marquez.json()
        for key in ("updatedAt", "lastModifiedAt"):
            body.pop(key, None)
        answers[f"marquez {name}"] = body
        page = admin.get(f"/admin/catalog/dataset/{pk}/change/")
        assert page.status_code == 200
        # Less its form's token and its aliases' ids (a full rederive gives them new ones).
        answers[f"admin {name}"] = re.sub(
            r'csrfmiddlewaretoken" value="\w+"|datasetalias/\d+/', "", page.content.decode()
        )
    answers["list"] = [
        {key: value for key, value in item.items() if key != "updated_at"}
        for item in reader.get("/api/v1/datasets", {"namespace": KEEP}).json()["results"]
    ]
    for word in ("leaked_col", "purged", "team:gone", "gone_tag", "kept", "team:keep"):
        answers[f"search {word}"] = reader.get("/api/v1/search", {"q": word}).json()
    answers["changes"] = reader.get("/api/v1/changes").json()
    return answers


def _shown(answers: dict[str, Any], word: str) -> list[str]:
    return [surface for surface, answer in answers.items() if word in str(answer)]


def test_a_surviving_dataset_shows_only_what_its_surviving_events_say(
    ingest_client: Client, read_client: Client
) -> None:
    _post_and_derive(ingest_client, _events())
    admin = _admin()
    before = _surfaces(read_client, admin)
    assert all(_shown(before, word) for word in PURGED_WORDS)  # all shown before

    out = StringIO()
    call_command("purge_namespace", GONE, "--dry-run", stdout=out)
    # etl.copy and etl.publish lose their only events; keep.orders, keep.view and
    # keep.gone_scratch were named by them, and keep 2 events (etl.load's, etl.view's).
    assert (
        "would rebuild 2 job(s) of other namespaces and 3 dataset(s) with names elsewhere "
        "from 2 event(s) they keep"
    ) in out.getvalue()
    call_command("purge_namespace", GONE, "--by", "alice", stdout=StringIO())
    after = _surfaces(read_client, admin)

    # Nothing the purged events said is shown anywhere.
    assert {word: _shown(after, word) for word in PURGED_WORDS} == {
        word: [] for word in PURGED_WORDS
    }
    # What the surviving events say is.
    orders = after["detail public.orders"]
    assert [field["name"] for field in orders["fields"]] == ["id"], orders
    assert orders["description"] == "kept documentation"
    assert "team:keep" in str(orders["owners"])
    view = after["detail public.view"]
    assert [field["name"] for field in view["fields"]] == ["v"], view
    # Exactly as if the purged events had never been sent: a full rederive of what is left
    # changes nothing any surface shows.
    rederive()
    again = _surfaces(read_client, admin)
    assert [surface for surface in after if again[surface] != after[surface]] == []


def test_what_retention_kept_of_a_surviving_dataset_stays(read_client: Client) -> None:
    """A dataset whose older events retention removed (ADR 0079) shows what its summary
    kept, after the purge too: the rebuild folds it back in, as a full rederive does."""
    old = _run(
        1,
        ("etl", "load"),
        outputs=[
            dataset(KEEP, "hist", documentation=facet(description="kept by retention")),
        ],
    )
    derive_events(store([openlineage(old)]))
    with connection.cursor() as cursor:
        cursor.execute("UPDATE ingest_event SET received_at = received_at - interval '40 days'")
        cursor.execute("UPDATE catalog_run SET updated_at = updated_at - interval '40 days'")
    assert apply_retention(30).events == 1
    purged = _run(
        20,
        ("etl", "copy"),
        inputs=[dataset(GONE, "db.src")],
        outputs=[dataset(KEEP, "hist", schema=_schema(("leaked_col", "text")))],
    )
    derive_events(store([openlineage(purged)]))
    pk = Dataset.objects.for_alias(KEEP, "hist").get().pk
    assert "leaked_col" in str(read_client.get(f"/api/v1/datasets/{pk}").json())

    call_command("purge_namespace", GONE, stdout=StringIO())
    after = read_client.get(f"/api/v1/datasets/{pk}").json()
    assert "leaked_col" not in str(after) and after["description"] == "kept by retention"
    rederive()
    again = read_client.get(f"/api/v1/datasets/{pk}").json()
    assert {**again, "updated_at": None} == {**after, "updated_at": None}


def _datasets() -> list[tuple[Any, ...]]:
    """Every dataset as the reads show it: its row (less its write time) and fields."""
    shown = [field.name for field in Dataset._meta.fields if field.name != "updated_at"]
    return [
        (*row, list(DatasetField.objects.filter(dataset_id=row[0]).values_list("name", "type")))
        for row in Dataset.objects.order_by("pk").values_list(*shown)
    ]


NAMES = ("public.orders", "public.view")


class _Stopped(Exception):
    pass


def test_in_batches_of_one_the_datasets_end_as_a_full_rederive_leaves_them(monkeypatch) -> None:
    """A dataset a batch of the rebuild empties may share a kept event with one an earlier
    batch emptied (keep.orders and keep.view, written by one event here), which the sweep
    may have derived in between: it is set pending again, so a purge stopped after the
    rebuild leaves it to the sweep too; and the end is a full rederive's."""
    monkeypatch.setattr(purge, "BATCH", 1)
    rebuild_batch = purge_datasets._rebuild_batch

    def swept_first(*args: Any) -> None:  # the sweep, between two of the rebuild's batches
        while derive_pending_batch(0).claimed:
            pass
        rebuild_batch(*args)

    monkeypatch.setattr(purge_datasets, "_rebuild_batch", swept_first)
    both = _run(
        12,
        ("etl", "both"),
        outputs=[
            dataset(KEEP, "public.orders", documentation=facet(description="both orders")),
            dataset(KEEP, "public.view", documentation=facet(description="both view")),
        ],
    )
    derive_events(store([openlineage(event) for event in [*_events(), both]]))

    def stop(message: str) -> None:
        if message == "deleting retained edges":  # the step after the rebuild
            raise _Stopped

    with pytest.raises(_Stopped):
        purge.purge_namespace(GONE, "alice", progress=stop)
    while derive_pending_batch(0).claimed:
        pass
    shown = [Dataset.objects.for_alias(KEEP, name).get().description for name in NAMES]
    assert shown == ["both orders", "both view"]
    purge.purge_namespace(GONE, "alice")
    after = _datasets()
    assert "leaked_col" not in str(after)
    rederive()
    assert _datasets() == after
