"""What a refusal or a warning names: its type and its path (docs/problems.md, ADR 0189).

Every path is a JSON Pointer into the body, its keys escaped (RFC 6901); a body nested
past the depth limit is ``too-deep`` however deep; a warning's path read back later names
no secret that the payload beside it hides.
"""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from ingest.facet_problems import redacted_problems
from tests.ingest.helpers import BATCH, LINEAGE, METADATA, error_paths, post_json, run_event

pytestmark = pytest.mark.django_db


def test_a_metadata_values_key_is_escaped_in_the_errors_pointer(ingest_client) -> None:
    record = {"subject": "s", "action": "a", "additionalValues": {"a/b~c": 1, "d": 2}}
    refused = post_json(ingest_client, METADATA, record)
    assert refused.status_code == 400
    # "/additionalValues/a/b~c" pointed at key "b~c" of an object "a" that is not there.
    assert error_paths(refused) == {"/additionalValues/a~1b~0c", "/additionalValues/d"}
    in_array = post_json(ingest_client, METADATA, [{"subject": "s", "action": "a"}, record])
    assert error_paths(in_array) == {"/1/additionalValues/a~1b~0c", "/1/additionalValues/d"}


@pytest.mark.parametrize("levels", [65, 1_000, 1_025, 3_000])
def test_a_body_nested_past_the_limit_is_too_deep_however_deep(ingest_client, levels) -> None:
    body = b"[" * levels + b"]" * levels
    refused = ingest_client.post(LINEAGE, data=body, content_type="application/json")
    assert refused.status_code == 400
    # Past orjson's own 1,024 levels it was "invalid-json", although it is JSON.
    assert refused.json()["type"] == "urn:lineage-catalog:problem:too-deep"


def test_an_ndjson_line_nested_past_orjsons_limit_is_too_deep_at_its_line(ingest_client) -> None:
    body = b'{"a": 1}\n' + b"[" * 2_000 + b"]" * 2_000 + b"\n"
    refused = ingest_client.post(BATCH, data=body, content_type="application/x-ndjson")
    assert refused.status_code == 400
    assert refused.json()["type"] == "urn:lineage-catalog:problem:too-deep"
    assert error_paths(refused) == {"/1"}


def test_a_syntax_error_is_still_invalid_json(ingest_client) -> None:
    refused = ingest_client.post(LINEAGE, data=b"[" * 10 + b"}", content_type="application/json")
    assert refused.json()["type"] == "urn:lineage-catalog:problem:invalid-json"


SECRET = "S3CRET"


def _catalog_facet(properties: dict) -> dict:
    return {
        "_producer": "p",
        "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/CatalogDatasetFacet.json",
        "framework": "hive",
        "type": "hive",
        "name": "prod",
        "catalogProperties": properties,
    }


def test_a_warnings_path_read_back_names_no_secret_its_payload_hides(
    ingest_client, read_client
) -> None:
    # A property keyed by a DSN, with a value of the wrong type: the warning's path quotes
    # the key, which the payload beside it shows redacted (ADR 0179).
    output = {
        "namespace": "s3://lake",
        "name": "orders",
        "facets": {"catalog": _catalog_facet({f"postgres://etl:{SECRET}@db/x": 1})},
    }
    stored = post_json(ingest_client, LINEAGE, run_event(outputs=[output]))
    assert stored.status_code == 201
    event_id = stored.json()["id"]
    detail = read_client.get(f"/api/v1/events/{event_id}")
    (problem,) = detail.json()["facet_problems"]
    assert problem["path"].startswith("/outputs/0/facets/catalog/catalogProperties/postgres:")
    assert problem["facet"] == "/outputs/0/facets/catalog"
    listed = read_client.get("/api/v1/events?has_facet_problems=true")
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    page = admin.get(f"/admin/ingest/event/{event_id}/change/")
    assert page.status_code == 200
    for answer in (detail, listed, page):
        assert SECRET not in answer.content.decode()


def test_a_redacted_pointer_keeps_its_escapes_and_its_plain_keys() -> None:
    problems = [
        {
            "path": "/run/facets/a~1b~0c/x=1/token=abc",
            "message": "m",
            "facet": "/run/facets/a~1b~0c",
            "skipped": False,
        }
    ]
    (shown,) = redacted_problems(problems)
    assert shown["facet"] == "/run/facets/a~1b~0c"
    assert shown["path"].startswith("/run/facets/a~1b~0c/x=1/token=")
    assert "abc" not in shown["path"]
