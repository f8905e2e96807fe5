"""An unknown ``?format=`` is a 400 problem naming the parameter on every DRF route, not
DRF's bare 404 (core/negotiation.py); a known one still chooses the renderer."""

import pytest

pytestmark = pytest.mark.django_db

ROUTES = ["/api/v1/datasets", "/api/v1/jobs", "/api/v1/stats", "/api/v1/changes", "/api/v1/search"]


@pytest.mark.parametrize("path", ROUTES)
def test_an_unknown_format_is_a_bad_parameter(api, path):
    response = api.get(path, {"format": "xml", "q": "orders"})
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "urn:lineage-catalog:problem:invalid-request"
    assert problem["errors"] == [
        {"path": "/format", "message": "unknown format; this resource has json."}
    ]


def test_the_impact_report_names_both_of_its_formats(api):
    response = api.get("/api/v1/impact", {"node": "dataset:1", "format": "xlsx"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["message"] == (
        "unknown format; this resource has csv or json."
    )


def test_a_known_format_still_renders(api):
    response = api.get("/api/v1/datasets", {"format": "json"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")


def test_the_marquez_mount_answers_in_its_own_error_shape(client):
    response = client.get("/marquez/api/v1/namespaces", {"format": "xml"})
    assert response.status_code == 400
    assert response.json()["message"] == "`format`: unknown format; this resource has json."
