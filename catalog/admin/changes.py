"""The Changes page: what changed about datasets and jobs, newest first, and what each
schema change breaks (ADR 0082, ADR 0088); a dataset's page and a job's page show their
own (``changes_table``, ``job_changes_table``)."""

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.utils.safestring import SafeString

from catalog.admin.support import HiddenIdFilter, link, related_table
from catalog.admin.visibility import HidesRetiredMixin, hide_retired, visible_ids
from catalog.lineage import breaking
from catalog.models import SCHEMA_KINDS, ChangeKind, Dataset, DatasetChange, Job
from core.admin_base import BoundedAdmin
from core.admin_scans import NewestRowsFilterMixin


class ChangeDatasetFilter(HiddenIdFilter):
    """``?dataset=<id>``: one dataset's changes (through any of its aliases)."""

    parameter_name = "dataset"

    def for_id(self, queryset: QuerySet, value: int) -> QuerySet:
        return queryset.filter(
            Q(alias__dataset_id=value) | Q(dataset_id=value) | Q(source_id=value)
        )


class ChangeJobFilter(HiddenIdFilter):
    """``?job=<id>``: one job's changes (its edges', its runs')."""

    parameter_name = "job"

    def for_id(self, queryset: QuerySet, value: int) -> QuerySet:
        return queryset.filter(job_id=value)


def what(change: DatasetChange) -> str:
    """One line on what changed, by kind."""
    if change.kind in SCHEMA_KINDS:
        types = f"{change.old_type} → {change.new_type}".strip(" →")
        return f"{change.column}: {types}" if types else change.column
    if change.kind == ChangeKind.RUN_FAILED:
        return f"run {change.run_id} failed after run {change.previous_run_id} succeeded"
    if change.source is not None and change.job is not None:
        edge = f"from {change.source.name} via {change.job.name}"
        if change.kind == ChangeKind.EDGE_STOPPED:
            return f"{edge}: run {change.run_id} did not produce it"
        return f"{edge}: first in run {change.run_id}" if change.run_id else edge
    return change.detail


def _breaks_cell(found: breaking.Breaks | None) -> str:
    if found is None:
        return ""
    readers = ", ".join(
        f"{reader['name']}.{reader['field']} ({'current' if reader['current'] else 'stale'})"
        for reader in found.readers
    )
    return f"breaks {readers}" + (" and more" if found.left_out else "")


def _table(changes: list[DatasetChange], more: dict[str, int]) -> SafeString:
    found = breaking.breaks(changes)
    return related_table(
        changes,
        [
            ("change", link),
            ("when", lambda change: change.changed_at),
            ("what", what),
            ("breaking", lambda change: _breaks_cell(found.get(change.pk))),
        ],
        limit=20,
        more=(DatasetChange, more),
    )


# The datasets a change row names: its alias's (a schema change), its own and an edge's
# upstream; a reader sees no row naming a retired one (ADR 0078).
CHANGE_DATASETS = ("alias__dataset", "dataset", "source")


def _shown(changes: QuerySet) -> QuerySet:
    return hide_retired(changes, datasets=CHANGE_DATASETS, jobs=("job",))


def changes_table(dataset: Dataset) -> SafeString:
    """The dataset's latest changes with what each breaks, and a link to all of them."""
    changes = _shown(DatasetChange.objects.listed(dataset_id=dataset.pk))
    changes = changes.order_by("-changed_at", "-id")
    return _table(list(changes[:21]), {"dataset": dataset.pk})


def job_changes_table(job: Job) -> SafeString:
    """The job's latest changes (its edges', its runs'), and a link to all of them."""
    changes = _shown(DatasetChange.objects.listed(job_id=job.pk)).order_by("-changed_at", "-id")
    return _table(list(changes[:21]), {"job": job.pk})


@admin.register(DatasetChange)
class DatasetChangeAdmin(HidesRetiredMixin, NewestRowsFilterMixin, BoundedAdmin):
    retired_datasets = CHANGE_DATASETS
    retired_jobs = ("job",)
    list_display = ("changed_at", "dataset_link", "job_link", "kind", "what")
    list_filter = ("kind", ChangeDatasetFilter, ChangeJobFilter)
    # A kind is in no index: filtered by it, the newest 10,000 changes are searched (ADR 0208).
    scanned_columns = {"kind": frozenset()}
    list_select_related = ("alias__dataset", "dataset", "source", "job")
    ordering = ("-changed_at", "-id")  # catalog_change_time_idx
    sortable_by = ("changed_at",)
    fields = (
        "dataset_link",
        "alias",
        "source",
        "job_link",
        "kind",
        "column",
        "old_type",
        "new_type",
        "changed_at",
        "event",
        "run_id",
        "previous_run_id",
        "detail",
        "breaks_table",
    )
    readonly_fields = fields
    field_permissions = {"breaks_table": ("catalog.view_job", "catalog.view_columnlineageedge")}

    @admin.display(description="dataset")
    def dataset_link(self, change: DatasetChange) -> Any:
        return link(change.alias.dataset if change.alias else change.dataset)

    @admin.display(description="job")
    def job_link(self, change: DatasetChange) -> Any:
        return link(change.job)

    @admin.display(description="what")
    def what(self, change: DatasetChange) -> str:
        return what(change)

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
