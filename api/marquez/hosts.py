"""Marquez's UI at plain ``/api/v1/`` on the hosts named in MARQUEZ_API["HOSTS"].

Marquez's web UI proxies to ``<host>/api/v1``. On a host named in the setting (say
``marquez.example.com``, a second DNS name for the same service) this middleware swaps in a
URL map where /api/v1/ paths Marquez has go to the mount, ahead of the catalog's own routes;
every other path, and every other host, keeps the catalog's /api/v1/. ``/marquez/api/v1/``
works on every host.

Which paths are Marquez's is the mount's own table (api/marquez/paths.py): a path with a
reading there is the mount's; Django's resolver then tries the catalog's routes for the
rest, as for any URL map. (The mount under /marquez/ answers every path itself, with
Marquez's 404 for those it lacks.)

But for one kind (ADR 0159): a path the catalog's own /api/v1/ names in full, with no name
in it, which the mount reads only by taking a segment of it for a name. ``/events/export``
is the catalog's export, not Marquez's events of a namespace called ``export``: the same
rule as inside the mount's table, where the fixed ``events/lineage`` wins over
``events/{namespace}``. Paths both define as they are (``/namespaces``, ``/search``,
``/jobs``, ``/events``, ``/lineage``) and both read with a name (``/events/{id}``, Marquez's
``/events/{namespace}``) stay the mount's: its host is there for Marquez's UI and client.
"""

from collections.abc import Callable
from importlib import import_module
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, URLPattern, get_resolver, include, path
from django.urls.resolvers import RegexPattern

from api.marquez import paths
from api.marquez.access import on_marquez_host
from api.marquez.views import entry

HOST_URLCONF = "api.marquez.hosts"


class MarquezPath(RegexPattern):
    """Any path with a reading in the mount's table (``rest``), unless the mount reads a
    name where the catalog's own routes have a fixed path; other paths do not match."""

    def match(self, path: str) -> tuple[str, tuple[Any, ...], dict[str, Any]] | None:
        found = super().match(path)
        if found is None:
            return None
        route = paths.resolve(found[2]["rest"], None)
        if route is None or (route.kwargs and _catalog_fixed_path(found[2]["rest"])):
            return None
        return found


def _catalog_fixed_path(rest: str) -> bool:
    """Whether the catalog's own URL map has ``/api/v1/<rest>`` as a route without a name in
    it (``events/export``, not ``events/<pk>``). The resolver is Django's, kept per URL map."""
    try:
        match = get_resolver(settings.ROOT_URLCONF).resolve(f"/api/v1/{rest}")
    except Resolver404:
        return False
    return not match.args and not match.kwargs


_mount = [URLPattern(MarquezPath(r"^(?P<rest>.+)$", is_endpoint=True), entry, name="marquez-host")]
# The project's URL map, found as Django finds it (ROOT_URLCONF): the API does not name the
# project's config package, which imports the API (config/read_front.py, config/wsgi.py).
_root = import_module(settings.ROOT_URLCONF)
urlpatterns = [path("api/v1/", include(_mount)), *_root.urlpatterns]
handler400 = _root.handler400
handler404 = _root.handler404
handler500 = _root.handler500


class MarquezHostsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.MARQUEZ_API["ENABLED"] and on_marquez_host(request):
            request.urlconf = HOST_URLCONF
        return self.get_response(request)
