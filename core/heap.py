"""What a long-lived process builds at start-up, kept out of the garbage collector's reach;
and what a web request builds, freed by reference counting when it ends.

Modules, settings, URLconf, DRF and Django classes (about 130,000 objects) live as long as
the process. Left in the collector's generations, every collection that reaches the oldest
one traverses them again, and an ingest process allocates fast enough to run such
collections often: a web request's collections cost 56-93 µs CPU before the freeze, 20
after (issue 14); the Kafka consumer's parse of a 500-message batch 52 µs per message
before, 37 after (issue 28, docs/benchmarks.md).

A request through Django and DRF leaves all it built in reference cycles (ADR 0132): the
request, its view, its response and the answer's data stay unreachable but unfreed until
the collector finds them, and in the web server they were nearly all the collector found
(700 of 700 objects a young collection). Breaking those cycles when the response closes
lets reference counting free them at once, and the collector seldom runs.
"""

import gc
from functools import partial
from typing import Any

from django.core.handlers.wsgi import WSGIHandler


def freeze_startup_heap() -> None:
    """Collect what start-up left as garbage, then freeze everything that remains (moved to
    a permanent generation the collector never traverses). Call once, after start-up and
    before the work loop; in a server that forks, before the fork, so that the children
    share those pages instead of copying them."""
    gc.collect()
    gc.freeze()


def free_request(request: Any, response: Any) -> None:
    """Break the reference cycles of a finished ``request`` and its ``response`` (called
    when the response closes, after its body is sent), so that reference counting frees
    them once the server lets go of the response.

    Django's AuthenticationMiddleware gives the request ``user`` (a lazy object whose
    function closes over the request) and ``auser`` (a partial of the request); a page's
    message storage (``_messages``) keeps the request it belongs to. DRF's view
    keeps its request, its response and its handler as bound methods of itself
    (``view.get = view.retrieve``); its request's ``parser_context`` holds the view and that
    request; the response's ``renderer_context`` holds the view, the request and the
    response. Nothing reads them once the response is closed."""
    state = request.__dict__
    state.pop("user", None)
    state.pop("auser", None)
    state.pop("_messages", None)  # the pages' message storage (core/pages.py) keeps it
    context = getattr(response, "renderer_context", None)
    if context:
        view = context.get("view")
        if view is not None:
            view.__dict__.clear()
        api_request = context.get("request")
        if api_request is not None:
            api_request.__dict__.pop("parser_context", None)
        response.renderer_context = None


class FreeingWSGIHandler(WSGIHandler):
    """Django's WSGI handler, whose requests are freed by reference counting when their
    response closes instead of by the garbage collector later (``free_request``). The web
    server's (config/wsgi.py) only: the test client's handler keeps what tests read."""

    def get_response(self, request: Any) -> Any:
        response: Any = super().get_response(request)
        # Run by close(), which then empties the list: this reference back ends with it.
        response._resource_closers.append(partial(free_request, request, response))
        return response
