"""Which of plain ``/api/v1/``'s paths the mount answers on a host named in
``LINEAGE_MARQUEZ_HOSTS`` (api/marquez/hosts.py, ADR 0159): the paths Marquez and the
catalog both define are the mount's there; every other path of the catalog's own stays the
catalog's, also one the mount would read with a name in it (``/events/export`` is not the
events of a namespace called ``export``)."""

import re
from collections.abc import Iterator

import orjson
from django.test.utils import override_settings
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from api.marquez.hosts import HOST_URLCONF
from api.marquez.views import entry
from tests.marquez.conftest import JOB_NS

HOST = "marquez.example.com"

# Our /api/v1/ routes that Marquez's own URL space holds too: on a Marquez host the mount
# answers them (the catalog's own answer them on the catalog's other host names). Each
# says which Marquez caller needs it; a new route of ours that the mount would take fails
# below until it is named here, with a reason, or kept apart.
SHADOWED = {
    "api/v1/namespaces": "Marquez's namespace list (the web UI, marquez-python)",
    "api/v1/search": "Marquez's search (the web UI's search box)",
    "api/v1/jobs": "Marquez's job list (the web UI's jobs page)",
    "api/v1/events": "marquez-python's list_events()",
    "api/v1/events/<pk>": "marquez-python's list_events(namespace): /events/{namespace}",
    "api/v1/lineage": "Marquez's lineage graph (GET); a POST is the same ingest view",
}


def _routes(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[str]:
    """Every route of the catalog's own URL map under ``api/v1/``, placeholders as ``<name>``."""
    for entry_ in (resolver or get_resolver()).url_patterns:
        pattern = prefix + str(entry_.pattern)
        if isinstance(entry_, URLResolver):
            yield from _routes(entry_, pattern)
        elif isinstance(entry_, URLPattern) and pattern.startswith("api/v1/"):
            pattern = re.sub(r"(?<=/)\^|\$$", "", pattern)  # the router's anchors
            yield re.sub(r"\(\?P<(\w+)>[^)]*\)|<(?:\w+:)?(\w+)>", r"<\1\2>", pattern)


def test_the_mount_takes_only_the_paths_both_define():
    routes = set(_routes())
    assert "api/v1/events/export" in routes and SHADOWED.keys() <= routes
    taken = {
        route
        for route in routes
        if resolve("/" + re.sub(r"<\w+>", "1", route), urlconf=HOST_URLCONF).func is entry
    }
    assert taken == SHADOWED.keys(), taken ^ SHADOWED.keys()


def test_the_export_is_ours_on_a_marquez_host(world, read_client):
    """Answered by the mount, it was ``{"events": [], "totalCount": 0}``: the events of a
    namespace named ``export``."""
    values = {"ENABLED": True, "HOSTS": [HOST], "ALLOW_ANONYMOUS_READS": False}
    with override_settings(MARQUEZ_API=values):
        response = read_client.get("/api/v1/events/export", HTTP_HOST=HOST)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/x-ndjson", response.getvalue()[:200]
        lines = b"".join(response.streaming_content).splitlines()
        assert len(lines) == 4 and orjson.loads(lines[0])["job"]["namespace"] == JOB_NS
        # A path both define is still the mount's there: Marquez's events of a namespace.
        mount = read_client.get(f"/api/v1/events/{JOB_NS}", HTTP_HOST=HOST).json()
        assert mount["totalCount"] == 4 and len(mount["events"]) == 4
        # And the catalog's everywhere else.
        ours = read_client.get("/api/v1/events/export", HTTP_HOST="catalog.example.com")
        assert ours["Content-Type"] == "application/x-ndjson"
