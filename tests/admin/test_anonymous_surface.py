"""docs/security.md: anonymous callers reach only /healthz, /readyz, /metrics, /api/schema/,
/api/docs/, the front page / (and the admin's login page and the favicon). Every route of
the URL map, the Marquez mount's included, is asked with every method and no credential,
on a derived catalog whose rows the routes' ids name, so a route that forgot its
permission answers 200 rather than 404."""

import re

import pytest
from django.test import Client

from api.marquez.paths import ROUTES
from catalog.models import Dataset, Job, Run
from ingest.models import Event
from tests.security.test_access_control import _routes

pytestmark = pytest.mark.django_db
OPEN = {
    "/",
    "/admin/login/",
    "/api/docs/",
    "/api/schema/",
    "/favicon.ico",
    "/healthz",
    "/metrics",
    "/readyz",
}
REFUSED = {301, 302, 401, 403, 404, 405}


def _paths(ids: set[int]) -> set[str]:
    """Every route with each of ``ids`` in its id parameters (and names for the others)."""
    paths = set()
    patterns = [p for p in _routes() if not p.startswith("marquez/")]
    patterns += [f"marquez/api/v1/{route.pattern}" for route in ROUTES]
    for pattern in patterns:
        for key in ids:
            path = re.sub(r"\(\?P<\w+>[^)]*\)", str(key), pattern)
            path = re.sub(r"<(?:int:)\w+>", str(key), path)
            path = re.sub(r"<(?:\w+:)?\w+>|\{\w+\}", "x", path)
            paths.add("/" + path.replace("^", "").replace("$", "").replace("\\", "").lstrip("/"))
    return paths


def test_anonymous_callers_reach_only_the_open_routes(catalog: list[int]) -> None:
    ids = {
        min(model.objects.values_list("pk", flat=True))  # type: ignore[attr-defined]
        for model in (Dataset, Job, Run, Event)
    }
    reached = []
    for path in sorted(_paths(ids)):
        for method in ("get", "post", "put", "delete"):
            status = getattr(Client(), method)(path).status_code
            if path not in OPEN and status not in REFUSED:
                reached.append((method.upper(), path, status))
    assert reached == []
