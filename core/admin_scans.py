"""Admin filters and searches whose reads stay bounded on tables that grow with use (ADR 0195).

Django's own read the whole table: a list filter on a column without choices
(``AllValuesFieldListFilter``) asks ``SELECT DISTINCT`` of it on every visit of the list,
and a search is an ``icontains`` over every row. Here a filter's choices are the values
present found by a skip scan of an index that starts with the column (one probe a value,
``PresentValuesFilter``), and a free-text search looks only at the newest rows
(``NewestRowsSearchMixin``), which its help text says.
"""

from typing import TYPE_CHECKING, Any, ClassVar

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import PAGE_VAR
from django.db import connection
from django.db.models import QuerySet
from django.http import HttpRequest

# The most values a filter offers: the columns it serves hold a few (reason codes, topics).
MOST_CHOICES = 100
# The rows a free-text search looks at, newest first.
SEARCHED_ROWS = 10_000

if TYPE_CHECKING:
    _AdminBase = admin.ModelAdmin
else:
    _AdminBase = object


def present_values(table: str, column: str, most: int = MOST_CHOICES) -> list[str]:
    """The distinct values of ``table``'s ``column``, in the column's order, the first
    ``most``: one probe of an index that starts with ``column`` a value (a recursive skip
    scan), where ``SELECT DISTINCT`` reads every row. Without such an index each probe is a
    scan: the caller's model names the index."""
    quoted_table, quoted = connection.ops.quote_name(table), connection.ops.quote_name(column)
    sql = f"""WITH RECURSIVE present(value) AS (
            (SELECT {quoted} FROM {quoted_table} WHERE {quoted} IS NOT NULL
             ORDER BY {quoted} LIMIT 1)
            UNION ALL
            SELECT (SELECT {quoted} FROM {quoted_table} WHERE {quoted} > present.value
                    ORDER BY {quoted} LIMIT 1)
            FROM present WHERE present.value IS NOT NULL
        )
        SELECT value FROM present WHERE value IS NOT NULL LIMIT %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [most])
        return [row[0] for row in cursor.fetchall()]


class PresentValuesFilter(admin.SimpleListFilter):
    """A filter on one column offering the values present (``present_values``), under
    Django's own parameter (``<column>__exact``), so that addresses made by the field
    filter it replaces keep filtering. A value typed into the address filters whether it
    is offered or not."""

    column: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.parameter_name = f"{cls.column}__exact"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        values = present_values(model_admin.model._meta.db_table, self.column)
        return [(value, value) for value in values]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        return queryset.filter(**{self.column: value}) if value is not None else queryset


def newest_floor(queryset: QuerySet, rows: int) -> Any:
    """The primary key of ``queryset``'s ``rows``-th newest row (by primary key), or None
    when it holds fewer: ``rows`` entries of the primary key's index, read backwards."""
    keys = queryset.order_by("-pk").values_list("pk", flat=True)[rows - 1 : rows]
    return next(iter(keys), None)


class NewestRowsSearchMixin(_AdminBase):
    """Django's search (``search_fields``, an ``icontains`` a word), over the newest
    ``searched_rows`` rows of the table only: over all of them it read the whole table for
    every search, twice (the page and its count). Its help text says so."""

    searched_rows: ClassVar[int] = SEARCHED_ROWS

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        results, duplicates = super().get_search_results(request, queryset, search_term)
        if not search_term.strip():
            return results, duplicates
        floor = newest_floor(self.model._default_manager.all(), self.searched_rows)
        return (results if floor is None else results.filter(pk__gte=floor)), duplicates


# The rows a filter on a column no index holds in the list's order looks at, newest first.
FILTERED_ROWS = 10_000
# The address parameter that moves that window to the rows before an id ("search older").
WINDOW_VAR = "searched_below"


class ScanWindow:
    """The rows a filtered list searched: ids from ``floor`` (None: from the first) below
    ``below`` (None: up to the newest), at most ``rows`` of them; shown in the sidebar as
    the list's first "filter" (``admin/scan_window.html``), with the link that searches the
    ``rows`` before ``floor``."""

    template = "admin/scan_window.html"
    title = "rows searched"

    def __init__(
        self, rows: int, floor: Any, below: Any, things: str, older: str, newest: str
    ) -> None:
        self.rows, self.floor, self.below, self.things = rows, floor, below, things
        self.rows_text = f"{rows:,}"
        self.older_url, self.newest_url = older, newest

    # The parts of Django's list filter interface the change list uses.
    def has_output(self) -> bool:
        return True

    def choices(self, changelist: Any) -> list[dict[str, Any]]:
        return []

    def expected_parameters(self) -> list[str]:
        return [WINDOW_VAR]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset


class NewestRowsFilterMixin(_AdminBase):
    """A filter on a column no index holds in the list's order (``scanned_columns``) looks
    at the newest ``filtered_rows`` rows by primary key only, newest first: for a rare value
    the page walked the list's index until 50 matched and its count read to 10,001 matches,
    both to the table's end when fewer matched, until the read timeout's 503 (ADR 0208).
    The sidebar says which rows were searched and links the ``filtered_rows`` before them
    (``?searched_below=<id>``), so no row is out of reach and none is silently missing.

    ``scanned_columns`` maps each such column to the values an index of their own serves
    (``derivation_status`` pending and failed): an exact filter by those reads its index."""

    scanned_columns: ClassVar[dict[str, frozenset[str]]] = {}
    filtered_rows: ClassVar[int] = FILTERED_ROWS
    # A search whose matches are few by construction (the ranked search's 500 ids) bounds
    # the list by itself: the filter then narrows those, all of them.
    search_is_bounded: ClassVar[bool] = False

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> Any:
        return windowed(super().get_changelist(request, **kwargs))

    def scans(self, params: dict[str, list[str]], search_term: str, queryset: QuerySet) -> bool:
        """Whether the address filters by a column of ``scanned_columns`` in a way no index
        serves (any lookup but an exact one of an indexed value), the list's rows
        (``queryset``, filtered and searched) not bounded otherwise."""
        if self.search_is_bounded and search_term.strip():
            return False
        for key, values in params.items():
            column, _, lookup = key.partition("__")
            if column not in self.scanned_columns:
                continue
            indexed = self.scanned_columns[column]
            if lookup not in ("", "exact") or not all(value in indexed for value in values):
                return True
        return False


class WindowedChangeListMixin:
    """The change list of a ``NewestRowsFilterMixin`` admin: its window parameter is no
    lookup, and a scanning filter's rows are a range of the primary key, newest first."""

    window: ScanWindow | None = None

    def get_filters_params(self, params: Any = None) -> Any:
        lookup_params = super().get_filters_params(params)  # type: ignore[misc]
        lookup_params.pop(WINDOW_VAR, None)
        return lookup_params

    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet:
        queryset = super().get_queryset(request, exclude_parameters)  # type: ignore[misc]
        admin_ = self.model_admin  # type: ignore[attr-defined]
        params = self.get_filters_params()  # type: ignore[attr-defined]
        if not admin_.scans(params, self.query, queryset):  # type: ignore[attr-defined]
            return queryset
        below = _window_below(request.GET.get(WINDOW_VAR))
        rows = admin_.filtered_rows
        table = admin_.model._default_manager.all()
        floor = newest_floor(table if below is None else table.filter(pk__lt=below), rows)
        if floor is not None:
            queryset = queryset.filter(pk__gte=floor)
        if below is not None:
            queryset = queryset.filter(pk__lt=below)
        # The primary key's order, whatever the list's: a range of it is what bounds the
        # read; walked along another index (a dataset's last_seen) the range is a filter
        # and a rare value read that index to its end.
        queryset = queryset.order_by("-pk")
        get_query_string = self.get_query_string  # type: ignore[attr-defined]
        self.window = ScanWindow(
            rows,
            floor,
            below,
            str(admin_.model._meta.verbose_name_plural),
            older=get_query_string({WINDOW_VAR: floor}, remove=[PAGE_VAR]) if floor else "",
            newest=get_query_string(remove=[WINDOW_VAR, PAGE_VAR]),
        )
        self.filter_specs.insert(0, self.window)  # type: ignore[attr-defined]
        return queryset


_WINDOWED: dict[type, type] = {}


def windowed(base: type) -> type:
    """``base`` change list with the window: one class a base, made once (a class a request
    would be a reference cycle each, for a web process that runs without the collector)."""
    if base not in _WINDOWED:
        _WINDOWED[base] = type("Windowed" + base.__name__, (WindowedChangeListMixin, base), {})
    return _WINDOWED[base]


def _window_below(value: str | None) -> int | None:
    """The id a ``?searched_below=`` names; a value that is no id is refused as Django
    refuses a lookup it cannot apply (its error page, not a 500). At most 19 digits are
    read: Python refuses to read more than 4,300 as an int, a ValueError (ADR 0209)."""
    if value is None:
        return None
    if not (value.isascii() and value.isdigit() and len(value) < 20 and 0 < int(value) < 2**63):
        raise IncorrectLookupParameters(f"{WINDOW_VAR} is no id")
    return int(value)
