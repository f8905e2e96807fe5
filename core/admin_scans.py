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
