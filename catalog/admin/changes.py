"""The Changes page: schema changes of datasets, newest first, and what each breaks
(ADR 0082); a dataset's page shows its own (``changes_table``)."""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.utils.safestring import SafeString

from catalog.admin.support import HiddenIdFilter, link, related_table
from catalog.admin.visibility import HidesRetiredMixin, visible_ids
from catalog.lineage import breaking
from catalog.models import Dataset, DatasetChange, Job
from core.admin_base import BoundedAdmin


class ChangeDatasetFilter(HiddenIdFilter):
    """``?dataset=<id>``: one dataset's changes (through any of its aliases)."""

    parameter_name = "dataset"

    def for_id(self, queryset: QuerySet, value: int) -> QuerySet:
        return queryset.filter(alias__dataset_id=value)


def _breaks_cell(found: breaking.Breaks | None) -> str:
    if found is None:
        return ""
    readers = ", ".join(
        f"{reader['name']}.{reader['field']} ({'current' if reader['current'] else 'stale'})"
        for reader in found.readers
    )
    return f"breaks {readers}" + (" and more" if found.left_out else "")


def changes_table(dataset: Dataset) -> SafeString:
    """The dataset's latest changes with what each breaks, and a link to all of them."""
    changes = list(
        DatasetChange.objects.listed(dataset_id=dataset.pk).order_by("-changed_at", "-id")[:21]
    )
    found = breaking.breaks(changes)
    return related_table(
        changes,
        [
            ("change", link),
            ("when", lambda change: change.changed_at),
            ("type", lambda change: f"{change.old_type} → {change.new_type}".strip(" →")),
            ("breaking", lambda change: _breaks_cell(found.get(change.pk))),
        ],
        limit=20,
        more=(DatasetChange, {"dataset": dataset.pk}),
    )


@admin.register(DatasetChange)
class DatasetChangeAdmin(HidesRetiredMixin, BoundedAdmin):
    retired_datasets = ("alias__dataset",)
    list_display = ("changed_at", "dataset_link", "column", "kind", "old_type", "new_type")
    list_filter = ("kind", ChangeDatasetFilter)
    list_select_related = ("alias__dataset",)
    ordering = ("-changed_at", "-id")  # catalog_change_time_idx
    sortable_by = ("changed_at",)
    fields = (
        "dataset_link",
        "alias",
        "kind",
        "column",
        "old_type",
        "new_type",
        "changed_at",
        "event",
        "run_id",
        "breaks_table",
    )
    readonly_fields = fields
    field_permissions = {"breaks_table": ("catalog.view_job", "catalog.view_columnlineageedge")}

    @admin.display(description="dataset")
    def dataset_link(self, change: DatasetChange) -> Any:
        return link(change.alias.dataset)

    @admin.display(description="what it breaks downstream (column lineage reading the column)")
    def breaks_table(self, change: DatasetChange) -> str:
        found = breaking.breaks([change]).get(change.pk)
        if found is None:
            return "nothing: no column lineage downstream reads this column"
        rows = [
            (reader, int(reader["dataset"].split(":")[1]), int(reader["job"].split(":")[1]))
            for reader in found.readers
        ]
        # A reader's row ends at a retired dataset or runs through a retired job: gone.
        shown = visible_ids("dataset", (row[1] for row in rows))
        through = visible_ids("job", (row[2] for row in rows))
        rows = [row for row in rows if row[1] in shown and row[2] in through]
        datasets = Dataset.objects.in_bulk([row[1] for row in rows])
        jobs = Job.objects.in_bulk([row[2] for row in rows])
        return related_table(
            rows,
            [
                ("column", lambda row: f"{row[0]['field']}"),
                ("of", lambda row: link(datasets.get(row[1]))),
                ("job", lambda row: link(jobs.get(row[2]))),
                ("lineage", lambda row: "current" if row[0]["current"] else "stale"),
            ],
            limit=breaking.READERS_PER_CHANGE,
        )
