"""The single-event ingest fast path: ``POST /api/v1/lineage`` served in front of Django.

Why: on a 2-core machine single-event ingest is CPU-bound, and most of a request's CPU
was Django's request cycle (nine middleware, URL resolution), not the work: bench/ingest.py
measured 1,434 events/s through the full stack and 1,860 with this path (ADR 0006).

One pipeline in substance (ADR 0007): the route and its view are read from the URLconf
(``ingest-lineage``). An ordinary request (a bearer token of ingest scope, an Accept
header the view's renderer takes as it is, no query string) is answered by the view's
own pieces without DRF's dispatch (``ingest/direct.py``, ADR 0055); any other by the
view's DRF dispatch (content negotiation with its renderers, its authentication,
permission and throttle classes, its exception handler and response headers). Django's
handler is skipped: the middleware chain and URL resolution. What that chain adds to an
answer is added here by the same classes (``RESPONSE_MIDDLEWARE``, in settings order:
HSTS, nosniff, Referrer-Policy, COOP, Content-Length, X-Frame-Options); 4xx/5xx answers
are logged as Django logs them; an unexpected exception is logged like Django's and
answered with the project's handler500 problem document; a lost database or a statement
stopped by the web process's timeout is a 503, as the middleware answers it. Left to
Django, untouched (nothing read): every other request, a Host not in ALLOWED_HOSTS, and a
plain-HTTP request that SECURE_SSL_REDIRECT would redirect.
``tests/ingest/test_fastpath.py`` checks status, body and every header against Django.
"""

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core import signals
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse
from django.urls import resolve, reverse
from django.utils.log import log_response
from django.utils.module_loading import import_string

from core.problems import server_error
from ingest.direct import DirectLineageAnswer
from ingest.metrics import latency_child, request_labels
from ingest.middleware import database_error_response

URL_NAME = "ingest-lineage"
# The middleware whose only effect on this route is headers on the answer; the others
# (sessions, CSRF for an exempt view, auth, messages, static files) change nothing here.
RESPONSE_MIDDLEWARE = {
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
}
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
logger = logging.getLogger("django.request")


class IngestFastPath:
    def __init__(self, application: WSGIApp) -> None:
        self.application = application
        self.path = reverse(URL_NAME)
        match = resolve(self.path)
        self.route = match.route  # the metric's label, as Django's path gives it
        self.view = match.func
        # The view's answer without DRF's dispatch, for ordinary requests (ADR 0055).
        view_class = getattr(self.view, "view_class", None)  # set by APIView.as_view
        self.direct = DirectLineageAnswer.for_view(view_class) if view_class else None
        self.handler = self._wrap(self._respond)

    @staticmethod
    def _wrap(respond: Callable[[HttpRequest], HttpResponse]) -> Any:
        """``respond`` inside the response middleware, outermost first as in MIDDLEWARE."""
        handler: Any = respond
        for path in reversed(settings.MIDDLEWARE):
            if path in RESPONSE_MIDDLEWARE:
                handler = import_string(path)(handler)
        return handler

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != self.path:
            return self.application(environ, start_response)
        request = WSGIRequest(environ)
        if not self._may_serve(request):
            return self.application(environ, start_response)
        started = time.perf_counter()
        signals.request_started.send(sender=self.__class__, environ=environ)
        try:
            response = self.handler(request)
            if response.status_code >= 400:
                log_response(
                    "%s: %s",
                    response.reason_phrase,
                    request.path,
                    response=response,
                    request=request,
                )
        finally:
            signals.request_finished.send(sender=self.__class__)
        labels = request_labels("POST", self.route, response.status_code)
        latency_child(*labels).observe(time.perf_counter() - started)
        start_response(f"{response.status_code} {response.reason_phrase}", list(response.items()))
        return [response.content]

    @staticmethod
    def _may_serve(request: WSGIRequest) -> bool:
        try:
            request.get_host()  # validates Host against ALLOWED_HOSTS
        except DisallowedHost:
            return False
        return not (settings.SECURE_SSL_REDIRECT and not request.is_secure())

    def _respond(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.direct(request) if self.direct is not None else None
            if response is None:
                response = self.view(request)
                response.render()
            return response
        except Exception as error:
            if (answer := database_error_response(request, error)) is not None:
                return answer
            signals.got_request_exception.send(sender=None, request=request)
            response = server_error(request)
            log_response(
                "%s: %s",
                "Internal Server Error",
                request.path,
                response=response,
                request=request,
                exception=error,
            )
            return response
