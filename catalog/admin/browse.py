"""The dataset changelist's browse path (ADR 0093): a column whose levels each link to the
datasets under them, and the ``path`` filter those links set. Bounded: the filter is one
range of the partial index on ``browse_path`` (``DatasetQuerySet.under_path``), and its
choices are the chosen path's own levels (at most ``hierarchy.LIMIT``), never a query."""

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from catalog.facets import hierarchy
from catalog.models import Dataset

PARAMETER = "path"


def _prefixes(path: str) -> list[str]:
    """``db/s/t`` → ``db``, ``db/s``, ``db/s/t`` (each level's path)."""
    levels = [level for level in path.strip("/").split("/") if level][: hierarchy.LIMIT]
    return ["/".join(levels[: depth + 1]) for depth in range(len(levels))]


class BrowsePathFilter(admin.SimpleListFilter):
    title, parameter_name = "browse path", PARAMETER

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        # Climbing back up from a chosen path; choosing one starts from the column's links.
        return [(prefix, prefix) for prefix in _prefixes(self.value() or "")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = (self.value() or "").strip("/")
        if not value:
            return queryset
        return queryset.under_path(value[: hierarchy.KEY_LIMIT])  # type: ignore[attr-defined]


class BrowsePathColumnMixin:
    """``browse_path_column``: the stored (redacted) path, each level a filter link."""

    @admin.display(description="browse path")
    def browse_path_column(self, dataset: Dataset) -> str:
        prefixes = _prefixes(dataset.browse_path)
        return format_html_join(
            " / ",
            '<a href="?{}">{}</a>',
            ((urlencode({PARAMETER: prefix}), prefix.rsplit("/", 1)[-1]) for prefix in prefixes),
        ) or format_html("{}", "")
