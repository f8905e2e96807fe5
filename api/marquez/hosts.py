"""Marquez's UI at plain ``/api/v1/`` on the hosts named in MARQUEZ_API["HOSTS"].

Marquez's web UI proxies to ``<host>/api/v1``. On a host named in the setting (say
``marquez.example.com``, a second DNS name for the same service) this middleware swaps in a
URL map where /api/v1/ is the Marquez mount, ahead of the catalog's own routes; every other
host keeps the catalog's /api/v1/. ``/marquez/api/v1/`` works on every host.
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import include, path

import config.urls
from api.marquez.access import on_marquez_host

HOST_URLCONF = "api.marquez.hosts"

urlpatterns = [path("api/v1/", include("api.marquez.urls")), *config.urls.urlpatterns]
handler404 = config.urls.handler404
handler500 = config.urls.handler500


class MarquezHostsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.MARQUEZ_API["ENABLED"] and on_marquez_host(request):
            request.urlconf = HOST_URLCONF
        return self.get_response(request)
