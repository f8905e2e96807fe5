"""A NUL in an admin address is answered with a readable 400 page, never a 500.

PostgreSQL text holds no NUL, so a search term or filter value with one fails in the database
wherever it reaches a query: every changelist's search (``q``) and filters (``state__exact``,
``reason__exact``...), the Lineage explorer, and any admin page a later change adds. One
middleware in front of the whole admin refuses them, naming the parameter, with a link to the
same page without its query string (tests/admin/test_query_fuzz.py). A form posted with a NUL
in a field (a retirement's reason, a webhook's namespaces) is refused the same way before any
view reads it: a TextField or a JSON list would otherwise carry it to PostgreSQL, a 500
(tests/admin/test_form_nul.py, ADR 0173).
"""

from collections.abc import Callable

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse


def nul_parameter(request: HttpRequest, posted: bool = False) -> str | None:
    """The first query parameter (or, ``posted``, form field) whose name or value holds a
    NUL, printable."""
    for name, values in (request.POST if posted else request.GET).lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return name.replace("\x00", "\\0")
    return None


class AdminQueryGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.prefix: str | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.prefix is None:
            self.prefix = reverse("admin:index")
        if request.path.startswith(self.prefix):
            name = nul_parameter(request)
            if name is not None or "\x00" in request.path:
                return self.refuse(request, name)
            if request.method == "POST" and (field := nul_parameter(request, True)) is not None:
                return self.refuse(request, field, posted=True)
        return self.get_response(request)

    @staticmethod
    def refuse(request: HttpRequest, name: str | None, posted: bool = False) -> HttpResponse:
        context = {
            **admin.site.each_context(request),
            "title": "This form cannot be saved" if posted else "This address cannot be searched",
            "parameter": name,
            "posted": posted,
            "back": request.path.replace("\x00", ""),
        }
        response = TemplateResponse(request, "admin/bad_query.html", context, status=400)
        return response.render()
