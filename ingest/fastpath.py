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
HSTS, nosniff, Referrer-Policy, COOP, Content-Length, X-Frame-Options), whose request
checks run before the body is read; a direct 2xx answer gets the headers they gave the
first answer of its kind (``AnswerHeaders``, ADR 0126). Django's request signals' work is
done by ``ingest/request_upkeep.py`` (the signals themselves when others listen). 4xx/5xx
answers are logged as Django logs them; an unexpected exception is logged like Django's and
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
from ingest.direct import Answer, DirectLineageAnswer
from ingest.metrics import latency_child, request_labels
from ingest.middleware import database_error_response
from ingest.request_upkeep import RequestUpkeep

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
        self.handler, _ = self._wrap(self._by_view)
        # An answer made before the middleware runs, dressed by it (ADR 0126).
        self.dress, middleware = self._wrap(_made)
        self.request_checks = [
            each.process_request for each in middleware if hasattr(each, "process_request")
        ]
        self.headers = AnswerHeaders(self.dress)
        self.hosts = KnownHosts()
        self.upkeep = RequestUpkeep(self.__class__)

    @staticmethod
    def _wrap(respond: Callable[[HttpRequest], HttpResponse]) -> tuple[Any, list[Any]]:
        """``respond`` inside the response middleware, outermost first as in MIDDLEWARE,
        and that middleware, outermost first."""
        handler: Any = respond
        middleware: list[Any] = []
        for path in reversed(settings.MIDDLEWARE):
            if path in RESPONSE_MIDDLEWARE:
                handler = import_string(path)(handler)
                middleware.insert(0, handler)
        return handler, middleware

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != self.path:
            return self.application(environ, start_response)
        request = _Request(environ)
        if not self._may_serve(request, self.hosts):
            return self.application(environ, start_response)
        started = time.perf_counter()
        self.upkeep.started(environ)
        try:
            response = None
            answered = self._answered(request)
            if answered is None:
                response = self.handler(request)
                answered = _parts(response)
            elif isinstance(answered, HttpResponse):
                response = answered
                answered = _parts(response)
            if response is not None and response.status_code >= 400:
                log_response(
                    "%s: %s",
                    response.reason_phrase,
                    request.path,
                    response=response,
                    request=request,
                )
        finally:
            self.upkeep.finished()
        status, headers, content = answered
        labels = request_labels("POST", self.route, int(status[:3]))
        latency_child(*labels).observe(time.perf_counter() - started)
        start_response(status, headers)
        return [content]

    @staticmethod
    def _may_serve(request: "_Request", hosts: "KnownHosts") -> bool:
        try:
            hosts(request)  # validates Host against ALLOWED_HOSTS
        except DisallowedHost:
            return False
        return not (settings.SECURE_SSL_REDIRECT and not request.is_secure())

    def _answered(self, request: HttpRequest) -> "Parts | HttpResponse | None":
        """The direct answer: its parts, or its response when it was a refusal or failed;
        None when the view answers (not an ordinary request, or a middleware answers it)."""
        if self.direct is None:
            return None
        for check in self.request_checks:  # the middleware's own checks, before the body
            if check(request) is not None:
                return None  # the middleware answers, as the handler runs it again
        try:
            answer = self.direct(request)
        except Exception as error:
            return _dressed(self.dress, request, self._failed(request, error))
        if answer is None:
            return None
        if answer.status < 400:
            return self.headers(request, answer)
        return _dressed(self.dress, request, answer.response())

    def _by_view(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.view(request)
            response.render()
            return response
        except Exception as error:
            return self._failed(request, error)

    @staticmethod
    def _failed(request: HttpRequest, error: Exception) -> HttpResponse:
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


class _Request(WSGIRequest):
    """Django's request, whose host is validated once.

    Why (ADR 0131): ``get_host`` reads the Host header, splits off the port with a regular
    expression and matches it against ALLOWED_HOSTS, about 37,000 instructions (3% of a
    single event's), and every request here asked twice: the fast path's own check and
    CommonMiddleware's. What it answers depends on the request's headers and the settings,
    neither of which changes during a request; a refused Host raises every time (and the
    fast path leaves that request to Django before anything else asks).
    """

    _host: str | None = None

    def get_host(self) -> str:
        if self._host is None:
            self._host = super().get_host()
        return self._host


# The header middleware's answers it learned, at most this many kinds (a few in practice:
# 201 and 200, with and without HTTPS); the Hosts found allowed, at most this many.
MAX_LEARNED = 64


class KnownHosts:
    """The Hosts this fast path found allowed, so that a request with one of them is not
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

    def __call__(self, request: _Request) -> None:
        """Set ``request``'s validated host, or raise ``DisallowedHost`` as Django does."""
        raw = request._get_raw_host()  # type: ignore[attr-defined]  # Django's own reading
        key = (raw, settings.DEBUG, tuple(settings.ALLOWED_HOSTS))
        if key in self.allowed:
            request._host = raw  # what WSGIRequest.get_host answers for an allowed Host
            return
        request.get_host()  # raises for a Host not allowed
        if len(self.allowed) < MAX_LEARNED:
            self.allowed.add(key)


# An answer's status line, headers and body, as WSGI sends them.
Parts = tuple[str, list[tuple[str, str]], bytes]


class AnswerHeaders:
    """The headers of a direct 2xx answer, learned from the header middleware once per kind.

    Why (ADR 0126): building Django's response and running the three header middleware
    classes was about a tenth of a single-event request's instructions, to add the same
    headers to every 201. Each of them decides from the request's scheme, the answer's
    status and the headers already set, never from the body, but for ``Content-Length``
    (CommonMiddleware): so the first answer of a kind (status, content type, headers set,
    HTTPS or not) is dressed by the middleware itself, and later ones get its headers with
    their own length, in the same place. An answer the middleware changed otherwise (its
    body, or no length) is never learned: it is dressed every time.
    ``tests/ingest/test_fastpath.py`` compares every header with Django's own answer.
    """

    def __init__(self, dress: Callable[[HttpRequest], HttpResponse]) -> None:
        self.dress = dress
        self.learned: dict[tuple[Any, ...], tuple[str, list[tuple[str, str]], int]] = {}

    def __call__(self, request: HttpRequest, answer: Answer) -> Parts:
        key = (answer.status, answer.content_type, answer.headers, request.is_secure())
        learned = self.learned.get(key)
        if learned is not None:
            status, headers, at = learned
            headers = headers.copy()
            headers[at] = ("Content-Length", str(len(answer.content)))
            return status, headers, answer.content
        status, headers, content = _parts(_dressed(self.dress, request, answer.response()))
        lengths = [at for at, (name, _) in enumerate(headers) if name == "Content-Length"]
        if (
            content == answer.content
            and len(lengths) == 1
            and headers[lengths[0]][1] == str(len(content))
            and len(self.learned) < MAX_LEARNED
        ):
            self.learned[key] = (status, headers.copy(), lengths[0])
        return status, headers, content


def _dressed(
    dress: Callable[[HttpRequest], HttpResponse], request: HttpRequest, response: HttpResponse
) -> HttpResponse:
    """``response`` through the header middleware (``dress``), as if the view had made it."""
    request.fastpath_response = response  # type: ignore[attr-defined]  # read by ``_made``
    try:
        return dress(request)
    finally:
        del request.fastpath_response  # type: ignore[attr-defined]


def _made(request: HttpRequest) -> HttpResponse:
    return request.fastpath_response  # type: ignore[attr-defined,no-any-return]


def _parts(response: HttpResponse) -> Parts:
    return (
        f"{response.status_code} {response.reason_phrase}",
        list(response.items()),
        response.content,
    )
