"""A NUL in an admin address is answered with a readable 400 page, never a 500.

PostgreSQL text holds no NUL, so a search term or filter value with one fails in the database
wherever it reaches a query: every changelist's search (``q``) and filters (``state__exact``,
``reason__exact``...), the Lineage explorer, and any admin page a later change adds. One
middleware in front of the whole admin refuses them, naming the parameter, with a link to the
same page without its query string (tests/admin/test_query_fuzz.py). A form posted with a NUL
in a field (a retirement's reason, a webhook's namespaces) is refused the same way before any
view reads it: a TextField or a JSON list would otherwise carry it to PostgreSQL, a 500
(tests/admin/test_form_nul.py, ADR 0173). So is a filter naming a time no database holds:
Django parses ``?received_at__gte=2026-01-01T00:00:00-23:59`` (an offset PostgreSQL refuses
past ±15:59) and ``?created_at__year=10000`` (a year Python's datetime refuses) and sends
them on, a 500 on every changelist with a time column, Django's own user list too
(tests/admin/test_time_lookups.py, ADR 0198). And so is a search (``q``) of more than
``MOST_SEARCH_WORDS`` words: Django's search tests every word against every searched column
of every row it reads, so 2,000 words that match every entry kept the admin log's newest
10,000 entries (ADR 0195) busy until the read timeout's 503, 10 s a request
(tests/admin/test_search_words.py, ADR 0207).
"""

from collections.abc import Callable
from datetime import MAXYEAR, MINYEAR
from itertools import islice

from django.contrib import admin
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.text import smart_split

from core.timestamps import postgresql_takes

# Lookups and transforms whose value Django turns into a year's bounds (datetime(year, 1, 1)).
YEAR_LOOKUPS = frozenset({"year", "iso_year"})
# Words a search holds at most: each is one more ILIKE per searched column per row read, so
# the admin log's 10,000 searched entries cost 10 s of PostgreSQL at 2,000 words (ADR 0207).
# A steward types a few.
MOST_SEARCH_WORDS = 10


def nul_parameter(request: HttpRequest, posted: bool = False) -> str | None:
    """The first query parameter (or, ``posted``, form field) whose name or value holds a
    NUL, printable."""
    for name, values in (request.POST if posted else request.GET).lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return name.replace("\x00", "\\0")
    return None


def impossible_moment(request: HttpRequest) -> str | None:
    """The first query parameter naming a moment no database holds: a date-time whose offset
    PostgreSQL refuses (or whose UTC time is past Python's years), or a year lookup's year
    outside 1-9999. Each comma-separated part is read (``__in``, ``__range``); text that is no
    moment is left to the page, whose filters say it is wrong."""
    for name, values in request.GET.lists():
        year = bool(YEAR_LOOKUPS & set(name.split(LOOKUP_SEP)))
        for part in (part.strip() for value in values for part in value.split(",")):
            if year:
                try:
                    number = int(part)
                except ValueError:
                    continue
                if not MINYEAR <= number <= MAXYEAR:
                    return name
                continue
            try:
                moment = parse_datetime(part)
            except ValueError:  # a well-formed impossible date (2026-02-30)
                continue
            if moment is not None and not postgresql_takes(moment):
                return name
    return None


def too_many_words(request: HttpRequest) -> bool:
    """Whether the search term (``q``) holds more words than ``MOST_SEARCH_WORDS``, counted
    as Django's search splits it (``smart_split``: a quoted phrase is one word)."""
    words = islice(smart_split(request.GET.get("q", "")), MOST_SEARCH_WORDS + 1)
    return sum(1 for _ in words) > MOST_SEARCH_WORDS


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
            if (when := impossible_moment(request)) is not None:
                return self.refuse(request, when, moment=True)
            if too_many_words(request):
                return self.refuse(request, "q", words=MOST_SEARCH_WORDS)
            if request.method == "POST" and (field := nul_parameter(request, True)) is not None:
                return self.refuse(request, field, posted=True)
        return self.get_response(request)

    @staticmethod
    def refuse(
        request: HttpRequest,
        name: str | None,
        posted: bool = False,
        moment: bool = False,
        words: int = 0,
    ) -> HttpResponse:
        context = {
            **admin.site.each_context(request),
            "title": "This form cannot be saved" if posted else "This address cannot be searched",
            "parameter": name,
            "posted": posted,
            "moment": moment,
            "words": words,
            "back": request.path.replace("\x00", ""),
        }
        response = TemplateResponse(request, "admin/bad_query.html", context, status=400)
        return response.render()
