"""The mount's one entry point: raw-path routing, ingest hand-off, auth, Marquez errors."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import authentication, exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.base import ReadRateThrottle
from api.marquez import curation, paths
from api.marquez.access import anonymous_reads_allowed
from api.marquez.body import BoundedJSONParser
from api.marquez.errors import MarquezError, error_response, marquez_exception_handler
from api.params import nul_parameter
from catalog.reads.timeout import ReadTimedOut, bounded_read
from core.rendering import JSONRenderer
from core.statement_timeout import statement_timed_out
from ingest.authentication import (
    BearerTokenAuthentication,
    HasReadScope,
    TokenPrincipal,
    session_may_read,
)
from ingest.models import TokenScope
from ingest.views import LineageView

_ingest = LineageView.as_view()


def settings_value(key: str) -> Any:
    return settings.MARQUEZ_API[key]


class MarquezReadAccess(HasReadScope):
    """A read token or a staff session, like /api/v1/; anonymous only when configured, and
    then only on MARQUEZ_API["HOSTS"] when hosts are named (api.marquez.hosts)."""

    def has_permission(self, request: Request, view: object) -> bool:
        if request.user is None and anonymous_reads_allowed(request):
            return True
        return super().has_permission(request, view)


class MarquezCurateAccess(HasReadScope):
    """A write the mount answers (a DELETE, ADR 0078; a tag, ADR 0083): a curate token, or a
    staff session holding the change permissions of what it writes; read and ingest tokens
    and anonymous callers never."""

    scope = TokenScope.CURATE
    message = "Curating needs a curate token or a staff session that may change it."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if user is None or not getattr(user, "is_authenticated", False):
            raise exceptions.NotAuthenticated("A curate token or a staff session is required.")
        if isinstance(user, TokenPrincipal):
            return user.scope == self.scope
        routes = view.kwargs.get("routes", [])
        method = request.method or ""
        needed = {
            name
            for route in routes
            if (method, route.handler) in curation.WRITES
            for name in curation.WRITES[(method, route.handler)][1]
        }
        return session_may_read(user, tuple(sorted(needed)) if needed else None)


class MarquezThrottle(ReadRateThrottle):
    """The read throttle; anonymous reads (when allowed) are counted per client address:
    REMOTE_ADDR, or the address the trusted proxies saw (REST_FRAMEWORK["NUM_PROXIES"]), so
    a made-up X-Forwarded-For is not a fresh allowance."""

    def get_cache_key(self, request: Any, view: Any) -> str:
        if request.user is None:
            return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
        return super().get_cache_key(request, view)


class MarquezView(APIView):
    """GET on a resolved route; the writes of api.marquez.curation.WRITES; every other
    method is a Marquez write: 405."""

    authentication_classes = [BearerTokenAuthentication, authentication.SessionAuthentication]
    permission_classes = [MarquezReadAccess]
    throttle_classes = [MarquezThrottle]
    throttle_scope = "read"
    renderer_classes = [JSONRenderer]  # JSON only, whatever the settings add
    parser_classes = [BoundedJSONParser]  # the writes' bodies: bounded, strict (body.py)
    schema = None  # not part of /api/schema/: Marquez publishes its own (docs/marquez.md)

    @property
    def read_permissions(self) -> tuple[str, ...]:
        """Every reading's: the answer may come from any of them (``_first_found``)."""
        routes: list[paths.Route] = self.kwargs.get("routes", [])
        needed = {
            name
            for route in routes
            if route.handler in paths.READS
            for name in paths.ENDPOINTS[route.handler].needs
        }
        return tuple(sorted(needed))

    def get_exception_handler(self) -> Callable[..., Any]:
        return marquez_exception_handler

    def get_permissions(self) -> list[Any]:
        routes = self.kwargs.get("routes", [])
        method = self.request.method
        if any((method, route.handler) in curation.WRITES for route in routes):
            return [MarquezCurateAccess()]
        return list(super().get_permissions())  # other writes: read access, then 405

    def delete(self, request: Request, routes: list[paths.Route]) -> Response:
        """Marquez's soft delete of a dataset, a job or a namespace (a retirement), or of a
        tag (a steward's label)."""
        return self._write(request, routes)

    def post(self, request: Request, routes: list[paths.Route]) -> Response:
        """Marquez's tag of a dataset, a field or a job: a steward's label."""
        return self._write(request, routes)

    def put(self, request: Request, routes: list[paths.Route]) -> Response:
        """Marquez's description of a tag: a steward's ``TagDescription``."""
        return self._write(request, routes)

    def _write(self, request: Request, routes: list[paths.Route]) -> Response:
        method = request.method or ""
        writes = [route for route in routes if (method, route.handler) in curation.WRITES]
        if not writes:
            raise self._read_only()
        for route in writes:
            if (name := nul_parameter(request.query_params, route.kwargs)) is not None:
                raise MarquezError(400, f"{name} must not contain NUL characters.")
        missing: list[MarquezError] = []
        for route in writes:  # the first reading whose object exists, as for a GET
            write = curation.WRITES[(method, route.handler)][0]
            try:
                return Response(write(request, **route.kwargs))
            except MarquezError as error:
                if error.code != 404:
                    raise
                missing.append(error)
        raise missing[0]

    def get(self, request: Request, routes: list[paths.Route]) -> Response:
        if routes[0].handler not in paths.READS:
            raise self._read_only()
        # One check for every route: a NUL in a name or a parameter cannot be in the catalog
        # (PostgreSQL text holds none) and would end in a database error, a 500.
        for route in routes:
            if (name := nul_parameter(request.query_params, route.kwargs)) is not None:
                raise MarquezError(400, f"{name} must not contain NUL characters.")
        # Every answer is bounded in time: offset pages, namespace filters without an index
        # (events of a job namespace) and the charts' aggregates run under a timeout.
        # The web process's one timeout (docs/deploy.md "Statement timeout"), set again for
        # the read's transaction so that a mount served without config/wsgi.py keeps it too;
        # a 503 with Retry-After like /api/v1's, in Marquez's shape (api/marquez/errors.py).
        try:
            with bounded_read(settings.LINEAGE["READ_STATEMENT_TIMEOUT_MS"]):
                body = self._first_found(request, routes)
        except ReadTimedOut:
            raise statement_timed_out() from None
        return Response(body)

    @staticmethod
    def _first_found(request: Request, routes: list[paths.Route]) -> Any:
        """The answer of the first reading whose objects exist, else the first reading's 404.

        Without a raw path (granian gives none: docs/adr/0052-granian-web-server.md) a path
        can have several readings: ".../datasets/x/versions" is dataset x's versions or the
        dataset "x/versions", and only the catalog knows which exists. Any other answer (400,
        success) is the answer. A later reading that is a Marquez write is not tried: its 405
        would say nothing about the names.
        """
        missing: list[MarquezError] = []
        for route in routes:
            if route.handler not in paths.READS:
                continue
            try:
                return paths.READS[route.handler](request, **route.kwargs)
            except MarquezError as error:
                if error.code != 404:
                    raise
                missing.append(error)
        raise missing[0]

    def http_method_not_allowed(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        raise self._read_only()

    @staticmethod
    def _read_only() -> MarquezError:
        return MarquezError(
            405,
            "This catalog's Marquez API is read-only.",
            "Namespaces, jobs and runs come from OpenLineage events: POST them to "
            "/lineage. Datasets, fields and jobs are tagged (POST/DELETE .../tags/{tag}) and "
            "tags described (PUT /tags/{tag}) with a curate token; stewards curate the rest "
            "in the admin.",
        )


_read = MarquezView.as_view()


@csrf_exempt
def entry(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Every path under the mount. ``POST lineage`` is our ingest view, unchanged."""
    if not settings_value("ENABLED"):
        return error_response(404, "The Marquez-compatible API is switched off.")
    raw = paths.raw_rest(request.META, request.path, rest)
    route = paths.resolve(rest, raw) if raw is not None else None
    # No raw path (granian gives none), or one a proxy in front decoded %2F in already: every
    # reading of the decoded path, the usual one first; the view answers the first that exists.
    routes = [route] if route is not None else paths.resolve_all(rest)
    if not routes:
        return error_response(404, f"No Marquez endpoint at /api/v1/{rest}.")
    if routes[0].handler == "lineage" and request.method == "POST":
        return _ingest(request)
    return _read(request, routes=routes)
