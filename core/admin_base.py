"""Admin building blocks that stay fast on tables with millions of rows.

The lowest layer holds them, so the ingest admin and the catalog admin share one base
(``BoundedAdmin``), one "#id" search (``IdSearchMixin``) and one time-window filter.
"""

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import FieldDoesNotExist
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import (
    BinaryField,
    CharField,
    DateTimeField,
    F,
    JSONField,
    QuerySet,
    TextField,
)
from django.db.models.constants import LOOKUP_SEP
from django.db.models.options import Options
from django.http import HttpRequest
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.html import format_html

from core.counts import estimate_sql
from core.redaction import redact

COUNT_CAP = 10_000
# Columns that hold text: a lookup on one from the address bar (``?payload__icontains=``)
# would test stored text the page shows redacted or hides (ADR 0173).
TEXT_FIELDS = (CharField, TextField, JSONField, BinaryField)

# The mixin below only ever sits in front of a ModelAdmin; mypy is told so.
if TYPE_CHECKING:
    _AdminBase = admin.ModelAdmin
else:
    _AdminBase = object


class EstimatedCountPaginator(Paginator):
    """Never counts a whole table.

    Unfiltered: PostgreSQL's planner estimate (pg_class.reltuples). Filtered: an exact count
    capped at ``COUNT_CAP`` rows, so a broad filter costs at most a bounded index scan.
    """

    object_list: QuerySet[Any]  # the admin changelist always paginates a queryset

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        if not queryset.query.where:
            estimate = planner_estimate(queryset.model._meta.db_table, COUNT_CAP)
            if estimate is not None:
                return estimate
        return queryset.order_by()[: COUNT_CAP + 1].count()


def planner_estimate(table: str, above: int) -> int | None:
    """PostgreSQL's estimate of ``table``'s rows (pg_class.reltuples) when it is above
    ``above``; None when the table is small enough to count exactly."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {estimate_sql('reltuples')} FROM pg_class WHERE relname = %s", [table]
        )
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] > above else None


class TimeOrderChangeList(ChangeList):
    """Django's change list, a nullable time column in its order placed as a time nobody
    knows: after every known time newest first, before them oldest first (``timed``), and
    sorted by the address's ``?o=`` only on the columns the admin lists in ``sortable_by``."""

    def get_ordering_field(self, field_name: Any) -> Any:
        """No field to sort by for a column outside ``sortable_by``. Django hides such a
        column's header link but still sorts by ``?o=<its index>`` typed into the address:
        ``/admin/ingest/event/?o=6`` sorted the whole event log by ``received_at``, which no
        index serves (ADR 0193). Without a field, Django skips that part of ``?o=`` as it
        skips an index out of range, and the list keeps the admin's own order."""
        if self.sortable_by is not None and field_name not in self.sortable_by:
            return None
        return super().get_ordering_field(field_name)

    def get_ordering(self, request: HttpRequest, queryset: QuerySet) -> list[Any]:
        ordering = super().get_ordering(request, queryset)
        placed = [timed(self.lookup_opts, term) for term in ordering]
        # A header's click orders by its column, then by the admin's order ("-id") or
        # Django's "-pk": by a time oldest first, the id then runs the way the time does, so
        # the two clicks are exact reverses, one index's order read forwards or backwards.
        if placed and placed[0] is not ordering[0] and not placed[0].descending:
            keys = {"-pk", f"-{self.lookup_opts.pk.attname}"}
            placed = [term[1:] if term in keys else term for term in placed]
        return placed


def timed(opts: Options, term: Any) -> Any:
    """``term`` of an order (``"-started_at"``), a nullable time column's with its NULLs as
    the earliest time: last descending, first ascending (ADR 0160). PostgreSQL puts NULL first
    in DESC, so a run with no start (a placeholder) topped its job's newest runs; and one
    placement both ways is an index's forwards and backwards, so either click of a column's
    header is served by the one index the list's default order has."""
    if not isinstance(term, str):
        return term
    name = term.removeprefix("-")
    try:
        field = opts.get_field(name)
    except FieldDoesNotExist:
        return term
    if not (isinstance(field, DateTimeField) and field.null):
        return term
    return F(name).desc(nulls_last=True) if term.startswith("-") else F(name).asc(nulls_first=True)


class BoundedAdmin(admin.ModelAdmin):
    """The base of every admin over a big table (ADR 0040): no full counts, no facet
    counts, ordering on indexed columns only (subclasses list them in ``sortable_by``),
    a nullable time's NULLs as its earliest (``TimeOrderChangeList``), 50 rows a page, and
    read-only unless a subclass sets ``readonly = False``."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    list_per_page = 50
    sortable_by: ClassVar[tuple[str, ...]] = ()
    readonly: ClassVar[bool] = True
    # Fields that show other kinds of objects, and the view permissions they need: a user
    # without them does not get the field (a dataset's jobs are hidden from one who may
    # view datasets but not jobs), as the read API asks for them (api/access.py).
    field_permissions: ClassVar[dict[str, tuple[str, ...]]] = {}

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return TimeOrderChangeList

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self._permitted(request, super().get_fields(request, obj))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self._permitted(request, super().get_readonly_fields(request, obj))

    def _permitted(self, request: HttpRequest, fields: Any) -> list[Any]:
        needs = self.field_permissions
        return [
            name
            for name in fields
            if not isinstance(name, str) or request.user.has_perms(needs.get(name, ()))
        ]

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        """Django lets an address filter a changelist by any lookup on the model's own
        columns (``?payload__icontains=hunter2``, ``?response_excerpt__contains=``): an
        oracle for the stored text the page redacts or hides (a guessed password shows the
        row or not), and a LIKE scan of a big table. A lookup that reaches a text or JSON
        column is refused (a 400) unless one of the page's own filters offers it, exactly
        or by ``isnull``; ids, numbers, times, flags and columns of fixed choices
        (``?state=FAIL``) filter as before (ADR 0173)."""
        if lookup in self._filter_parameters(request) or not _reaches_text(self.model, lookup):
            return super().lookup_allowed(lookup, value, request)
        return False

    def _filter_parameters(self, request: HttpRequest | None) -> set[str]:
        filters = self.get_list_filter(request) if request is not None else self.list_filter
        names: set[str] = set()
        for item in filters:
            if isinstance(item, str | tuple):
                path = item if isinstance(item, str) else str(item[0])
                names |= {path, f"{path}__exact", f"{path}__isnull"}
            elif (parameter := getattr(item, "parameter_name", None)) is not None:
                names.add(parameter)
        return names

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False if self.readonly else super().has_add_permission(request, *args)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False if self.readonly else super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False if self.readonly else super().has_delete_permission(request, obj)


def _reaches_text(model: Any, lookup: str) -> bool:
    """Whether ``lookup`` (``payload__job__name``, ``job__name__contains``) ends on a text
    or JSON column of free text, following relations as Django's own ``lookup_allowed``
    does."""
    field: Any = None
    for part in lookup.split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            break  # a transform or a lookup: the column is the last field found
        if not getattr(field, "path_infos", None):
            break
        model = field.path_infos[-1].to_opts.model
    # A column of fixed choices (a run's state) holds no producer text: its values are shown.
    return (
        field is not None
        and not field.is_relation
        and not field.choices
        and isinstance(field, TEXT_FIELDS)
    )


def search_id(term: str) -> int | None:
    """The id in a "#123" search term, else None."""
    term = term.strip()
    if not (term.startswith("#") and term[1:].isascii() and term[1:].isdigit() and len(term) < 21):
        return None
    # An id beyond bigint names nothing: no match rather than an overflow in SQL.
    return number if 0 < (number := int(term[1:])) < 2**63 else None


class IdSearchMixin(_AdminBase):
    """Search by "#id" or by exact values, never by a LIKE scan over millions of rows.

    "#123" looks up the primary key; any other term goes to ``search_exact``, which each
    admin writes as equality lookups its indexes serve.
    """

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        if (pk := search_id(term)) is not None:
            return queryset.filter(pk=pk), False
        return self.search_exact(queryset, term), False

    def search_exact(self, queryset: QuerySet, term: str) -> QuerySet:
        raise NotImplementedError


class WindowFilter(admin.SimpleListFilter):
    """Recent time windows on one indexed timestamp column, instead of a date hierarchy
    (which would scan the table for its distinct dates). Subclasses name the column."""

    column: ClassVar[str]
    WINDOWS = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("today", "Today"),
            ("1h", "Last hour"),
            ("24h", "Last 24 hours"),
            ("7d", "Last 7 days"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        now = timezone.now()
        if self.value() == "today":
            since = now.replace(hour=0, minute=0, second=0, microsecond=0)
        elif (window := self.WINDOWS.get(self.value() or "")) is not None:
            since = now - window
        else:
            return queryset
        return queryset.filter(**{f"{self.column}__gte": since})


class ChoicesFilter(admin.SimpleListFilter):
    """A filter over a fixed list of values (no SELECT DISTINCT over the table)."""

    options: ClassVar[list[tuple[str, str]]]  # (value, label)
    column: ClassVar[str]

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return list(self.options)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(**{self.column: self.value()}) if self.value() else queryset


def pretty_json(value: Any) -> str:
    """Read-only, pretty-printed JSON for change pages, with secrets redacted."""
    text = json.dumps(redact(value), indent=2, sort_keys=True, ensure_ascii=False)
    return format_html('<pre style="white-space: pre-wrap; max-width: 100em">{}</pre>', text)
