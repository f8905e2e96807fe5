"""docs/api.md: "Every error is an RFC 9457 problem document"; docs/marquez.md: the mount's
errors are Marquez's ``{code, message, details}``. Django refuses a request it cannot read
(more query parameters than ``DATA_UPLOAD_MAX_NUMBER_FIELDS``) before any view's error
handling: its 400 page was HTML on every path (core.problems.bad_request, handler400).

A read with a bearer token and no cookie is served in front of Django's handler
(config/read_front.py), where the refusal, raised inside the view's dispatch, was a 500
(the mount's in HTML): the last tests send it through the application config/wsgi.py serves.
"""

from typing import Any

import orjson
import pytest
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.test import Client, RequestFactory

from config.read_front import ReadFrontPath
from ingest.fastpath import IngestFastPath
from tests.wsgi_answer import wsgi_answer

pytestmark = pytest.mark.django_db

TOO_MANY = "&".join(f"a{number}=1" for number in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
READS = ["/api/v1/jobs", "/api/v1/metadata", "/api/v1/lineage/graph", "/api/v1/events/export"]


@pytest.fixture
def reader(read_token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {read_token}", raise_request_exception=False)


@pytest.mark.parametrize("path", READS)
def test_too_many_parameters_on_the_api_is_a_problem(reader, path) -> None:
    response = reader.get(f"{path}?{TOO_MANY}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "urn:lineage-catalog:problem:invalid-request"
    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in problem["detail"]


def test_too_many_parameters_on_ingest_is_a_problem(ingest_client) -> None:
    response = ingest_client.post(
        f"/api/v1/lineage?{TOO_MANY}", data=b"{}", content_type="application/json"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"


def test_too_many_parameters_on_the_mount_is_marquez_shaped(reader) -> None:
    path = "/marquez/api/v1/namespaces"
    response = reader.get(f"{path}?{TOO_MANY}", RAW_URI=f"{path}?{TOO_MANY}")
    assert response.status_code == 400
    assert set(response.json()) == {"code", "message", "details"}
    assert response.json()["code"] == 400


def test_pages_for_people_keep_djangos_page(admin_client) -> None:
    response = admin_client.get(f"/admin/?{TOO_MANY}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


def test_a_parameter_count_at_the_limit_still_reads(reader) -> None:
    at_limit = "&".join(f"a{n}=1" for n in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS))
    assert reader.get(f"/api/v1/jobs?{at_limit}").status_code == 200


def served(path: str, query: str, **headers: str) -> tuple[int, str, Any]:
    """Status, content type and JSON body of a GET through what config/wsgi.py serves."""
    app = ReadFrontPath(IngestFastPath(get_wsgi_application()))
    request = RequestFactory().get(path, QUERY_STRING=query, **headers)
    status, answer_headers, content = wsgi_answer(app, request.environ)
    return status, answer_headers["Content-Type"], orjson.loads(content)


@pytest.mark.django_db(transaction=True)  # the front path's own connection upkeep
def test_too_many_parameters_on_a_bearer_read_is_a_problem_or_marquez_shaped(read_token) -> None:
    auth = f"Bearer {read_token}"
    for path in [*READS, "/api/v1/jobs/1"]:
        status, content_type, problem = served(path, TOO_MANY, HTTP_AUTHORIZATION=auth)
        assert (status, content_type) == (400, "application/problem+json"), (path, problem)
        assert problem["type"] == "urn:lineage-catalog:problem:invalid-request"
        assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in problem["detail"]
    status, _, body = served("/marquez/api/v1/namespaces", TOO_MANY, HTTP_AUTHORIZATION=auth)
    assert status == 400
    assert body["code"] == 400 and "DATA_UPLOAD_MAX_NUMBER_FIELDS" in body["message"]
