"""An API path with a trailing slash is a 404 that names the path meant (core/problems.py):
the API's paths end without one (docs/api.md), and an OpenLineage transport configured with
``api/v1/lineage/`` was told only "No such resource." Through what config/wsgi.py serves:
the front paths hand the unknown path to Django, whose handler404 answers."""

import orjson
import pytest
from django.core.wsgi import get_wsgi_application
from django.test import RequestFactory

from config.read_front import ReadFrontPath
from core.problems import HINTED_PATH_LENGTH
from ingest.fastpath import IngestFastPath
from tests.ingest.helpers import run_event
from tests.wsgi_answer import wsgi_answer

# Committed rows: the front paths close the thread's connection after their answer.
pytestmark = pytest.mark.django_db(transaction=True)


def answer(method: str, path: str, token: str) -> tuple[int, dict]:
    app = ReadFrontPath(IngestFastPath(get_wsgi_application()))
    request = RequestFactory().generic(
        method,
        path,
        data=orjson.dumps(run_event()) if method == "POST" else b"",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    status, headers, content = wsgi_answer(app, request.environ)
    assert headers["Content-Type"] == "application/problem+json"
    return status, orjson.loads(content)


@pytest.mark.parametrize(
    ("method", "path", "meant"),
    [
        ("POST", "/api/v1/lineage/", "/api/v1/lineage"),
        ("POST", "/api/v1/lineage/batch/", "/api/v1/lineage/batch"),
        ("GET", "/api/v1/jobs/", "/api/v1/jobs"),
        ("GET", "/api/v1/datasets/42/aliases/", "/api/v1/datasets/42/aliases"),
    ],
)
def test_a_trailing_slash_is_told_the_path_meant(
    method: str, path: str, meant: str, ingest_token: str, read_token: str
) -> None:
    token = ingest_token if method == "POST" else read_token
    status, problem = answer(method, path, token)
    assert (status, problem["type"]) == (404, "urn:lineage-catalog:problem:not-found")
    assert problem["detail"] == f"No such resource. The API's paths end without a slash: {meant}"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nothing/",  # no such path with or without the slash
        "/api/v1/nothing",
        "/api/v1/",
        # Longer than a hint looks up: a client's path is echoed only when bounded.
        "/api/v1/jobs/" + "x" * HINTED_PATH_LENGTH + "/",
    ],
)
def test_other_unknown_paths_are_told_nothing_more(path: str, read_token: str) -> None:
    status, problem = answer("GET", path, read_token)
    assert (status, problem["detail"]) == (404, "No such resource.")
