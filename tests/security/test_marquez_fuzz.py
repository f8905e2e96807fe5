"""Hostile input on the Marquez mount: a Marquez-shaped 4xx, never a 500 (issue 27, item 7).

Every route of api/marquez/paths.py is tried with a NUL in each of its path parameters, and
every date parameter with well-formed impossible dates; the read API (/api/v1) is tried the
same way over every path and query parameter of its OpenAPI schema. Then hypothesis writes
arbitrary text into each segment and parameter.
"""

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from api.marquez import paths
from tests import fast_yaml
from tests.marquez.conftest import JOB_NS, LOAD_RUN, S3, world_once  # noqa: F401  # a fixture

pytestmark = pytest.mark.django_db
FUZZ = hypothesis_settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
ERROR = {"code", "message", "details"}
MOUNT = "/marquez/api/v1/"
# A value for each path parameter under which the route's objects exist.
EXISTING = {
    "namespace": S3,
    "job": "etl.load_orders",
    "dataset": "raw/orders/daily",
    "version": "01930000-0000-7000-8000-000000000001",
    "run": LOAD_RUN,
    "tag": "PII",
    "field": "total",
    "transition": "complete",
    "source": S3,
    "asset": "datasets",
}
JOB_ROUTES = {"jobs", "job", "job_runs"}
# Every date parameter of the mount, by the route that reads it.
DATE_PARAMETERS = [
    ("events/lineage", "after"),
    ("events/lineage", "before"),
    (f"events/{quote(JOB_NS, safe='')}", "after"),
    (f"events/{quote(JOB_NS, safe='')}", "before"),
    ("search", "after"),
    ("search", "before"),
]
IMPOSSIBLE_DATES = [
    "2026-02-30T00:00:00",  # the review's example
    "2026-02-30",
    "2026-04-31T12:00:00Z",
    "0000-01-01",
    "2026-13-01T00:00:00",
    "2026-01-01T24:61:00",
    "9999-12-31T23:59:59-23:59",  # beyond PostgreSQL's offsets and past year 9999 in UTC
    "0001-01-01T00:00:00+23:59",
]


@pytest.fixture
def client(world_once: None, read_token: str, steady_token_cache: None) -> Client:  # noqa: F811
    # The world written once for the module's tests (ADR 0210), each test's writes rolled
    # back to it.
    reader = Client(HTTP_AUTHORIZATION=f"Bearer {read_token}", raise_request_exception=False)
    reader.get("/api/v1/stats")  # the token resolved and cached
    return reader


def _get(client: Client, rest: str, params: dict[str, str] | None = None) -> Any:
    """One request in its own savepoint: a database error cannot spoil the next one."""
    raw = MOUNT + rest
    with transaction.atomic():
        response = client.get(raw, params or {}, RAW_URI=raw)
        transaction.set_rollback(True)
    return response


def _route_path(pattern: str, values: dict[str, str]) -> str:
    namespace = values.get("namespace", EXISTING["namespace"])
    defaults = {**EXISTING, "namespace": JOB_NS if "/jobs" in pattern else namespace}
    merged = {**defaults, **values}
    return re.sub(r"\{(\w+)\}", lambda m: quote(merged[m.group(1)], safe=""), pattern)


READ_ROUTES = [(route.pattern, route.name) for route in paths.ROUTES if route.read is not None]
NAMED_PARAMETERS = [
    (pattern, handler, name)
    for pattern, handler in READ_ROUTES
    for name in re.findall(r"\{(\w+)\}", pattern)
]


def test_every_read_route_answers_with_its_objects(client):
    """The values above name existing objects: the 400s below are the NUL's, not a 404's
    (sources are never found: the catalog has none)."""
    for pattern, handler in READ_ROUTES:
        if handler == "source":
            continue
        params = {"nodeId": f"dataset:{S3}:raw/orders/daily", "q": "orders"}
        response = _get(client, _route_path(pattern, {}), params)
        assert response.status_code == 200, (pattern, response.content)


@pytest.mark.parametrize(("pattern", "handler", "name"), NAMED_PARAMETERS)
def test_a_nul_in_any_path_parameter_is_a_marquez_400(client, pattern, handler, name):
    for bad in ("a\x00b", "\x00", f"{EXISTING[name]}\x00"):
        response = _get(client, _route_path(pattern, {name: bad}))
        assert response.status_code == 400, (pattern, name, response.content)
        assert set(response.json()) == ERROR and "NUL" in response.json()["message"]


def test_a_nul_in_any_query_parameter_is_a_marquez_400(client):
    names = [
        "q",
        "nodeId",
        "namespace",
        "filter",
        "sort",
        "limit",
        "offset",
        "after",
        "before",
        "depth",
        "timezone",
        "period",
        "lastRunStates",
        "sortDirection",
        "type",
    ]
    for pattern, _handler in READ_ROUTES:
        for name in names:
            response = _get(client, _route_path(pattern, {}), {name: "a\x00"})
            assert response.status_code == 400, (pattern, name, response.content)
            assert set(response.json()) == ERROR
        response = _get(client, _route_path(pattern, {}), {"x\x00y": "1"})
        assert response.status_code == 400 and "x\\0y" in response.json()["message"]


@pytest.mark.parametrize(("rest", "name"), DATE_PARAMETERS)
def test_impossible_dates_are_a_marquez_400(client, rest, name):
    for value in IMPOSSIBLE_DATES:
        response = _get(client, rest, {name: value, "q": "orders"})
        assert response.status_code == 400, (rest, name, value, response.content)
        assert set(response.json()) == ERROR and name in response.json()["message"]
    # A real date still reads.
    assert _get(client, rest, {name: "2026-11-01", "q": "orders"}).status_code in (200, 400)


def test_a_utc_offset_is_the_same_moment(client):
    response = _get(client, "events/lineage", {"after": "2026-11-01T11:00:00+01:00"})
    assert response.status_code == 200
    assert response.json()["totalCount"] == 4  # 10:00Z is the first event


segment = st.text(min_size=1, max_size=30)


@FUZZ
@given(
    route=st.sampled_from([route.pattern for route in paths.ROUTES]),
    values=st.dictionaries(st.sampled_from(sorted(EXISTING)), segment, max_size=3),
    params=st.dictionaries(
        st.sampled_from(
            [
                "q",
                "nodeId",
                "after",
                "before",
                "limit",
                "offset",
                "depth",
                "namespace",
                "sortDirection",
                "timezone",
                "period",
                "filter",
            ]
        ),
        st.text(max_size=30),
        max_size=4,
    ),
)
def test_arbitrary_segments_and_parameters_are_never_a_5xx(client, route, values, params):
    response = _get(client, _route_path(route, values), params)
    assert response.status_code < 500, (route, values, params, response.content)
    if response.status_code >= 400:
        assert set(response.json()) == ERROR


# --- the read API, the same way: every path and query parameter of its schema ---------------

# Read when the module is collected, by every xdist worker: libyaml's parser (ADR 0199).
SCHEMA = fast_yaml.load((Path(__file__).parents[2] / "docs" / "openapi.yaml").read_text())
READS = [
    (path, [p for p in op["get"].get("parameters", [])])
    for path, op in SCHEMA["paths"].items()
    if "get" in op
]


@pytest.mark.parametrize(("path", "parameters"), READS, ids=[path for path, _ in READS])
def test_the_read_api_answers_nul_and_impossible_dates_with_a_problem(client, path, parameters):
    in_path = [p["name"] for p in parameters if p["in"] == "path"]
    base = re.sub(r"\{\w+\}", "1", path)
    answers = []
    for name in in_path:
        url = path.replace(f"{{{name}}}", "a%00b")
        url = re.sub(r"\{\w+\}", "1", url)
        answers.append((url, _get_api(client, url)))
    for parameter in (p for p in parameters if p["in"] == "query"):
        for value in ("a\x00b", *IMPOSSIBLE_DATES[:3]):
            extra = {"q": "orders"} if parameter["name"] != "q" and "search" in path else {}
            answers.append((base, _get_api(client, base, {parameter["name"]: value, **extra})))
            if "\x00" in value:
                assert answers[-1][1].status_code == 400, (path, parameter["name"])
    for url, response in answers:
        assert response.status_code < 500, (url, response.content)
        if response.status_code == 400:
            assert response["Content-Type"] == "application/problem+json"
    for url, response in answers[: len(in_path)]:
        assert response.status_code == 400, (url, response.content)


def _get_api(client: Client, url: str, params: dict[str, str] | None = None) -> Any:
    with transaction.atomic():
        response = client.get(url, params or {})
        transaction.set_rollback(True)
    return response
