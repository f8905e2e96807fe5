"""The lineage view's answer to an ordinary request, computed without DRF's dispatch.

Why (ADR 0055): on a 2-core machine single-event ingest is CPU-bound, and once Django's
handler was out of the way (ADR 0006) DRF's dispatch was the largest piece of what was
left: wrapping the request, content negotiation by parsing the Accept header, building and
rendering a template response.

An ordinary request is one whose answer DRF's dispatch would reach without choosing
anything: no query string (so no ``?format=``), an Accept header the view's one renderer
takes as it is (``ORDINARY_ACCEPT``), and a bearer token that authenticates and whose scope
the view's permission grants. For it, this module runs the view's own pieces in the order
dispatch runs them: the view's authentication class, its permission class, the view's
``lineage_answer``, the project's exception handler for a refusal, the view's renderer and
its default response headers (``Allow``). Anything else (no token, an unknown one, another
scope, another Accept, a query string) returns None before the body is read, and the view
answers it through DRF.

The shortcut exists only while the view is configured as it was written for
(``for_view``): another authentication, permission, renderer, negotiation or versioning
class, any throttle, or another exception handler turns it off for every request.
``tests/ingest/test_fastpath.py`` compares its answers with Django's, status, body and every
header, and checks that the shipped view is configured for it.
"""

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from core.negotiation import ProblemContentNegotiation
from core.problems import problem_exception_handler
from core.rendering import JSONRenderer
from ingest import views
from ingest.authentication import BearerTokenAuthentication, HasIngestScope

# What DRF's negotiation resolves to the JSON renderer with the media type
# "application/json" and no parameters (no "indent"), as sent by the OpenLineage clients.
ORDINARY_ACCEPT = frozenset({"", "*/*", "application/json"})
MEDIA_TYPE = "application/json"


class DirectLineageAnswer:
    def __init__(self, view_class: type[APIView]) -> None:
        self.authentication = BearerTokenAuthentication()
        self.permission = HasIngestScope()
        self.renderer = JSONRenderer()
        self.headers = view_class().default_response_headers

    @classmethod
    def for_view(cls, view_class: type[APIView]) -> "DirectLineageAnswer | None":
        """The shortcut for ``view_class``, or None when the view is configured otherwise."""
        configured_as_written = (
            view_class.authentication_classes == [BearerTokenAuthentication]
            and view_class.permission_classes == [HasIngestScope]
            and view_class.renderer_classes == [JSONRenderer]
            and not view_class.throttle_classes
            # An ordinary request has no query string, so no ``?format=`` to negotiate:
            # DRF's class and ours (core/negotiation.py) answer it alike.
            and view_class.content_negotiation_class
            in (DefaultContentNegotiation, ProblemContentNegotiation)
            and view_class.versioning_class is None
            and api_settings.EXCEPTION_HANDLER is problem_exception_handler
        )
        return cls(view_class) if configured_as_written else None

    def __call__(self, request: HttpRequest) -> "Answer | None":
        """The view's answer, or None when the request is not ordinary (nothing read yet)."""
        meta = request.META
        if meta.get("QUERY_STRING") or meta.get("HTTP_ACCEPT", "") not in ORDINARY_ACCEPT:
            return None
        try:
            found = self.authentication.authenticate(request)  # type: ignore[arg-type]
        except exceptions.APIException:  # a refused token: the view answers, with its challenge
            return None
        if found is None or not self.permission.grants(found[0]):
            return None
        request.user = found[0]  # type: ignore[assignment]  # as DRF's Request sets it
        try:
            # Looked up on the module when called, as the view's ``post`` looks it up.
            status, data = views.lineage_answer(request)
        except Exception as error:
            refusal = problem_exception_handler(error, {"request": request, "view": None})
            if refusal is None:
                raise  # not an answer DRF gives either: Django's handling applies
            return self._answer(
                refusal.status_code, refusal.data, refusal.content_type, refusal.items()
            )
        return self._answer(status, data, MEDIA_TYPE, ())

    def _answer(self, status: int, data: Any, content_type: str | None, headers: Any) -> "Answer":
        content = self.renderer.render(data, MEDIA_TYPE, {})
        extra = [(name, value) for name, value in headers if name != "Content-Type"]
        return Answer(status, content, content_type or MEDIA_TYPE, (*extra, *self.headers.items()))


@dataclass(frozen=True, slots=True)
class Answer:
    """A direct answer before Django's response object: what the fast path needs to send it
    (ingest/fastpath.py), and ``response()`` when it goes through the header middleware."""

    status: int
    content: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...]  # set in order after Content-Type, as DRF sets them

    def response(self) -> HttpResponse:
        response = HttpResponse(self.content, status=self.status, content_type=self.content_type)
        for name, value in self.headers:
            response[name] = value
        return response
