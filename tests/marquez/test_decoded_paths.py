"""Reads on a decoded path, as granian serves them (no RAW_URI): names that hold keyword
segments are found by trying the path's readings, the usual one first (ADR 0052)."""

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings

from api.marquez.paths import MAX_READINGS, MAX_SEGMENTS
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.marquez.conftest import LOAD_RUN, REPORT_RUN, S3, event

pytestmark = pytest.mark.django_db

TEAM = "team/jobs/nightly"  # a job namespace holding a "/jobs/" segment


def dataset(name: str) -> dict[str, Any]:
    return {"namespace": S3, "name": name, "facets": {}}


@pytest.fixture
def names_with_keywords(ingest_client: Client) -> None:
    """``s3://lake`` holds ``x`` (written by a run: one version), ``x/versions``,
    ``x/versions/latest`` and ``orders/versions`` (no ``orders``); job ``load`` runs in
    namespace ``team/jobs/nightly``."""
    writes = event("COMPLETE", "2026-11-01T10:05:00Z", LOAD_RUN, "etl.write_x", [], [dataset("x")])
    reads = event(
        "COMPLETE",
        "2026-11-01T11:05:00Z",
        REPORT_RUN,
        "load",
        [dataset("x/versions"), dataset("orders/versions"), dataset("x/versions/latest")],
        [],
    )
    reads["job"]["namespace"] = TEAM
    for document in (writes, reads):
        response = ingest_client.post(
            "/marquez/api/v1/lineage", document, content_type="application/json"
        )
        assert response.status_code in (200, 201), response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))


def decoded_get(client: Client, path: str) -> Any:
    """A GET as granian passes it on: PATH_INFO decoded, and no raw path beside it."""
    return client.get(f"/marquez/api/v1{path}")


@pytest.mark.parametrize("mode", ["mount", "marquez-host"])
def test_names_holding_keywords_are_found_by_their_decoded_path(
    names_with_keywords, read_client, mode
):
    prefix, host = "/marquez/api/v1", "catalog.example.com"
    if mode == "marquez-host":
        prefix, host = "/api/v1", "marquez.example.com"
    settings = {"ENABLED": True, "HOSTS": ["marquez.example.com"], "ALLOW_ANONYMOUS_READS": False}
    with override_settings(MARQUEZ_API=settings):
        found = read_client.get(
            f"{prefix}/namespaces/{S3}/datasets/orders/versions", HTTP_HOST=host
        )
        assert found.status_code == 200, found.content
        assert found.json()["name"] == "orders/versions"
        job = read_client.get(f"{prefix}/namespaces/{TEAM}/jobs/load", HTTP_HOST=host)
        assert job.status_code == 200, job.content
        assert (job.json()["namespace"], job.json()["name"]) == (TEAM, "load")


def test_a_namespace_holding_jobs_answers_its_runs_and_itself(names_with_keywords, read_client):
    runs = decoded_get(read_client, f"/namespaces/{TEAM}/jobs/load/runs")
    assert runs.status_code == 200 and runs.json()["totalCount"] == 1
    namespace = decoded_get(read_client, f"/namespaces/{TEAM}")
    assert namespace.status_code == 200 and namespace.json()["name"] == TEAM


def test_the_usual_reading_wins_when_both_exist(names_with_keywords, read_client):
    """``x`` and ``x/versions`` both exist: the decoded path is ``x``'s versions, as before;
    only a raw path (``x%2Fversions``) reaches the dataset named ``x/versions``."""
    versions = decoded_get(read_client, f"/namespaces/{S3}/datasets/x/versions")
    assert versions.status_code == 200 and versions.json()["totalCount"] == 1
    raw = "/marquez/api/v1/namespaces/s3%3A%2F%2Flake/datasets/x%2Fversions"
    assert read_client.get(raw, RAW_URI=raw).json()["name"] == "x/versions"


def test_when_no_reading_exists_the_answer_is_the_first_readings_404(
    names_with_keywords, read_client
):
    missing = decoded_get(read_client, f"/namespaces/{S3}/datasets/missing/versions")
    assert missing.status_code == 404
    assert missing.json() == {
        "code": 404,
        "message": f"Dataset 'missing' in namespace '{S3}' not found.",
        "details": None,
    }
    nowhere = decoded_get(read_client, "/no/such/thing")
    assert nowhere.status_code == 404
    assert nowhere.json()["message"] == "No Marquez endpoint at /api/v1/no/such/thing."


def test_other_answers_end_the_search(names_with_keywords, read_client):
    """A 400 or a Marquez write's 405 is the answer, whatever later readings would find."""
    write = decoded_get(read_client, f"/namespaces/{TEAM}/jobs/load/versions")
    assert write.status_code == 405 and "read-only" in write.json()["message"]
    # Version "latest" of x is refused (not a UUID), though a dataset "x/versions/latest" exists.
    version = decoded_get(read_client, f"/namespaces/{S3}/datasets/x/versions/latest")
    assert version.status_code == 400 and "UUID" in version.json()["message"]


def test_a_hostile_path_tries_a_bounded_number_of_readings(read_client):
    """A path of MAX_SEGMENTS segments has some 60 readings: MAX_READINGS are looked up."""
    hostile = "/namespaces/" + "datasets/" * (MAX_SEGMENTS - 2) + "x"
    decoded_get(read_client, "/tags")  # the token is looked up (and cached) here
    with CaptureQueriesContext(connection) as queries:
        response = decoded_get(read_client, hostile)
    name = "datasets/" * (MAX_SEGMENTS - 4) + "x"
    assert response.json()["message"] == f"Dataset '{name}' in namespace 'datasets' not found."
    lookups = [query for query in queries if 'FROM "catalog_dataset"' in query["sql"]]
    assert len(lookups) == MAX_READINGS


@pytest.mark.django_db
def test_a_path_ending_in_a_newline_is_answered_by_the_mount(mz) -> None:
    """A regex ``.+$`` neither matches a newline nor stops before a final one: such a path
    fell through the mount to Django's HTML 404 (found by tests/security/test_marquez_fuzz.py)."""
    response = mz.get("/namespaces/airflow-prod/jobs/etl.load_orders/versions/%0A")
    assert 400 <= response.status_code < 500
    assert set(response.json()) == {"code", "message", "details"}
    unknown = mz.get("/no-such-endpoint%0A")
    assert (unknown.status_code, set(unknown.json())) == (404, {"code", "message", "details"})
