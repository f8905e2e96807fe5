"""Which requests are for pages (the admin, the front page, the explorer) and which for the
API's programs: the one place that decides which middleware only pages need.

Why: every API read ran Django's message storage (two storages built, then asked whether
anything was added) and the admin's viewer variable, which only pages use: 25-30 µs of
the cheapest read's 0.6 ms (ADR 0123). The API (``/api/``, the Marquez mount's
``/marquez/api/``) adds and shows no message and draws no admin page. Sessions, CSRF and
the logged-in user still run for every request: the read API accepts a staff session.
"""

from django.contrib.messages.middleware import MessageMiddleware
from django.http import HttpRequest

API_PREFIXES = ("/api/", "/marquez/api/")


def for_pages(request: HttpRequest) -> bool:
    """Whether ``request`` may draw a page (anything outside the API's paths)."""
    return not request.path_info.startswith(API_PREFIXES)


class PageMessageMiddleware(MessageMiddleware):
    """Django's messages, for pages only (``for_pages``): an API request gets no
    ``request._messages`` (Django's own ``process_response`` and its template context
    already take a request without one as having no message)."""

    def process_request(self, request: HttpRequest) -> None:
        if for_pages(request):
            super().process_request(request)
