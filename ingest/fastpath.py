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
What it shares with the API's read path (the Host check, the header middleware, the log, the
latency, the upkeep, the error answers) is ``ingest/front.py``'s ``FrontPath``.
``tests/ingest/test_fastpath.py`` checks status, body and every header against Django.
"""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import resolve, reverse

from ingest.direct import Answer, DirectLineageAnswer
from ingest.front import MAX_LEARNED, FrontPath, FrontRequest, Parts, WSGIApp, answer_parts

URL_NAME = "ingest-lineage"


class IngestFastPath(FrontPath):
    def __init__(self, application: WSGIApp) -> None:
        super().__init__(application)
        self.path = reverse(URL_NAME)
        match = resolve(self.path)
        self.route = match.route  # the metric's label, as Django's path gives it
        self.view = match.func
        # The view's answer without DRF's dispatch, for ordinary requests (ADR 0055).
        view_class = getattr(self.view, "view_class", None)  # set by APIView.as_view
        self.direct = DirectLineageAnswer.for_view(view_class) if view_class else None
        # An answer made before the middleware runs, dressed by it (ADR 0126).
        self.dress, middleware = self.wrap(_made)
        self.request_checks = [
            each.process_request for each in middleware if hasattr(each, "process_request")
        ]
        self.headers = AnswerHeaders(self.dress)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != self.path:
            return self.application(environ, start_response)
        request = FrontRequest(environ)
        if not self.may_serve(request):
            return self.application(environ, start_response)
        return self.serve(request, start_response, self.route, self._answer)

    def call_view(self, request: HttpRequest) -> HttpResponse:
        return self.view(request)  # type: ignore[no-any-return]

    def _answer(self, request: HttpRequest) -> Parts | HttpResponse:
        """The direct answer, else the view's (through the header middleware)."""
        answered = self._answered(request)
        return self.handler(request) if answered is None else answered

    def _answered(self, request: HttpRequest) -> Parts | HttpResponse | None:
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
            return _dressed(self.dress, request, self.failed(request, error))
        if answer is None:
            return None
        if answer.status < 400:
            return self.headers(request, answer)
        return _dressed(self.dress, request, answer.response())


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
        status, headers, content = answer_parts(_dressed(self.dress, request, answer.response()))
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
