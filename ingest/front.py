"""What every path served in front of Django shares: ingest's single event (ingest/fastpath.py,
ADR 0006) and the API's authenticated reads (config/read_front.py, ADR 0144).

A front path answers some requests without Django's handler and its middleware chain, and
hands every other to Django (``application``) untouched. What it skips must change nothing
for what it serves, and what the chain would add it adds the same way:
- the Host, validated against ALLOWED_HOSTS as Django does (``KnownHosts``), and a
  plain-HTTP request that SECURE_SSL_REDIRECT would redirect: both left to Django;
- the middleware whose only effect on these answers is their headers (``RESPONSE_MIDDLEWARE``:
  HSTS, nosniff, Referrer-Policy, COOP, Content-Length, X-Frame-Options), run by the same
  classes in settings order around the view (``wrap``);
- a lost database or a statement stopped by the web process's timeout: the 503 of
  ``DatabaseUnavailableMiddleware``; any other exception: logged as Django logs it and
  answered with the project's handler500 problem document (as Django answers with DEBUG off);
- 4xx/5xx answers logged as Django's handler logs them (``django.request``);
- the request-latency histogram, as ``RequestLatencyMiddleware`` observes it;
- the request signals' upkeep (ingest/request_upkeep.py);
- the request and its answer freed by reference counting, as ``FreeingWSGIHandler`` frees
  Django's (core/heap.py).
"""

import logging
import re
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, cast

from django.conf import settings
from django.core import signals
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.log import log_response
from django.utils.module_loading import import_string

from core.heap import free_request
from core.problems import server_error
from ingest.metrics import latency_child, request_labels
from ingest.middleware import database_error_response
from ingest.request_upkeep import RequestUpkeep

# The middleware whose only effect on a front path's answers is headers on the answer; the
# others change nothing there (each front path's docstring says why, for what it serves).
RESPONSE_MIDDLEWARE = {
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
}
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
# An answer's status line, headers and body, as WSGI sends them.
Parts = tuple[str, list[tuple[str, str]], bytes]
# The header middleware's answers a front path learned, at most this many kinds (a few in
# practice: 201 and 200, with and without HTTPS); the Hosts found allowed, at most this many.
MAX_LEARNED = 64
logger = logging.getLogger("django.request")


class FrontPath:
    """The base of a WSGI application that serves some requests in front of ``application``.

    A subclass decides which requests it serves (``__call__``) and answers them through
    ``serve``; its view runs inside the header middleware through ``handler``, which calls
    ``call_view`` and answers its exceptions as Django would (``failed``).
    """

    def __init__(self, application: WSGIApp) -> None:
        self.application = application
        self.handler, _ = self.wrap(self._by_view)
        self.hosts = KnownHosts()
        self.upkeep = RequestUpkeep(self.__class__)

    @staticmethod
    def wrap(respond: Callable[[HttpRequest], HttpResponse]) -> tuple[Any, list[Any]]:
        """``respond`` inside the response middleware, outermost first as in MIDDLEWARE,
        and that middleware, outermost first."""
        handler: Any = respond
        middleware: list[Any] = []
        for path in reversed(settings.MIDDLEWARE):
            if path in RESPONSE_MIDDLEWARE:
                handler = import_string(path)(handler)
                middleware.insert(0, handler)
        return handler, middleware

    def may_serve(self, request: "FrontRequest") -> bool:
        """Whether Django would let ``request`` reach a view: its Host is allowed and no SSL
        redirect answers it (both are Django's to answer)."""
        try:
            self.hosts(request)  # validates Host against ALLOWED_HOSTS
        except DisallowedHost:
            return False
        if not settings.SECURE_SSL_REDIRECT or request.is_secure():
            return True
        # SecurityMiddleware's own test: a path it exempts is served over plain HTTP.
        path = request.path.lstrip("/")
        return any(re.search(pattern, path) for pattern in settings.SECURE_REDIRECT_EXEMPT)

    def serve(
        self,
        request: HttpRequest,
        start_response: Callable[..., Any],
        route: str,
        answer: Callable[[HttpRequest], "Parts | HttpResponseBase"],
    ) -> Iterable[bytes]:
        """``answer(request)`` sent, with what Django's handler and the skipped middleware do
        around a request: the upkeep, the log of a 4xx/5xx, the latency labelled ``route``.

        A streaming answer (an export) is sent as Django's handler sends one: the response
        is the body, and its ``close()`` after the last chunk sends ``request_finished``.
        """
        started = time.perf_counter()
        self.upkeep.started(request.META)
        streaming = None
        try:
            answered = answer(request)
            if isinstance(answered, HttpResponseBase):
                response = answered
                if response.status_code >= 400:
                    log_response(
                        "%s: %s",
                        response.reason_phrase,
                        request.path,
                        response=response,  # type: ignore[arg-type]  # any response
                        request=request,
                    )
                if isinstance(response, StreamingHttpResponse):
                    streaming = response
                    response._handler_class = self.__class__  # type: ignore[attr-defined]  # its signal's sender
                    # Freed when it closes, after its last chunk (core/heap.py, ADR 0132).
                    closers = response._resource_closers  # type: ignore[attr-defined]
                    closers.append(partial(free_request, request, response))
                    answered = (_status(response), list(response.items()), b"")
                else:
                    answered = answer_parts(cast(HttpResponse, response))
                    # What FreeingWSGIHandler does when Django's response closes: the
                    # request's, view's and response's cycles broken, so reference counting
                    # frees them now rather than the collector later (ADR 0132).
                    free_request(request, response)
        finally:
            if streaming is None:
                self.upkeep.finished()
        status, headers, content = answered
        labels = request_labels(request.method, route, int(status[:3]))
        latency_child(*labels).observe(time.perf_counter() - started)
        start_response(status, headers)
        return [content] if streaming is None else streaming

    def call_view(self, request: HttpRequest) -> HttpResponse:
        raise NotImplementedError

    def _by_view(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.call_view(request)
            # What Django's handler does to a view's answer: DRF's Response is rendered.
            render = getattr(response, "render", None)
            return render() if callable(render) else response
        except Exception as error:
            return self.failed(request, error)

    @staticmethod
    def failed(request: HttpRequest, error: Exception) -> HttpResponse:
        """A 503 for a lost database (as the middleware answers it), else the logged 500."""
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


class FrontRequest(WSGIRequest):
    """Django's request, whose host is validated once.

    Why (ADR 0131): ``get_host`` reads the Host header, splits off the port with a regular
    expression and matches it against ALLOWED_HOSTS, about 37,000 instructions (3% of a
    single event's), and every request here asked twice: the front path's own check and
    CommonMiddleware's. What it answers depends on the request's headers and the settings,
    neither of which changes during a request; a refused Host raises every time (and the
    front path leaves that request to Django before anything else asks).
    """

    _host: str | None = None

    def get_host(self) -> str:
        if self._host is None:
            self._host = super().get_host()
        return self._host


class KnownHosts:
    """The Hosts a front path found allowed, so that a request with one of them is not
    validated again.

    Why (ADR 0136): after ADR 0131 a request still validated its Host once, about 3% of a
    single event's instructions (a regular expression splits off the port, then the
    ALLOWED_HOSTS match), and a producer sends the same Host with every event. Whether a
    Host is allowed depends on the raw Host (as Django reads it from the headers), DEBUG and
    ALLOWED_HOSTS only, so those are the key; a Host refused is never kept and is refused
    by Django's own check every time. At most ``MAX_LEARNED`` are kept (a wildcard in
    ALLOWED_HOSTS lets clients choose many).
    """

    def __init__(self) -> None:
        self.allowed: set[tuple[Any, ...]] = set()

    def __call__(self, request: FrontRequest) -> None:
        """Set ``request``'s validated host, or raise ``DisallowedHost`` as Django does."""
        raw = request._get_raw_host()  # type: ignore[attr-defined]  # Django's own reading
        key = (raw, settings.DEBUG, tuple(settings.ALLOWED_HOSTS))
        if key in self.allowed:
            request._host = raw  # what WSGIRequest.get_host answers for an allowed Host
            return
        request.get_host()  # raises for a Host not allowed
        if len(self.allowed) < MAX_LEARNED:
            self.allowed.add(key)


def _status(response: HttpResponseBase) -> str:
    return f"{response.status_code} {response.reason_phrase}"


def answer_parts(response: HttpResponse) -> Parts:
    return _status(response), list(response.items()), response.content
