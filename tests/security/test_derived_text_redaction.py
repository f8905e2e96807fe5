"""No producer text reaches a reader unredacted: not a facet, and not what derivation copies
out of one (descriptions, schema fields, column transformations, run errors, job types,
metadata subjects; ADR 0056).

One event carries a secret in every text value of every facet (each a different shape and
number, so a failure names the field). After derivation, every route of ``/api/v1`` and of
the Marquez mount (both discovered, so a new route fails here until it is requested) is
requested with every id the catalog holds, and no answer may hold the secret; nor may any
text column of the derived tables (enumerated from the models, so a new column is
covered), nor any admin page (from the admin's registry), nor may search find it. A
serializer that shows JSON must redact it.
"""

import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from django.apps import apps
from django.conf import settings
from django.db import models
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework import serializers

from catalog.models import ColumnLineageEdge, Dataset, DatasetField, Job, Run, RunDataset, writes
from catalog.models.jobs_runs import RunDatasetFacet
from catalog.models.static import StaticColumnLineage
from catalog.services.derive import derive_events, rederive
from core.redaction import REDACTED
from ingest.models import Event
from tests.ingest.helpers import dumps
from tests.security.planted_declarations import assertions, planted_declarations

MARK = "S3CRET"
SHAPES = (
    "password={}",
    "token={}",
    "apikey: {}",
    "secret={}",
    "db.password = '{}'",
    # SQL credentials (issue 27 item 2), as a sql facet or a description may quote them.
    "CREATE USER u IDENTIFIED BY '{} x';",
    "ALTER ROLE r WITH LOGIN PASSWORD $$it''s {}$$",
    'ALTER USER u IDENTIFIED WITH mysql_native_password BY "{} y"',
)
# Values a facet's schema restricts to a list (a planted one would make the facet invalid,
# and derivation would skip it), and the names the event's lineage is keyed on.
KEPT = {"_producer", "_schemaURL", "processingType", "lifecycleStateChange", "type"}
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/client/python"
RUN_ID = str(uuid.UUID("01930000-0000-7000-8000-0000000000aa"))


def facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": f"{PRODUCER}#facet", **fields}


def _event() -> dict[str, Any]:
    fields = [
        {"name": "id", "type": "BIGINT", "description": "the order's id"},
        {
            "name": "customer",
            "type": "STRUCT",
            "description": "who ordered",
            "fields": [{"name": "email", "type": "STRING", "description": "where to write"}],
        },
    ]
    column_lineage = {
        "id": {
            "inputFields": [
                {
                    "namespace": "postgres://db:5432",
                    "name": "shop.public.orders",
                    "field": "id",
                    "transformations": [
                        {"type": "DIRECT", "subtype": "IDENTITY", "description": "copied as is"}
                    ],
                }
            ]
        }
    }
    dataset_facets = {
        "schema": facet(fields=fields),
        "documentation": facet(description="Orders of the day"),
        "dataSource": facet(name="shop database", uri="postgres://db:5432/shop"),
    }
    return {
        # COMPLETE, so that its output is a dataset version (only completed runs write,
        # ADR 0069) and the version read paths show its facets; the errorMessage facet is
        # derived into the run's error whatever its state.
        "eventType": "COMPLETE",
        "eventTime": "2026-11-29T10:00:00.000Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {
            "runId": RUN_ID,
            "facets": {
                "errorMessage": facet(
                    message="load failed",
                    programmingLanguage="python",
                    stackTrace="Traceback: at load()",
                ),
                "processing_engine": facet(version="3.5", name="spark"),
            },
        },
        "job": {
            "namespace": "etl",
            "name": "load_orders",
            "facets": {
                "documentation": facet(description="Loads the day's orders"),
                "jobType": facet(processingType="BATCH", integration="SPARK", jobType="TASK"),
                "sql": facet(query="INSERT INTO orders SELECT * FROM staging"),
                "sourceCodeLocation": facet(type="git", url="https://git.example.com/etl"),
                "ownership": facet(owners=[{"name": "team data", "type": "team"}]),
            },
        },
        "inputs": [
            {"namespace": "postgres://db:5432", "name": "shop.public.orders", "facets": {}},
        ],
        "outputs": [
            {
                "namespace": "s3://lake",
                "name": "orders/daily",
                "facets": {
                    **dataset_facets,
                    "columnLineage": facet(fields=column_lineage),
                    "lifecycleStateChange": facet(lifecycleStateChange="CREATE"),
                },
            }
        ],
    }


def plant(value: Any, planted: list[str], key: str = "") -> Any:
    """``value`` with a secret after every facet string but those in KEPT."""
    if isinstance(value, dict):
        return {name: plant(item, planted, name) for name, item in value.items()}
    if isinstance(value, list):
        return [plant(item, planted, key) for item in value]
    if isinstance(value, str) and key not in KEPT:
        secret = SHAPES[len(planted) % len(SHAPES)].format(f"{MARK}{len(planted)}")
        planted.append(f"{key}: {secret}")
        return f"{value} {secret}"
    return value


def planted_event() -> tuple[dict[str, Any], list[str]]:
    event, planted = _event(), []
    event["run"]["facets"]["test"] = facet(
        tests=[{"name": "not_null_id", "status": "fail", "expected": "0", "actual": "3"}]
    )
    event["run"]["facets"] = plant(event["run"]["facets"], planted)
    # Execution parameters whose secret is only in the pair's shape (ADR 0092): a bare value
    # beside a secret key, and a URL's password.
    event["run"]["facets"]["executionParameters"] = facet(
        parameters=[
            {"key": "spark.hadoop.fs.s3a.secret.key", "value": f"{MARK}e1"},
            {"key": "db", "name": "DB password", "value": f"{MARK}e2"},
            {"key": "source.url", "value": f"postgres://etl:{MARK}e3@db:5432/shop"},
            {"key": "task.timeout", "value": "3600"},
        ]
    )
    event["job"]["facets"] = plant(event["job"]["facets"], planted)
    for dataset in event["inputs"] + event["outputs"]:
        dataset["facets"] = plant(dataset["facets"], planted)
    partitions = [{"identifier": "2024-10-15", "dimensions": {"business_date": "2024-10-15"}}]
    event["inputs"][0]["inputFacets"] = plant(
        {
            "dataQualityAssertions": assertions(),
            "subset": facet(inputCondition={"type": "partition", "partitions": partitions}),
        },
        planted,
    )
    return event, planted


def _ingest(ingest_client: Client, document: dict[str, Any], url: str) -> None:
    response = ingest_client.post(url, data=dumps(document), content_type="application/json")
    assert response.status_code == 201, response.content
    assert orjson.loads(response.content).get("warnings", []) == [], response.content


@pytest.fixture
def world(ingest_client: Client) -> list[str]:
    event, planted = planted_event()
    _ingest(ingest_client, event, "/api/v1/lineage")
    downstream = _event()
    # The event's own text too: a producer URI with a token, a runId and a job name.
    downstream["producer"] = f"{PRODUCER}?token={MARK}p"
    downstream["run"] = {"runId": f"report-run token={MARK}r", "facets": {}}
    downstream["job"] = {"namespace": "etl", "name": f"report secret={MARK}j", "facets": {}}
    downstream["inputs"], downstream["outputs"] = event["outputs"], []
    _ingest(ingest_client, downstream, "/api/v1/lineage")
    for declaration in planted_declarations(lambda value: plant(value, planted)):
        _ingest(ingest_client, declaration, "/api/v1/lineage")
    metadata = {
        "subject": f"model token={MARK}m1",
        "action": f"promote password={MARK}m2",
        "resource": f"mlflow apikey: {MARK}m3",
        "additionalValues": {"note": f"secret={MARK}m4"},
    }
    _ingest(ingest_client, metadata, "/api/v1/metadata")
    derive_events(list(Event.objects.values_list("id", flat=True)))
    assert not Event.objects.exclude(derivation_status="derived").exists()
    # The declarations and run facts are in the catalog (so their text is checked below).
    assert StaticColumnLineage.objects.filter(dataset_level=True).exists()
    assert StaticColumnLineage.objects.exclude(field_transformation_description="").exists()
    assert RunDatasetFacet.objects.filter(name="dataQualityAssertions").exists()
    assert RunDatasetFacet.objects.filter(name="subset").exists()
    assert Run.objects.filter(facets__has_keys=["test", "executionParameters"]).exists()
    assert Dataset.objects.filter(name="orders/described").exclude(description="").exists()
    assert all(not problems for problems in Event.objects.values_list("facet_problems", flat=True))
    return planted


# --- every route, with every id -------------------------------------------------------


def _routes(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[str]:
    for entry in (resolver or get_resolver()).url_patterns:
        pattern = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _routes(entry, pattern)
        elif isinstance(entry, URLPattern):
            yield re.sub(r"(?<=/)\^|\$$", "", pattern)  # the router's anchors


INGEST_ONLY = {"api/v1/lineage", "api/v1/lineage/batch", "api/v1/lineage/edges"}
Requests = Callable[[], list[str]]


def _ids(model: type[models.Model], field: str = "id") -> list[Any]:
    return list(model.objects.order_by(field).values_list(field, flat=True))


def _nodes() -> list[str]:
    return [f"dataset:{id}" for id in _ids(Dataset)] + [f"job:{id}" for id in _ids(Job)]


def _walk(path: str, extra: str = "") -> list[str]:
    return [f"{path}?node={node}&columns=true&depth=3{extra}" for node in _nodes()]


SEARCHES = ("orders", "daily", "load", "id", "email", "customer", "report", "day")
NATIVE: dict[str, Requests] = {
    "api/v1/namespaces": lambda: ["/api/v1/namespaces"],
    "api/v1/lineage/graph": lambda: _walk("/api/v1/lineage/graph"),
    "api/v1/lineage/diff": lambda: _walk(
        "/api/v1/lineage/diff", "&from=2026-01-01T00:00:00Z&to=2026-12-31T00:00:00Z"
    ),
    "api/v1/search": lambda: [f"/api/v1/search?q={q}" for q in SEARCHES],
    "api/v1/events/export": lambda: ["/api/v1/events/export"],
    "api/v1/metadata": lambda: ["/api/v1/metadata"],
    "api/v1/jobs/<str:pk>/runs": lambda: [f"/api/v1/jobs/{id}/runs" for id in _ids(Job)],
    "api/v1/stats": lambda: ["/api/v1/stats"],
    "api/v1/jobs": lambda: ["/api/v1/jobs"],
    "api/v1/jobs/(?P<pk>[^/.]+)": lambda: [f"/api/v1/jobs/{id}" for id in _ids(Job)],
    "api/v1/runs": lambda: ["/api/v1/runs"],
    "api/v1/runs/(?P<run_id>.+)": lambda: [f"/api/v1/runs/{id}" for id in _ids(Run, "run_uuid")],
    "api/v1/runs/<str:run_id>/inputs": lambda: [
        f"/api/v1/runs/{id}/inputs" for id in _ids(Run, "run_uuid")
    ],
    "api/v1/runs/<str:run_id>/outputs": lambda: [
        f"/api/v1/runs/{id}/outputs" for id in _ids(Run, "run_uuid")
    ],
    "api/v1/datasets": lambda: ["/api/v1/datasets"],
    "api/v1/datasets/lookup": lambda: [
        f"/api/v1/datasets/lookup?namespace={quote(ns, safe='')}&name={quote(name, safe='')}"
        for ns, name in Dataset.objects.values_list("namespace", "name")
    ],
    "api/v1/datasets/(?P<pk>[^/.]+)": lambda: [f"/api/v1/datasets/{id}" for id in _ids(Dataset)],
    "api/v1/datasets/<str:pk>/aliases": lambda: [
        f"/api/v1/datasets/{id}/aliases" for id in _ids(Dataset)
    ],
    "api/v1/events": lambda: ["/api/v1/events"],
    "api/v1/events/(?P<pk>[^/.]+)": lambda: [f"/api/v1/events/{id}" for id in _ids(Event)],
    "api/v1/impact": lambda: [
        f"/api/v1/impact?node=dataset:{id}&direction={direction}{form}"
        for id in _ids(Dataset)
        for direction in ("downstream", "upstream")
        for form in ("", "&format=csv")
    ],
    "api/v1/changes": lambda: ["/api/v1/changes"],
}


def _segment(text: str) -> str:
    return quote(text, safe="")


def _jobs() -> list[tuple[str, str]]:
    return list(Job.objects.order_by("id").values_list("namespace", "name"))


def _datasets() -> list[tuple[str, str]]:
    return list(Dataset.objects.order_by("id").values_list("namespace", "name"))


def _namespaces() -> list[str]:
    return sorted({ns for ns, _ in _jobs() + _datasets()})


def _marquez_nodes(fields: bool = False) -> list[str]:
    nodes = [f"dataset:{ns}:{name}" for ns, name in _datasets()]
    nodes += [f"job:{ns}:{name}" for ns, name in _jobs()]
    if fields:
        nodes += [
            f"datasetField:{ns}:{name}:{field}"
            for ns, name, field in DatasetField.objects.values_list(
                "dataset__namespace", "dataset__name", "name"
            )
        ]
    return [_segment(node) for node in nodes]


def _versions() -> list[str]:
    """A dataset version is the completed run that wrote it (catalog.models.writes)."""
    written = RunDataset.objects.filter(writes.completed(), direction="output").values_list(
        "alias__dataset__namespace", "alias__dataset__name", "run__run_uuid"
    )
    return [
        f"/namespaces/{_segment(ns)}/datasets/{_segment(name)}/versions/{run}"
        for ns, name, run in written
    ]


MARQUEZ: dict[str, Requests] = {
    "namespaces": lambda: ["/namespaces"],
    "namespace": lambda: [f"/namespaces/{_segment(ns)}" for ns in _namespaces()],
    "jobs": lambda: [f"/namespaces/{_segment(ns)}/jobs" for ns in _namespaces()],
    "job": lambda: [f"/namespaces/{_segment(ns)}/jobs/{_segment(n)}" for ns, n in _jobs()],
    "job_runs": lambda: [
        f"/namespaces/{_segment(ns)}/jobs/{_segment(n)}/runs" for ns, n in _jobs()
    ],
    "datasets": lambda: [f"/namespaces/{_segment(ns)}/datasets" for ns in _namespaces()],
    "dataset": lambda: [
        f"/namespaces/{_segment(ns)}/datasets/{_segment(n)}" for ns, n in _datasets()
    ],
    "dataset_versions": lambda: [
        f"/namespaces/{_segment(ns)}/datasets/{_segment(n)}/versions" for ns, n in _datasets()
    ],
    "dataset_version": _versions,
    "all_jobs": lambda: ["/jobs"],
    "run": lambda: [f"/jobs/runs/{id}" for id in _ids(Run, "run_uuid")],
    "run_facets": lambda: [
        f"/jobs/runs/{id}/facets?type={kind}"
        for id in _ids(Run, "run_uuid")
        for kind in ("run", "job")
    ],
    "lineage": lambda: [f"/lineage?nodeId={node}&depth=5" for node in _marquez_nodes()],
    "column_lineage": lambda: [
        f"/column-lineage?nodeId={node}&depth=5&withDownstream=true"
        for node in _marquez_nodes(fields=True)
    ],
    "search": lambda: [f"/search?q={q}" for q in SEARCHES],
    "tags": lambda: ["/tags"],
    "sources": lambda: ["/sources"],
    "source": lambda: [f"/sources/{_segment(ns)}" for ns in _namespaces()],
    "events": lambda: ["/events/lineage", *(f"/events/{_segment(ns)}" for ns in _namespaces())],
    "stats_lineage_events": lambda: ["/stats/lineage-events?period=DAY"],
    "stats_assets": lambda: [f"/stats/{asset}?period=DAY" for asset in ("jobs", "datasets")],
}


# A column (or dataset) without column lineage; no source is ever known (Marquez's empty).
MAY_BE_MISSING = {"column_lineage", "source"}


def test_every_route_is_requested() -> None:
    """A new route fails here until the walk below requests it."""
    from api.marquez.paths import ROUTES

    native = {route for route in _routes() if route.startswith("api/v1/")} - INGEST_ONLY
    assert native == set(NATIVE)
    # Every reading route (the tag writes are named too, but read nothing: their answers
    # are the dataset's and job's shapes, read by the routes walked here).
    assert {route.name for route in ROUTES if route.read is not None} == set(MARQUEZ)


def _body(response: Any) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.mark.django_db
def test_no_read_path_shows_a_secret_planted_in_any_facet_text(
    world: list[str], read_client: Client
) -> None:
    requests = [(route, url) for route, urls in NATIVE.items() for url in urls()]
    requests += [
        (route, f"/marquez/api/v1{url}") for route, urls in MARQUEZ.items() for url in urls()
    ]
    answered: set[str] = set()
    for route, path in requests:
        # The raw path a WSGI server gives (gunicorn's RAW_URI), as tests/marquez do.
        response = read_client.get(path, RAW_URI=path.split("?", 1)[0])
        body = _body(response)
        at = body.find(MARK.encode())
        assert at < 0, (path, body[max(at - 200, 0) : at + 40])
        if response.status_code == 404 and route in MAY_BE_MISSING:
            continue
        assert response.status_code == 200, (path, body[:300])
        answered.add(route)
    assert answered == set(NATIVE) | set(MARQUEZ) - {"source"}, answered
    # The walk saw what derivation copied out of the facets, redacted (not nothing).
    job = read_client.get(f"/api/v1/jobs/{Job.objects.get(name='load_orders').id}").json()
    assert job["description"].startswith("Loads the day's orders") and REDACTED in str(job)
    output = Dataset.objects.get(name="orders/daily")
    dataset = read_client.get(f"/api/v1/datasets/{output.id}").json()
    assert REDACTED in dataset["description"] and REDACTED in dataset["fields"][0]["description"]
    # The run's parameters are shown, the secrets' values redacted, the others as sent.
    run = read_client.get(f"/api/v1/runs/{RUN_ID}").json()
    values = [parameter["value"] for parameter in run["parameters"]]
    assert values[:2] == [REDACTED, REDACTED] and values[3] == "3600", values
    assert values[2] == f"postgres://etl:{REDACTED}@db:5432/shop"
    assert run["tests"][0]["name"].startswith("not_null_id") and REDACTED in str(run["tests"])


# Kept as sent, since reads join the raw log on it; redacted on the way out instead
# (api.serializers.RedactedCharField), which the walk above proves.
KEYS_TO_THE_LOG = {("Run", "run_id_text")}


@pytest.mark.django_db
def test_derived_text_is_stored_redacted_in_every_column(world: list[str]) -> None:
    """Every text column of every derived table (from the models: a new column is covered).
    JSON columns keep facets as merged (redacted on read, like the raw log)."""
    columns = 0
    for model in apps.get_app_config("catalog").get_models():
        for field in model._meta.get_fields():
            if (model.__name__, field.name) in KEYS_TO_THE_LOG:
                continue
            if isinstance(field, models.CharField | models.TextField) and field.concrete:
                leaked = model.objects.filter(**{f"{field.name}__contains": MARK})
                assert not leaked.exists(), (model.__name__, field.name)
                columns += 1
    assert columns > 30
    # Each kind of derived text was there to be redacted.
    assert REDACTED in Job.objects.get(name="load_orders").description
    assert REDACTED in Job.objects.get(name="load_orders").integration
    assert REDACTED in Run.objects.get(job__name="load_orders").error_message
    assert REDACTED in Dataset.objects.get(name="orders/daily").description
    fields = DatasetField.objects.filter(dataset__name="orders/daily")
    assert all(REDACTED in (f.name + f.description) for f in fields), list(fields.values())
    edge = ColumnLineageEdge.objects.get()
    assert REDACTED in edge.transformation_description and REDACTED in edge.source_field


@pytest.mark.django_db
def test_search_finds_nothing_by_a_secret(world: list[str], read_client: Client) -> None:
    """Descriptions and column names are searched: a secret in them would be an oracle."""
    for number in range(len(world)):
        answer = read_client.get("/api/v1/search", {"q": f"{MARK}{number}"})
        assert answer.status_code == 200 and answer.json()["results"] == [], number
    assert read_client.get("/api/v1/search", {"q": "orders"}).json()["results"]


@pytest.mark.django_db
def test_a_rederive_applies_a_changed_redaction_setting(
    ingest_client: Client, read_client: Client
) -> None:
    """Derived text is redacted once, when derived: after the key list changes, a rederive
    redacts what was derived before, and search stops finding it."""
    event = _event()
    event["outputs"][0]["facets"]["documentation"] = facet(description="Owned by ticket=T-4242")
    _ingest(ingest_client, event, "/api/v1/lineage")
    derive_events(list(Event.objects.values_list("id", flat=True)))
    dataset = Dataset.objects.get(name="orders/daily")
    assert dataset.description == "Owned by ticket=T-4242"
    assert read_client.get("/api/v1/search", {"q": "T-4242"}).json()["results"]
    keys = [*settings.LINEAGE["REDACT_KEYS"], "ticket"]
    with override_settings(LINEAGE={**settings.LINEAGE, "REDACT_KEYS": keys}):
        rederive()
        dataset = Dataset.objects.get(name="orders/daily")
        assert dataset.description == f"Owned by ticket={REDACTED}"
        assert read_client.get("/api/v1/search", {"q": "T-4242"}).json()["results"] == []
        detail = read_client.get(f"/api/v1/datasets/{dataset.id}").content
        assert b"T-4242" not in detail


# --- every serializer ------------------------------------------------------------------


def _serializers() -> list[type[serializers.BaseSerializer[Any]]]:
    # Every module that defines serializers, so that their classes are registered.
    import api.marquez.views
    import api.serializers
    import api.views.catalog
    import api.views.events
    import api.views.lineage
    import api.views.search  # noqa: F401

    found, todo = [], [serializers.Serializer]
    while todo:
        for subclass in todo.pop().__subclasses__():
            todo.append(subclass)
            if subclass.__module__.startswith("api."):
                found.append(subclass)
    return found


def _fields(serializer: serializers.BaseSerializer[Any]) -> Iterator[tuple[str, Any]]:
    if isinstance(serializer, serializers.ListSerializer):
        serializer = serializer.child
    for name, field in serializer.fields.items():  # type: ignore[attr-defined]
        yield name, field
        if isinstance(field, serializers.BaseSerializer):
            yield from _fields(field)
        elif isinstance(field, serializers.ListField) and field.child is not None:
            yield f"{name}[]", field.child


NUMBERS = (serializers.IntegerField, serializers.FloatField)  # counts: the catalog's own
# JSON the catalog writes itself, never a producer: what a graph walk's bounds cut.
OURS = {("GraphSerializer", "cut"), ("ImpactSerializer", "cut")}


def test_every_serializer_field_that_shows_json_redacts_it() -> None:
    """Facets, payloads and metadata values are JSON a producer wrote: a serializer field
    that shows JSON (a new one too) must be ``RedactedJSONField`` or a method that calls
    ``redact``. Text fields show columns derivation stored redacted (the test above)."""
    from api.serializers import RedactedJSONField

    classes = _serializers()
    assert len(classes) > 15, classes
    for cls in classes:
        for name, field in _fields(cls()):
            numbers = isinstance(getattr(field, "child", None), NUMBERS)
            if (cls.__name__, name) in OURS or numbers:
                continue
            if isinstance(field, serializers.JSONField | serializers.DictField):
                assert isinstance(field, RedactedJSONField), (cls.__name__, name)


def test_a_namespace_loses_secret_parameters_like_a_name() -> None:
    from catalog.names.naming import normalise_namespace

    assert normalise_namespace("sqlserver://H:1433;user=u;password=x") == (
        f"sqlserver://h:1433;user=u;password={REDACTED}"
    )
    assert normalise_namespace("warehouse token=abc") == f"warehouse token={REDACTED}"
    assert normalise_namespace("postgres://db") == "postgres://db:5432"


@pytest.mark.django_db
def test_keys_into_the_log_are_shown_redacted_and_never_matched_by_a_guess(
    world: list[str], read_client: Client
) -> None:
    """The runId, producer and job namespace stay as sent in the raw log: the API redacts
    them on the way out, and refuses a filter or lookup by a value it would show redacted
    (found or not would confirm a guess of the secret; tests/security/test_event_filters.py)."""
    producer = f"{PRODUCER}?token={MARK}p"
    assert read_client.get("/api/v1/events", {"producer": producer}).status_code == 400
    shown = {event["producer"] for event in read_client.get("/api/v1/events").json()["results"]}
    assert f"{PRODUCER}?token={REDACTED}" in shown and producer not in shown
    run_id = f"report-run token={MARK}r"
    assert read_client.get("/api/v1/events", {"run_id": run_id}).status_code == 400
    assert read_client.get(f"/api/v1/runs/{quote(run_id, safe='')}").status_code == 400
    runs = read_client.get("/api/v1/runs").json()["results"]
    assert f"report-run token={REDACTED}" in {run["run_id_as_sent"] for run in runs}


@pytest.mark.django_db
def test_no_admin_page_shows_a_planted_secret(world: list[str], admin_client: Client) -> None:
    """Every admin changelist and every object's change page (from the admin's registry, so
    a new admin is covered), and the dashboard."""
    from django.contrib import admin

    pages = ["/admin/"]
    for model in admin.site._registry:
        meta = model._meta
        base = f"/admin/{meta.app_label}/{meta.model_name}/"
        pages.append(base)
        pages += [f"{base}{pk}/change/" for pk in model.objects.values_list("pk", flat=True)[:20]]
    for page in pages:
        response = admin_client.get(page)
        assert response.status_code in (200, 302), (page, response.status_code)
        at = response.content.find(MARK.encode())
        assert at < 0, (page, response.content[max(at - 300, 0) : at + 40])
    assert len(pages) > 30, pages
