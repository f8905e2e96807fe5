"""Admin building blocks that stay fast on tables with millions of rows."""

import json
from typing import Any

from django.core.paginator import Paginator
from django.db import connection
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.functional import cached_property
from django.utils.html import format_html

from ingest.redaction import redact

COUNT_CAP = 10_000


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
            "SELECT GREATEST(reltuples, 0)::bigint FROM pg_class WHERE relname = %s", [table]
        )
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] > above else None


class ReadOnlyAdminMixin:
    """For pages that show records nobody edits here (the raw log, the admin log)."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def pretty_json(value: Any) -> str:
    """Read-only, pretty-printed JSON for change pages, with secrets redacted."""
    text = json.dumps(redact(value), indent=2, sort_keys=True, ensure_ascii=False)
    return format_html('<pre style="white-space: pre-wrap; max-width: 100em">{}</pre>', text)
