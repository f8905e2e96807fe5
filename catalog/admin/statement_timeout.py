"""An admin page whose query ran past the web process's statement timeout: a readable 503
page, never a 500 (core/statement_timeout.py sets the timeout; /api/v1 answers the same
cancellation with a problem document, ingest.middleware)."""

import logging
from collections.abc import Callable

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from core.statement_timeout import RETRY_AFTER_SECONDS, is_statement_timeout

logger = logging.getLogger(__name__)


class AdminStatementTimeoutMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_statement_timeout(exception) or not request.path.startswith(
            reverse("admin:index")
        ):
            return None
        logger.warning("statement_timeout path=%s", request.path)
        context = {**admin.site.each_context(request), "title": "This page took too long"}
        response = TemplateResponse(request, "admin/statement_timeout.html", context, status=503)
        response["Retry-After"] = RETRY_AFTER_SECONDS
        return response.render()
