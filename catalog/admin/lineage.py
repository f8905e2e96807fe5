"""Lineage edges (dataset, column) and the derived facts they are made of."""

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from catalog.admin.support import (
    HiddenIdFilter,
    link,
    related_table,
)
from catalog.admin.visibility import HidesRetiredMixin
from catalog.models import (
    ColumnLineageEdge,
    EventDataset,
    JobDataset,
    JobLineageEdge,
    JobLineageEdgeRun,
    LineageEdge,
    LineageEdgeRun,
    RunDataset,
)
from core.admin_base import BoundedAdmin
from core.admin_scans import NewestRowsFilterMixin

if TYPE_CHECKING:
    pass


# --- lineage --------------------------------------------------------------------------------


class EdgeSourceFilter(HiddenIdFilter):
    parameter_name = "source"


class EdgeTargetFilter(HiddenIdFilter):
    parameter_name = "target"


class EdgeJobFilter(HiddenIdFilter):
    parameter_name = "job"


@admin.register(LineageEdge)
class LineageEdgeAdmin(HidesRetiredMixin, BoundedAdmin):
    retired_datasets, retired_jobs = ("source", "target"), ("job",)
    list_display = ("id", "source_link", "target_link", "job_link", "run_count", "last_seen")
    list_filter = (EdgeSourceFilter, EdgeTargetFilter, EdgeJobFilter)
    list_select_related = ("source", "target", "job")
    ordering = ("-id",)
    fields = (
        "source_link",
        "target_link",
        "job_link",
        "first_seen",
        "last_seen",
        "last_run_link",
        "run_count",
        "lineage_type",
        "pipeline",
        "runs_table",
    )
    readonly_fields = fields

    @admin.display(description="from")
    def source_link(self, edge: LineageEdge) -> str:
        return link(edge.source)

    @admin.display(description="to")
    def target_link(self, edge: LineageEdge) -> str:
        return link(edge.target)

    @admin.display(description="job")
    def job_link(self, edge: LineageEdge) -> str:
        return link(edge.job)

    @admin.display(description="last run")
    def last_run_link(self, edge: LineageEdge) -> str:
        return link(edge.last_run)

    @admin.display(description="runs that produced it")
    def runs_table(self, edge: LineageEdge) -> str:
        rows = LineageEdgeRun.objects.filter(edge=edge).select_related("run")
        return related_table(
            rows.order_by("-last_seen", "-id"),
            [
                ("run", lambda row: link(row.run, row.run.run_uuid)),
                ("state", lambda row: row.run.get_state_display()),
                # The edge-run row's own flag (catalog.models.writes, ADR 0069): a run that did not
                # complete, or whose COMPLETE named other outputs, only attempted the output.
                ("completed", lambda row: "yes" if row.completed else "attempted only"),
                ("seen", lambda row: row.last_seen),
            ],
        )


class JobEdgeDatasetFilter(HiddenIdFilter):
    parameter_name = "dataset"


class ViaFilter(admin.SimpleListFilter):
    """How the last run named the dataset, the two values derivation writes: Django's field
    filter read every job edge a visit for them (SELECT DISTINCT via). Under its parameter,
    so its addresses keep filtering; the few named only in column lineage are a range of
    catalog_job_edge_via_idx (ADR 0195)."""

    title = "named"
    parameter_name = "via__exact"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("", "in inputs or outputs"), ("column_lineage", "only in column lineage")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        return queryset if value is None else queryset.filter(via=value)


@admin.register(JobLineageEdge)
class JobLineageEdgeAdmin(HidesRetiredMixin, BoundedAdmin):
    """dataset → job (input) and job → dataset (output): the graph's edges (ADR 0027)."""

    retired_datasets, retired_jobs = ("dataset",), ("job",)

    list_display = (
        "id",
        "dataset_link",
        "direction",
        "job_link",
        "via",
        "run_count",
        "last_seen",
    )
    list_filter = ("direction", ViaFilter, JobEdgeDatasetFilter, EdgeJobFilter)
    list_select_related = ("dataset", "job")
    ordering = ("-id",)
    fields = (
        "dataset_link",
        "direction",
        "job_link",
        "via",
        "first_seen",
        "last_seen",
        "last_run_link",
        "run_count",
        "runs_table",
    )
    readonly_fields = fields

    @admin.display(description="dataset")
    def dataset_link(self, edge: JobLineageEdge) -> str:
        return link(edge.dataset)

    @admin.display(description="job")
    def job_link(self, edge: JobLineageEdge) -> str:
        return link(edge.job)

    @admin.display(description="last run")
    def last_run_link(self, edge: JobLineageEdge) -> str:
        return link(edge.last_run, edge.last_run.run_uuid if edge.last_run else None)

    @admin.display(description="runs that read or wrote it")
    def runs_table(self, edge: JobLineageEdge) -> str:
        rows = JobLineageEdgeRun.objects.filter(edge=edge).select_related("run")
        return related_table(
            rows.order_by("-last_seen", "-id"),
            [
                ("run", lambda row: link(row.run, row.run.run_uuid)),
                ("state", lambda row: row.run.get_state_display()),
                # The edge-run row's own flag (catalog.models.writes, ADR 0069): a run that did not
                # complete, or whose COMPLETE named other outputs, only attempted the output.
                ("completed", lambda row: "yes" if row.completed else "attempted only"),
                ("seen", lambda row: row.last_seen),
            ],
        )


@admin.register(ColumnLineageEdge)
class ColumnLineageEdgeAdmin(HidesRetiredMixin, NewestRowsFilterMixin, BoundedAdmin):
    retired_datasets, retired_jobs = ("source", "target"), ("job",)
    list_display = (
        "id",
        "source",
        "source_field",
        "target",
        "target_field",
        "dataset_level",
        "transformation_type",
        "transformation_subtype",
        "field_transformation_type",
    )
    # dataset_level: the dataset-level dependencies (ADR 0060).
    list_filter = ("dataset_level", EdgeSourceFilter)
    # In no index: filtered by it, the newest 10,000 edges are searched (ADR 0208).
    scanned_columns = {"dataset_level": frozenset()}
    list_select_related = ("source", "target")
    raw_id_fields = ("source", "target", "job", "last_run")
    ordering = ("-id",)


@admin.register(LineageEdgeRun)
class LineageEdgeRunAdmin(BoundedAdmin):
    list_display = ("id", "edge", "run", "first_seen", "last_seen")
    raw_id_fields = ("edge", "run")
    ordering = ("-id",)


@admin.register(RunDataset, JobDataset, EventDataset)
class FactAdmin(BoundedAdmin):
    """Derived facts: the raw material of edges, shown for debugging with raw ids."""

    list_display = ("id", "__str__")
    ordering = ("-id",)

    def get_raw_id_fields(self, request: HttpRequest) -> tuple[str, ...]:
        return tuple(field.name for field in self.model._meta.fields if field.is_relation)
