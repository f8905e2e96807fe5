"""RFC 9457 problem documents: the one shape every error of this service takes.

``type`` is a stable URN per kind of problem (documented in docs/problems.md); ``errors``
names each offending field as a JSON Pointer into the request body.
"""

from dataclasses import dataclass, field
from typing import Any

import orjson
from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.views.defaults import bad_request as default_bad_request
from django.views.defaults import page_not_found
from django.views.defaults import server_error as default_server_error
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

PROBLEM_CONTENT_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:lineage-catalog:problem:"
# The WWW-Authenticate challenge of a 401 (ingest.authentication and the ingest fast path).
BEARER_CHALLENGE = 'Bearer realm="lineage-catalog"'


@dataclass
class FieldError:
    path: str  # JSON Pointer, e.g. "/run/runId" or "/3/eventTime" inside a batch
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass
class Problem(Exception):
    """An error answered with a problem document; raised anywhere under a view."""

    status: int
    slug: str
    title: str
    detail: str = ""
    errors: list[FieldError] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": TYPE_PREFIX + self.slug,
            "title": self.title,
            "status": self.status,
        }
        if self.detail:
            body["detail"] = self.detail
        if self.errors:
            body["errors"] = [error.as_dict() for error in self.errors]
        return body


def invalid_event(errors: list[FieldError], detail: str = "") -> Problem:
    return Problem(
        status=400,
        slug="invalid-event",
        title="The event is not a valid OpenLineage event",
        detail=detail or f"{len(errors)} field(s) failed validation; see errors.",
        errors=errors,
    )


def problem_response(problem: Problem) -> HttpResponse:
    """A plain Django response, for code paths outside DRF (middleware, ingest hot path)."""
    response = HttpResponse(
        orjson.dumps(problem.as_dict()), status=problem.status, content_type=PROBLEM_CONTENT_TYPE
    )
    for name, value in problem.headers.items():
        response[name] = value
    return response


_DRF_SLUGS = {
    status.HTTP_401_UNAUTHORIZED: ("unauthenticated", "Authentication required"),
    status.HTTP_403_FORBIDDEN: ("forbidden", "Not allowed"),
    status.HTTP_404_NOT_FOUND: ("not-found", "Not found"),
    status.HTTP_405_METHOD_NOT_ALLOWED: ("method-not-allowed", "Method not allowed"),
    status.HTTP_406_NOT_ACCEPTABLE: ("not-acceptable", "Not acceptable"),
    status.HTTP_415_UNSUPPORTED_MEDIA_TYPE: ("unsupported-media-type", "Unsupported media type"),
    status.HTTP_429_TOO_MANY_REQUESTS: ("throttled", "Too many requests"),
}


def _status_problem(status: int, detail: str) -> Problem:
    slug, title = _DRF_SLUGS.get(status, ("error", "Request failed"))
    return Problem(status=status, slug=slug, title=title, detail=detail)


def _flatten(detail: Any, prefix: str = "") -> list[FieldError]:
    if isinstance(detail, dict):
        out: list[FieldError] = []
        for key, value in detail.items():
            path = prefix if key == "non_field_errors" else f"{prefix}/{key}"
            out.extend(_flatten(value, path))
        return out
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return [FieldError(prefix or "/", str(item)) for item in detail]
        out = []
        for index, item in enumerate(detail):
            out.extend(_flatten(item, f"{prefix}/{index}"))
        return out
    return [FieldError(prefix or "/", str(detail))]


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: every error becomes a problem document."""
    if unreadable_request(exc):
        exc = unreadable(exc)
    if isinstance(exc, Problem):
        return Response(
            exc.as_dict(),
            status=exc.status,
            headers=exc.headers,
            content_type=PROBLEM_CONTENT_TYPE,
        )
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        problem = Problem(
            status=response.status_code,
            slug="invalid-request",
            title="The request is not valid",
            detail="One or more fields failed validation; see errors.",
            errors=_flatten(exc.detail),
        )
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else ""
        problem = _status_problem(response.status_code, str(detail))
    response.data = problem.as_dict()
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


# The longest path whose slash-less twin is looked up for a 404's hint: a client chooses the
# path, so the lookup (and the path echoed in the hint) stays bounded.
HINTED_PATH_LENGTH = 256


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: a problem document under /api/, Django's page elsewhere."""
    if _is_api(request):
        return problem_response(
            Problem(status=404, slug="not-found", title="Not found", detail=_not_found(request))
        )
    return page_not_found(request, exception)


def _not_found(request: HttpRequest) -> str:
    """A 404's detail. The API's paths end without a slash (docs/api.md); a client that adds
    one (an OpenLineage transport's endpoint written ``api/v1/lineage/``) is told the path
    it meant, when that path exists."""
    path = request.path_info
    if not path.endswith("/") or len(path) > HINTED_PATH_LENGTH:
        return "No such resource."
    try:
        resolve(path.rstrip("/"))
    except Resolver404:
        return "No such resource."
    meant = request.path.rstrip("/")
    return f"No such resource. The API's paths end without a slash: {meant}"


def unreadable_request(error: Exception) -> bool:
    """Whether ``error`` is Django's refusal of a request it cannot read (``request.GET`` past
    ``DATA_UPLOAD_MAX_NUMBER_FIELDS``, ...), raised where a view first reads the request.

    Why here too, not only in handler400: DRF's views read ``request.GET`` in their own
    dispatch (negotiation reads ``?format=``), so the refusal reaches the view's exception
    handler first. Left to it, Django's handler turned it into handler400's answer, but the
    paths served in front of Django (config/read_front.py, ingest/front.py) answered the
    unhandled exception with a 500, and an API read with a bearer token is served there."""
    return isinstance(error, SuspiciousOperation | BadRequest)


def unreadable(error: Exception) -> Problem:
    """handler400's problem document for ``error`` (``unreadable_request``)."""
    return Problem(
        status=400,
        slug="invalid-request",
        title="The request is not valid",
        detail=request_error_detail(error),
    )


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: a problem document under /api/, Django's page elsewhere. Django answers
    a request it cannot read itself (more than ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` query
    parameters, a body past ``DATA_UPLOAD_MAX_MEMORY_SIZE``, a Host it does not serve)
    before any view's error handling: its page was HTML, even to the API's programs."""
    if _is_api(request):
        return problem_response(unreadable(exception))
    return default_bad_request(request, exception)


def request_error_detail(exception: Exception) -> str:
    """What a client may be told of Django's refusal: the limit it went past (the text of
    Django's own request-data errors), nothing of anything else (a Host header's check)."""
    if isinstance(exception, RequestDataTooBig | TooManyFieldsSent | TooManyFilesSent):
        return str(exception)
    return "The request could not be read."


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a problem document under /api/ (never HTML to a program)."""
    if _is_api(request):
        return problem_response(
            Problem(status=500, slug="server-error", title="Internal server error")
        )
    return default_server_error(request)
