"""The API's authenticated reads served in front of Django (issue 42 item 1, ADR 0144).

Why: an authenticated GET through Django's handler and its middleware chain cost about
600 µs of a worker's CPU before the read did anything (ADR 0135's table: the middleware
~205 µs, the WSGI handler ~70-100, URL resolution ~90-160, ...), about as much as a
detail's or a deep runs page's bare SQL. The ingest fast path (ingest/fastpath.py, ADR
0006) already serves single events without it; this does the same for the reads, with the
same ``FrontPath`` (ingest/front.py): Host check, header middleware, log, latency, upkeep
and error answers written once for both.

Served here: a GET or HEAD under ``/api/v1/`` or ``/marquez/api/v1/`` with an
``Authorization: Bearer`` header and no cookie, whose path Django's resolver maps to a
view whose authentication is decided by the bearer token alone (a DRF view with
``BearerTokenAuthentication`` first, or the Marquez mount's entry, which hands a GET to
one). The view runs as Django's handler runs it (DRF's dispatch: negotiation,
authentication, permissions, throttles, the exception handler), inside the header
middleware. Left to Django, untouched: every other request, a Host not in ALLOWED_HOSTS, a
plain-HTTP request SECURE_SSL_REDIRECT would redirect, a Host of MARQUEZ_API["HOSTS"] and a
path that does not resolve (404s log a warning in Django's handler).

Every middleware of config/settings (base.py, and production.py's first), and why skipping
it changes nothing for what is served here:
- ``RequestLatencyMiddleware``: observed here, with the same route label (``route_label``).
- ``SecurityMiddleware``, ``CommonMiddleware``, ``XFrameOptionsMiddleware``: run, the same
  classes around the view (their request checks too); SSL redirects are left to Django.
- ``WhiteNoiseMiddleware``: serves STATIC_URL's paths only, never ``/api/``.
- ``DatabaseUnavailableMiddleware``: its 503 is ``FrontPath.failed``'s.
- ``SessionMiddleware``: with no Cookie header the session is empty; it adds ``Vary:
  Cookie`` only when something reads the session, and nothing does: the bearer
  authentication decides before DRF's ``SessionAuthentication`` (the only reader, through
  ``request._request.user``) is asked, and DRF sets that attribute, never reads it.
- ``CsrfViewMiddleware``: a GET or HEAD is never checked, DRF's views are csrf_exempt, and
  with no cookie and no ``get_token`` call it sets no cookie.
- ``AuthenticationMiddleware``: its lazy ``request.user`` is never read (above); DRF sets it.
- ``AdminViewerMiddleware``, ``PageMessageMiddleware``: pages only (``core.pages.for_pages``).
- ``MarquezHostsMiddleware``: changes nothing on other hosts; its hosts are left to Django.
- ``AdminQueryGuardMiddleware``, ``AdminStatementTimeoutMiddleware``: admin paths only.

What Django's handler does besides: the script prefix is set from the request, as its WSGI
handler sets it; ``request.resolver_match`` is set; the view's DRF response is rendered; a
streaming answer (an export) is sent as the handler sends one (ingest/front.py). As on the
ingest path, an unexpected error is the handler500 problem document even with DEBUG on.
``tests/api/test_read_front.py`` compares status, body and every header with Django's.
"""

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import get_script_name
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, ResolverMatch, get_resolver, set_script_prefix
from rest_framework.views import APIView

from api.marquez.access import on_marquez_host
from api.marquez.views import MarquezView
from api.marquez.views import entry as marquez_entry
from ingest.authentication import BearerTokenAuthentication
from ingest.front import FrontPath, FrontRequest
from ingest.metrics import route_label

PREFIXES = ("/api/v1/", "/marquez/api/v1/")
# Plain function views and the DRF view each hands a GET to (the Marquez mount's entry).
HANDED_TO: dict[Callable[..., Any], type[APIView]] = {marquez_entry: MarquezView}
# Paths resolved, kept per process: at most this many, each at most this long (clients
# choose paths; a longer one is resolved every time, as Django does).
MAX_PATHS = 2048
MAX_KEPT_PATH = 256


class ReadFrontPath(FrontPath):
    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        method = environ.get("REQUEST_METHOD")
        if (
            (method != "GET" and method != "HEAD")
            or environ.get("HTTP_COOKIE")  # an empty one is no cookie (Django reads none)
            or environ.get("HTTP_AUTHORIZATION", "")[:7].lower() != "bearer "
            or not environ.get("PATH_INFO", "").startswith(PREFIXES)
        ):
            return self.application(environ, start_response)
        request = FrontRequest(environ)
        if not self.may_serve(request) or on_marquez_host(request):
            return self.application(environ, start_response)
        match = served_match(settings.ROOT_URLCONF, request.path_info)
        if match is None:
            return self.application(environ, start_response)
        set_script_prefix(get_script_name(environ))  # as Django's WSGI handler does
        request.resolver_match = match
        return self.serve(request, start_response, route_label(request), self.handler)

    def call_view(self, request: HttpRequest) -> HttpResponse:
        view, args, kwargs = request.resolver_match  # type: ignore[misc]
        return view(request, *args, **kwargs)  # type: ignore[no-any-return]


def served_match(urlconf: str, path: str) -> ResolverMatch | None:
    """Django's resolution of ``path`` when its view is served here, else None.

    Kept per path: what a path resolves to depends on the URL map only (its converters are
    ``str`` and ``int``, no lookups), and nothing changes a ``ResolverMatch`` after it is
    made (the view gets its own copy of the keyword arguments)."""
    if len(path) > MAX_KEPT_PATH:
        return _resolved(urlconf, path)
    return _kept(urlconf, path)


def _resolved(urlconf: str, path: str) -> ResolverMatch | None:
    try:
        match = get_resolver(urlconf).resolve(path)
    except Resolver404:
        return None
    return match if bearer_decides(match.func) else None


_kept = lru_cache(maxsize=MAX_PATHS)(_resolved)


def bearer_decides(view: Callable[..., Any]) -> bool:
    """Whether a request with an ``Authorization`` header is authenticated by its token
    alone at ``view``: DRF's view class (or the one a plain view hands a GET to) asks
    ``BearerTokenAuthentication`` first, which answers a principal or a 401 for any such
    header, so no session is ever read (and no ``Vary: Cookie`` added)."""
    view_class = getattr(view, "cls", None) or HANDED_TO.get(view)  # DRF's as_view sets cls
    if view_class is None or "authentication_classes" in getattr(view, "initkwargs", {}):
        return False
    first = list(view_class.authentication_classes)[:1]
    return (
        view_class.get_authenticators is APIView.get_authenticators
        and bool(first)
        and issubclass(first[0], BearerTokenAuthentication)
    )
