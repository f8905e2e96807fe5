"""Secrets in a document's keys are redacted like secrets in its values (ADR 0179).

``core.redaction.redact`` used to redact values and keep every key as sent, so a
``dataQualityMetrics`` column keyed ``"c token=S3CRET"`` (or a facet, a partition
dimension, a metadata value keyed by a DSN with its password) showed its secret on every
read path. One event plants a secret in a key of each facet kind that reaches a read
surface; after real HTTP ingest and derivation every route of ``/api/v1`` and of the
Marquez mount (the walk of test_derived_text_redaction.py) and every admin page is read,
and none may show it.
"""

from typing import Any

import orjson
import pytest
from django.test import Client, override_settings

from catalog.models import ColumnLineageEdge, Dataset, Run
from catalog.models.jobs_runs import RunDatasetFacet
from catalog.models.metadata import MetadataRecord
from catalog.services.derive import derive_events
from core.redaction import REDACTED, redact
from ingest.models import Event
from tests.security.test_derived_text_redaction import (
    MARQUEZ,
    NATIVE,
    RUN_ID,
    _body,
    _event,
    _ingest,
    facet,
)

MARK = "K3YLEAK"


# --- the function ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("c token=K3YLEAK", f"c token={REDACTED}"),
        ("password=K3YLEAK", f"password={REDACTED}"),
        ("Authorization: Bearer K3YLEAK", f"Authorization: {REDACTED}"),
        ("postgres://etl:K3YLEAK@db:5432/shop", f"postgres://etl:{REDACTED}@db:5432/shop"),
        ("--conf spark.hadoop.fs.s3a.secret.key=K3YLEAK", None),
        ("CREATE USER u IDENTIFIED BY 'K3YLEAK'", None),
    ],
)
def test_a_key_that_redaction_changes_is_replaced_by_its_redacted_form(key, expected) -> None:
    document = {"columnMetrics": {key: {"nullCount": 0}, "id": {"nullCount": 1}}}
    redacted = redact(document)
    keys = list(redacted["columnMetrics"])
    assert MARK not in orjson.dumps(redacted).decode(), redacted
    if expected is not None:
        assert keys[0] == expected
    assert REDACTED in keys[0] and keys[1] == "id"
    assert redacted["columnMetrics"]["id"] == {"nullCount": 1}


def test_keys_that_need_no_change_are_kept_and_the_secret_key_rules_still_apply() -> None:
    document = {"password": "x", "db.password=y": "z", "name": "a", "rows": [{"token": 1}]}
    assert redact(document) == {
        "password": REDACTED,  # a secret key's name is no secret: its value is
        f"db.password={REDACTED}": REDACTED,  # named by the key as sent
        "name": "a",
        "rows": [{"token": REDACTED}],
    }


def test_keys_that_redact_alike_keep_every_value_and_are_told_apart() -> None:
    """Two keys that redact to the same text do not overwrite each other: the later ones
    get `` (2)``, `` (3)``, ... after the redacted form, a number no key of the object
    holds already (as sent, or given earlier), in the object's order."""
    url = f"dsn postgres://u:{REDACTED}@h/x"
    document = {
        "dsn postgres://u:A@h/x": 1,
        "dsn postgres://u:B@h/x": 2,
        f"{url} (2)": 3,  # sent so: kept, and the numbering passes over it
        "dsn postgres://u:C@h/x": 4,
        url: 5,  # the redacted form itself, sent as a key: kept
    }
    redacted = redact(document)
    assert redacted == {
        f"{url} (3)": 1,
        f"{url} (4)": 2,
        f"{url} (2)": 3,
        f"{url} (5)": 4,
        url: 5,
    }
    assert list(redacted.values()) == [1, 2, 3, 4, 5]
    # Redacting what was redacted changes nothing (stored redacted, shown redacted again).
    assert redact(redacted) == redacted
    # Keys whose own name is secret lose their values as before, whatever their number.
    assert redact({"c token=a": 1, "c token=b": 2}) == {
        f"c token={REDACTED}": REDACTED,
        f"c token={REDACTED} (2)": REDACTED,
    }


def test_many_keys_that_redact_alike_cost_linear_work() -> None:
    """Numbers carry on per form: 20,000 alike keys are not 20,000² look-ups."""
    document = {f"dsn postgres://u:{number}@h/x": number for number in range(20_000)}
    redacted = redact(document)
    assert len(redacted) == 20_000 and sorted(redacted.values()) == list(range(20_000))
    assert f"dsn postgres://u:{REDACTED}@h/x (20000)" in redacted


def test_keys_are_redacted_at_every_depth_and_with_a_keys_list() -> None:
    document = [{"a": {"b": {"dsn https://u:K3YLEAK@h/x": {"secret=K3YLEAK": True}}}}]
    assert MARK not in orjson.dumps(redact(document)).decode()
    with override_settings(LINEAGE={"REDACT_KEYS": ["ticket"], "REDACT_WORDS": []}):
        assert redact({"ticket=K3YLEAK": 1}) == {f"ticket={REDACTED}": REDACTED}
    assert redact({"ticket=K3YLEAK": 1}, keys=("ticket",)) == {f"ticket={REDACTED}": REDACTED}


# --- every read surface ------------------------------------------------------------------


def _planted_event() -> dict[str, Any]:
    """``_event`` with a secret in a key of each facet kind a read surface shows."""
    event = _event()
    # A run facet (a custom one, and a key inside a known one).
    event["run"]["facets"]["sparkConf"] = facet(
        **{"spark.hadoop.fs.s3a.secret.key=K3YLEAK1": "set", "spark.app.name": "load"}
    )
    event["run"]["facets"]["processing_engine"]["conf token=K3YLEAK2"] = "on"
    # A job facet keyed by a connection URI with its password.
    event["job"]["facets"]["airflow"] = facet(
        **{"conn postgres://etl:K3YLEAK3@db:5432/shop": "used"}
    )
    output = event["outputs"][0]
    # A dataset facet's key, and a field of the output's column lineage (its fields' keys).
    output["facets"]["dataSource"]["dsn password=K3YLEAK4"] = "x"
    fields = output["facets"]["columnLineage"]["fields"]
    fields["day password=K3YLEAK5"] = fields["id"]
    # An output facet (a run fact) and an input's run facts: per-column metrics, the
    # dimensions of a partition.
    output["outputFacets"] = {
        "outputStatistics": facet(rowCount=10, **{"Authorization: Bearer K3YLEAK6": 1})
    }
    event["inputs"][0]["inputFacets"] = {
        "dataQualityMetrics": facet(
            rowCount=3,
            columnMetrics={
                "c token=K3YLEAK7": {"nullCount": 0},
                "c token=K3YLEAK8": {"nullCount": 1},
                "id": {"nullCount": 2},
            },
        ),
        "subset": facet(
            inputCondition={
                "type": "partition",
                "partitions": [
                    {"identifier": "2024", "dimensions": {"dt apikey=K3YLEAK9": "2024"}}
                ],
            }
        ),
    }
    return event


@pytest.fixture
def planted(ingest_client: Client) -> None:
    _ingest(ingest_client, _planted_event(), "/api/v1/lineage")
    metadata = {
        "subject": "model",
        "action": "promote",
        "resource": "mlflow",
        "additionalValues": {"dsn https://u:K3YLEAK10@h/x": "shop", "note": "n"},
    }
    _ingest(ingest_client, metadata, "/api/v1/metadata")
    derive_events(list(Event.objects.values_list("id", flat=True)))
    assert not Event.objects.exclude(derivation_status="derived").exists()
    # Each planted key reached the catalog to be shown (not skipped as an invalid facet).
    names = set(RunDatasetFacet.objects.values_list("name", flat=True))
    assert {"dataQualityMetrics", "subset", "outputStatistics"} <= names
    assert Run.objects.filter(facets__has_keys=["sparkConf", "processing_engine"]).exists()
    assert ColumnLineageEdge.objects.filter(target_field__startswith="day ").exists()
    assert MetadataRecord.objects.exists()


@pytest.mark.django_db
def test_no_read_path_shows_a_secret_planted_in_a_key(planted: None, read_client: Client) -> None:
    requests = [url for urls in NATIVE.values() for url in urls()]
    requests += [f"/marquez/api/v1{url}" for urls in MARQUEZ.values() for url in urls()]
    leaked = []
    for path in requests:
        response = read_client.get(path, RAW_URI=path.split("?", 1)[0])
        body = _body(response)
        at = body.find(MARK.encode())
        if at >= 0:
            leaked.append((path, body[max(at - 100, 0) : at + 20]))
    assert leaked == [], sorted({path for path, _ in leaked})
    # The keys are shown, redacted, and the two columns that redact alike are both there.
    run = read_client.get(f"/api/v1/runs/{RUN_ID}").json()
    metrics = [
        fact["quality_metrics"]["column_metrics"]
        for fact in run["dataset_facts"]
        if fact["quality_metrics"]
    ]
    assert metrics == [
        {
            f"c token={REDACTED}": REDACTED,  # a key naming a token: its value goes too
            f"c token={REDACTED} (2)": REDACTED,
            "id": {"nullCount": 2},
        }
    ]
    assert f"spark.hadoop.fs.s3a.secret.key={REDACTED}" in run["facets"]["sparkConf"]
    dataset = Dataset.objects.get(name="shop.public.orders")
    detail = read_client.get(f"/api/v1/datasets/{dataset.id}").content.decode()
    assert f"c token={REDACTED} (2)" in detail
    values = read_client.get("/api/v1/metadata").json()["results"][0]["additionalValues"]
    assert values == {f"dsn https://u:{REDACTED}@h/x": "shop", "note": "n"}


@pytest.mark.django_db
def test_no_admin_page_shows_a_secret_planted_in_a_key(planted: None, admin_client: Client) -> None:
    pages = [
        f"/admin/{model._meta.app_label}/{model._meta.model_name}/{pk}/change/"
        for model in (Dataset, Run, Event, MetadataRecord)
        for pk in model.objects.values_list("pk", flat=True)
    ]
    shown, leaked = "", []
    for page in pages:
        response = admin_client.get(page)
        assert response.status_code == 200, (page, response.status_code)
        at = response.content.find(MARK.encode())
        if at >= 0:
            leaked.append((page, response.content[max(at - 100, 0) : at + 20]))
        shown += response.content.decode()
    assert leaked == [], sorted({path for path, _ in leaked})
    assert len(pages) >= 5
    assert "c token=" in shown and REDACTED in shown


@pytest.mark.django_db
def test_derived_rows_keep_no_secret_key_and_older_rows_are_redacted_on_read(
    planted: None, read_client: Client
) -> None:
    """Derivation stores metadata additionalValues redacted (ADR 0056): their keys too, and
    a column edge's target field (a columnLineage key) is stored redacted. A record
    derived before keys were redacted (its key as sent) is still shown redacted."""
    record = MetadataRecord.objects.get()
    assert record.additional_values == {f"dsn https://u:{REDACTED}@h/x": "shop", "note": "n"}
    targets = set(ColumnLineageEdge.objects.values_list("target_field", flat=True))
    assert f"day password={REDACTED}" in targets
    MetadataRecord.objects.filter(id=record.id).update(
        additional_values={"dsn https://u:K3YLEAK10@h/x": "shop"}
    )
    body = read_client.get("/api/v1/metadata").content.decode()
    assert MARK not in body and f"dsn https://u:{REDACTED}@h/x" in body
