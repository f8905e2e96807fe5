"""The steward admin: inspect and navigate the catalog, curate dataset identity.

Derived rows (jobs, runs, datasets, aliases, edges, facts) are read-only: stewards change
the catalog through steward input (alias rules, merges) and re-derivation, see
catalog/curation.py and docs/admin.md. Every page is bounded (ADR 0040): no full counts,
ordering on indexed columns only, related rows as small tables with a link to the rest.
"""

from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from catalog import curation, naming
from catalog.admin_support import (
    FastAdmin,
    HiddenIdFilter,
    changelist_link,
    link,
    name_keys,
    related_table,
)
from catalog.models import (
    AliasLink,
    AliasRule,
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    DatasetField,
    EventDataset,
    Job,
    JobDataset,
    LineageEdge,
    LineageEdgeRun,
    MetadataRecord,
    Run,
    RunDataset,
    RunState,
)
from catalog.rules import RULE_FIELDS
from ingest.admin_utils import pretty_json
from ingest.models import Event

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldGroups

admin.site.index_template = "admin/lineage_index.html"
admin.site.site_header = "Lineage Catalog"
admin.site.site_title = "Lineage Catalog admin"
admin.site.index_title = "Steward's overview"

NEVER_FACETS = admin.ShowFacets.NEVER


def _search_id(term: str) -> int | None:
    term = term.strip()
    return int(term[1:]) if term.startswith("#") and term[1:].isdigit() else None


class StartedWithinFilter(admin.SimpleListFilter):
    """Time windows on started_at (with the state filter: catalog_run_state_idx)."""

    title = "started"
    parameter_name = "started_within"
    WINDOWS = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("today", "Today"), ("1h", "Last hour"), ("24h", "Last 24 hours"), ("7d", "7 days")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "today":
            midnight = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
            return queryset.filter(started_at__gte=midnight)
        window = self.WINDOWS.get(self.value() or "")
        return queryset.filter(started_at__gte=timezone.now() - window) if window else queryset


class RunStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state__exact"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return list(RunState.choices)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(state=self.value()) if self.value() else queryset


# --- jobs and runs --------------------------------------------------------------------------


@admin.register(Job)
class JobAdmin(FastAdmin):
    list_display = ("name", "namespace", "job_type", "integration", "is_placeholder", "last_seen")
    list_filter = ("is_placeholder",)
    search_fields = ("name",)
    search_help_text = "Exact namespace/name, exact namespace, or #id."
    ordering = ("-last_seen", "-id")  # catalog_job_last_seen_idx
    sortable_by = ("last_seen",)
    show_facets = NEVER_FACETS
    fields = (
        "namespace",
        "name",
        "parent_link",
        "is_placeholder",
        "job_type",
        "processing_type",
        "integration",
        "description",
        "first_seen",
        "last_seen",
        "runs_table",
        "edges_table",
        "datasets_table",
        "children_table",
        "facets_pretty",
    )
    readonly_fields = fields

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        if not term.strip():
            return queryset, False
        if (pk := _search_id(term)) is not None:
            return queryset.filter(id=pk), False
        return queryset.filter(Q(key_hash__in=name_keys(term)) | Q(namespace=term.strip())), False

    @admin.display(description="parent job")
    def parent_link(self, job: Job) -> str:
        return link(job.parent)

    @admin.display(description="latest runs")
    def runs_table(self, job: Job) -> str:
        runs = Run.objects.filter(job=job).order_by("-started_at", "-id")
        return related_table(
            runs,
            [
                ("run", lambda run: link(run, run.run_uuid)),
                ("state", lambda run: run.get_state_display()),
                ("started", lambda run: run.started_at),
                ("ended", lambda run: run.ended_at),
            ],
            more=(Run, {"job": job.pk}),
        )

    @admin.display(description="lineage edges")
    def edges_table(self, job: Job) -> str:
        edges = LineageEdge.objects.filter(job=job).select_related("source", "target")
        return related_table(
            edges.order_by("-last_seen", "-id"),
            [
                ("from", lambda edge: link(edge.source)),
                ("to", lambda edge: link(edge.target)),
                ("runs", lambda edge: edge.run_count),
                ("last seen", lambda edge: link(edge, edge.last_seen)),
            ],
            more=(LineageEdge, {"job": job.pk}),
        )

    @admin.display(description="datasets read and written")
    def datasets_table(self, job: Job) -> str:
        rows = JobDataset.objects.filter(job=job).select_related("alias__dataset")
        return related_table(
            rows.order_by("direction", "-last_seen"),
            [
                ("direction", lambda row: row.direction),
                ("dataset", lambda row: link(row.alias.dataset)),
                ("as alias", lambda row: link(row.alias)),
                ("declared", lambda row: "yes" if row.declared else ""),
            ],
        )

    @admin.display(description="child jobs")
    def children_table(self, job: Job) -> str:
        return related_table(
            Job.objects.filter(parent=job).order_by("id"),
            [("job", link), ("last seen", lambda child: child.last_seen)],
            more=(Job, {"parent": job.pk}),
        )

    @admin.display(description="facets")
    def facets_pretty(self, job: Job) -> str:
        return pretty_json(job.facets)


class ProducedDatasetFilter(HiddenIdFilter):
    """``?produced=<dataset id>``: runs that wrote one of the dataset's aliases."""

    parameter_name = "produced"

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        dataset_id = self.id_value()
        if dataset_id is None:
            return queryset
        writes = RunDataset.objects.filter(
            run=OuterRef("pk"), direction="output", alias__dataset_id=dataset_id
        )
        return queryset.filter(Exists(writes))


@admin.register(Run)
class RunAdmin(FastAdmin):
    list_display = ("run_uuid", "job_link", "state", "started_at", "ended_at", "duration")
    list_filter = (RunStateFilter, StartedWithinFilter, ProducedDatasetFilter)
    list_select_related = ("job",)
    search_fields = ("run_uuid",)
    search_help_text = "Exact runId (UUID) or #id."
    show_facets = NEVER_FACETS
    fields = (
        "run_uuid",
        "run_id_text",
        "job_link",
        "parent_link",
        "state",
        "state_time",
        "started_at",
        "ended_at",
        "duration",
        "nominal_start_time",
        "nominal_end_time",
        "error_message",
        "is_streaming",
        "first_event_time",
        "last_event_time",
        "datasets_table",
        "edges_table",
        "children_table",
        "events_link",
        "facets_pretty",
    )
    readonly_fields = fields

    def get_ordering(self, request: HttpRequest) -> tuple[str, ...]:
        # With a state: catalog_run_state_idx (state, -started_at). Otherwise newest rows
        # by id: a started_at sort over every run would read the whole table.
        if request.GET.get("state__exact") or request.GET.get("job"):
            return ("-started_at", "-id")
        return ("-id",)

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        if not term.strip():
            return queryset, False
        if (pk := _search_id(term)) is not None:
            return queryset.filter(id=pk), False
        try:
            return queryset.filter(run_uuid=naming.run_uuid(term.strip(), "", "")), False
        except ValueError:
            return queryset.none(), False

    @admin.display(description="job")
    def job_link(self, run: Run) -> str:
        return link(run.job)

    @admin.display(description="parent run")
    def parent_link(self, run: Run) -> str:
        return link(run.parent_run)

    @admin.display(description="datasets read and written")
    def datasets_table(self, run: Run) -> str:
        rows = RunDataset.objects.filter(run=run).select_related("alias__dataset")
        return related_table(
            rows.order_by("direction", "id"),
            [
                ("direction", lambda row: row.direction),
                ("dataset", lambda row: link(row.alias.dataset)),
                ("as alias", lambda row: link(row.alias)),
                ("last seen", lambda row: row.last_seen),
            ],
        )

    @admin.display(description="lineage edges produced")
    def edges_table(self, run: Run) -> str:
        rows = LineageEdgeRun.objects.filter(run=run).select_related("edge__source", "edge__target")
        return related_table(
            rows.order_by("id"),
            [
                ("from", lambda row: link(row.edge.source)),
                ("to", lambda row: link(row.edge.target)),
                ("edge", lambda row: link(row.edge, f"edge #{row.edge_id}")),
            ],
        )

    @admin.display(description="child runs")
    def children_table(self, run: Run) -> str:
        return related_table(
            Run.objects.filter(parent_run=run).select_related("job").order_by("id"),
            [("run", lambda child: link(child, child.run_uuid)), ("job", lambda c: link(c.job))],
        )

    @admin.display(description="events")
    def events_link(self, run: Run) -> str:
        return changelist_link(Event, "events of this run", q=run.run_id_text)

    @admin.display(description="facets")
    def facets_pretty(self, run: Run) -> str:
        return pretty_json(run.facets)


# --- datasets and aliases -------------------------------------------------------------------


class SeveralAliasesFilter(admin.SimpleListFilter):
    """Datasets known under more than one name (EXISTS ... OFFSET 1 per dataset, indexed)."""

    title = "aliases"
    parameter_name = "aliases"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("several", "More than one alias")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() != "several":
            return queryset
        second = DatasetAlias.objects.filter(dataset=OuterRef("pk")).order_by()[1:2]
        return queryset.filter(Exists(second))


@admin.register(Dataset)
class DatasetAdmin(FastAdmin):
    list_display = ("display_name", "namespace", "alias_count", "lifecycle_state", "last_seen")
    list_filter = (SeveralAliasesFilter, "is_dropped")
    search_fields = ("name",)
    search_help_text = "Any exact namespace/name it was called, exact namespace, or #id."
    ordering = ("-last_seen", "-id")  # catalog_dataset_seen_idx
    sortable_by = ("last_seen",)
    show_facets = NEVER_FACETS
    actions = ["merge_action"]
    fields = (
        "namespace",
        "name",
        "description",
        "lifecycle_state",
        "lifecycle_changed_at",
        "is_dropped",
        "first_seen",
        "last_seen",
        "aliases_table",
        "upstream_table",
        "downstream_table",
        "producing_runs",
        "consuming_jobs",
        "fields_table",
        "events_link",
        "facets_pretty",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # A correlated count per listed row (50 index probes), not a GROUP BY over the table.
        count = (
            DatasetAlias.objects.filter(dataset=OuterRef("pk"))
            .order_by()
            .values("dataset")
            .annotate(total=Count("id"))
            .values("total")
        )
        return super().get_queryset(request).annotate(alias_total=Subquery(count))

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        if not term.strip():
            return queryset, False
        if (pk := _search_id(term)) is not None:
            return queryset.filter(id=pk), False
        by_alias = DatasetAlias.objects.filter(key_hash__in=name_keys(term)).values("dataset_id")
        return queryset.filter(Q(id__in=by_alias) | Q(namespace=term.strip())), False

    def has_merge_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("catalog.merge_dataset")

    @admin.display(description="dataset")
    def display_name(self, dataset: Dataset) -> str:
        return dataset.name

    @admin.display(description="aliases")
    def alias_count(self, dataset: Dataset) -> Any:
        total = getattr(dataset, "alias_total", None) or 0
        return changelist_link(DatasetAlias, str(total), dataset=dataset.pk)

    @admin.display(description="aliases (names it is known by)")
    def aliases_table(self, dataset: Dataset) -> str:
        return related_table(
            DatasetAlias.objects.filter(dataset=dataset)
            .select_related("reason_rule")
            .order_by("id"),
            [
                ("alias", link),
                ("why", lambda alias: alias.get_reason_display()),
                ("detail", lambda alias: alias.reason_detail),
                ("rule", lambda alias: link(alias.reason_rule) if alias.reason_rule_id else ""),
                ("first seen", lambda alias: alias.first_seen),
            ],
            more=(DatasetAlias, {"dataset": dataset.pk}),
        )

    @admin.display(description="upstream (edges into this dataset)")
    def upstream_table(self, dataset: Dataset) -> str:
        edges = LineageEdge.objects.filter(target=dataset).select_related("source", "job")
        return related_table(
            edges.order_by("-last_seen", "-id"),
            [
                ("from", lambda edge: link(edge.source)),
                ("via job", lambda edge: link(edge.job)),
                ("runs", lambda edge: edge.run_count),
                ("edge", lambda edge: link(edge, f"last seen {edge.last_seen:%Y-%m-%d %H:%M}")),
            ],
            more=(LineageEdge, {"target": dataset.pk}),
        )

    @admin.display(description="downstream (edges out of this dataset)")
    def downstream_table(self, dataset: Dataset) -> str:
        edges = LineageEdge.objects.filter(source=dataset).select_related("target", "job")
        return related_table(
            edges.order_by("id"),
            [
                ("to", lambda edge: link(edge.target)),
                ("via job", lambda edge: link(edge.job)),
                ("runs", lambda edge: edge.run_count),
                ("edge", lambda edge: link(edge, f"last seen {edge.last_seen:%Y-%m-%d %H:%M}")),
            ],
            more=(LineageEdge, {"source": dataset.pk}),
        )

    @admin.display(description="producing runs")
    def producing_runs(self, dataset: Dataset) -> str:
        writes = RunDataset.objects.filter(alias__dataset=dataset, direction="output")
        return related_table(
            writes.select_related("run__job").order_by("-last_seen", "-id"),
            [
                ("run", lambda row: link(row.run, row.run.run_uuid)),
                ("job", lambda row: link(row.run.job)),
                ("state", lambda row: row.run.get_state_display()),
                ("written", lambda row: row.last_seen),
            ],
            more=(Run, {"produced": dataset.pk}),
        )

    @admin.display(description="jobs that read or write it")
    def consuming_jobs(self, dataset: Dataset) -> str:
        rows = JobDataset.objects.filter(alias__dataset=dataset).select_related("job")
        return related_table(
            rows.order_by("-last_seen", "-id"),
            [("job", lambda row: link(row.job)), ("direction", lambda row: row.direction)],
        )

    @admin.display(description="schema fields")
    def fields_table(self, dataset: Dataset) -> str:
        return related_table(
            DatasetField.objects.filter(dataset=dataset).order_by("ordinal"),
            [("name", lambda f: f.name), ("type", lambda f: f.type), ("", lambda f: f.description)],
            limit=50,
            more=(DatasetField, {"dataset": dataset.pk}),
        )

    @admin.display(description="events")
    def events_link(self, dataset: Dataset) -> str:
        return changelist_link(Event, "events that named this dataset", dataset=dataset.pk)

    @admin.display(description="facets")
    def facets_pretty(self, dataset: Dataset) -> str:
        return pretty_json(dataset.facets)

    @admin.action(description="Merge the two selected datasets…", permissions=["merge"])
    def merge_action(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        datasets = list(queryset.order_by("namespace", "name", "id")[:3])
        if len(datasets) != 2:
            self.message_user(request, "Select exactly two datasets to merge.", messages.ERROR)
            return None
        if request.POST.get("confirm") == "yes":
            by_id = {str(dataset.pk): dataset for dataset in datasets}
            survivor = by_id.get(request.POST.get("survivor", ""), datasets[0])
            other = datasets[1] if survivor is datasets[0] else datasets[0]
            rule = curation.merge_datasets(request.user, survivor, other)
            self.message_user(
                request,
                format_html(
                    "Merged {} into {} as steward rule {}; its events are being re-derived.",
                    other,
                    survivor,
                    link(rule),
                ),
                messages.SUCCESS,
            )
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Merge two datasets",
            "datasets": datasets,
            "opts": self.model._meta,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "queryset": datasets,
        }
        return TemplateResponse(request, "admin/catalog/dataset/merge.html", context)


class AliasDatasetFilter(HiddenIdFilter):
    """``?dataset=<id>`` comes from links; a hidden filter keeps the sidebar free of it."""

    parameter_name = "dataset"

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        dataset_id = self.id_value()
        return queryset if dataset_id is None else queryset.filter(dataset_id=dataset_id)


@admin.register(DatasetAlias)
class DatasetAliasAdmin(FastAdmin):
    list_display = (
        "alias_name",
        "namespace",
        "dataset_link",
        "reason",
        "reason_detail",
        "first_seen",
    )
    list_filter = ("reason", AliasDatasetFilter)
    list_select_related = ("dataset",)
    search_fields = ("name",)
    search_help_text = "Exact namespace/name, or #id."
    ordering = ("-id",)
    show_facets = NEVER_FACETS
    fields = (
        "namespace",
        "name",
        "dataset_link",
        "reason",
        "reason_detail",
        "reason_event_link",
        "reason_rule_link",
        "first_seen",
        "last_seen",
        "links_table",
        "events_link",
    )
    readonly_fields = fields

    actions = ["split_action"]

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        if not term.strip():
            return queryset, False
        if (pk := _search_id(term)) is not None:
            return queryset.filter(id=pk), False
        return queryset.filter(key_hash__in=name_keys(term)), False

    def has_split_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("catalog.merge_dataset")

    @admin.action(
        description="Split the selected aliases off into datasets of their own",
        permissions=["split"],
    )
    def split_action(self, request: HttpRequest, queryset: QuerySet) -> None:
        for alias in queryset.order_by("id")[:20]:
            try:
                rule = curation.split_alias(request.user, alias)
            except ValueError as error:
                self.message_user(request, f"{alias}: {error}", messages.WARNING)
                continue
            self.message_user(
                request,
                format_html("Split {} off as steward rule {}.", alias, link(rule)),
                messages.SUCCESS,
            )

    @admin.display(description="alias")
    def alias_name(self, alias: DatasetAlias) -> str:
        return alias.name

    @admin.display(description="dataset")
    def dataset_link(self, alias: DatasetAlias) -> str:
        return link(alias.dataset)

    @admin.display(description="named first by event")
    def reason_event_link(self, alias: DatasetAlias) -> str:
        if alias.reason_event_id is None:
            return "—"
        url = reverse("admin:ingest_event_change", args=[alias.reason_event_id])
        return format_html('<a href="{}">event #{}</a>', url, alias.reason_event_id)

    @admin.display(description="rule")
    def reason_rule_link(self, alias: DatasetAlias) -> str:
        return link(alias.reason_rule)

    @admin.display(description="equivalences (why it is grouped with other names)")
    def links_table(self, alias: DatasetAlias) -> str:
        rows = AliasLink.objects.filter(Q(alias_a=alias) | Q(alias_b=alias)).select_related(
            "alias_a", "alias_b", "reason_rule"
        )
        return related_table(
            rows.order_by("id"),
            [
                (
                    "other name",
                    lambda row: link(row.alias_b if row.alias_a_id == alias.pk else row.alias_a),
                ),
                ("why", lambda row: row.get_reason_display()),
                ("rule", lambda row: link(row.reason_rule) if row.reason_rule_id else ""),
                ("event", lambda row: row.reason_event_id or ""),
            ],
        )

    @admin.display(description="events")
    def events_link(self, alias: DatasetAlias) -> str:
        return changelist_link(Event, "events that named this alias", alias=alias.pk)


@admin.register(AliasLink)
class AliasLinkAdmin(FastAdmin):
    list_display = ("id", "alias_a", "alias_b", "reason", "reason_rule")
    list_filter = ("reason",)
    list_select_related = ("alias_a", "alias_b", "reason_rule")
    raw_id_fields = ("alias_a", "alias_b", "reason_event", "reason_rule")
    ordering = ("-id",)
    show_facets = NEVER_FACETS


# --- lineage --------------------------------------------------------------------------------


class EdgeEndFilter(HiddenIdFilter):
    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.id_value()
        return queryset if value is None else queryset.filter(**{self.parameter_name: value})


class EdgeSourceFilter(EdgeEndFilter):
    parameter_name = "source"


class EdgeTargetFilter(EdgeEndFilter):
    parameter_name = "target"


class EdgeJobFilter(EdgeEndFilter):
    parameter_name = "job"


@admin.register(LineageEdge)
class LineageEdgeAdmin(FastAdmin):
    list_display = ("id", "source_link", "target_link", "job_link", "run_count", "last_seen")
    list_filter = (EdgeSourceFilter, EdgeTargetFilter, EdgeJobFilter)
    list_select_related = ("source", "target", "job")
    ordering = ("-id",)
    show_facets = NEVER_FACETS
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
                ("seen", lambda row: row.last_seen),
            ],
        )


@admin.register(ColumnLineageEdge)
class ColumnLineageEdgeAdmin(FastAdmin):
    list_display = ("id", "source", "source_field", "target", "target_field", "transformation_type")
    list_filter = (EdgeSourceFilter,)
    list_select_related = ("source", "target")
    raw_id_fields = ("source", "target", "job", "last_run")
    ordering = ("-id",)
    show_facets = NEVER_FACETS


@admin.register(LineageEdgeRun)
class LineageEdgeRunAdmin(FastAdmin):
    list_display = ("id", "edge", "run", "first_seen", "last_seen")
    raw_id_fields = ("edge", "run")
    ordering = ("-id",)
    show_facets = NEVER_FACETS


class FieldDatasetFilter(AliasDatasetFilter):
    pass


@admin.register(DatasetField)
class DatasetFieldAdmin(FastAdmin):
    list_display = ("name", "type", "dataset", "ordinal")
    list_filter = (FieldDatasetFilter,)
    list_select_related = ("dataset",)
    search_fields = ("name",)
    search_help_text = "Exact column name."
    raw_id_fields = ("dataset",)
    ordering = ("-id",)
    show_facets = NEVER_FACETS

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        # catalog_field_name_hash: equality only.
        return (queryset.filter(name=term.strip()), False) if term.strip() else (queryset, False)

    def get_ordering(self, request: HttpRequest) -> tuple[str, ...]:
        return ("ordinal",) if request.GET.get("dataset") else ("-id",)


@admin.register(RunDataset, JobDataset, EventDataset)
class FactAdmin(FastAdmin):
    """Derived facts: the raw material of edges, shown for debugging with raw ids."""

    list_display = ("id", "__str__")
    ordering = ("-id",)
    show_facets = NEVER_FACETS

    def get_raw_id_fields(self, request: HttpRequest) -> tuple[str, ...]:
        return tuple(field.name for field in self.model._meta.fields if field.is_relation)


@admin.register(MetadataRecord)
class MetadataRecordAdmin(FastAdmin):
    list_display = ("subject", "action", "resource", "timestamp", "event_link")
    search_fields = ("subject",)
    search_help_text = "Exact subject, action or resource."
    ordering = ("-timestamp", "-id")  # catalog_meta_time_idx
    sortable_by = ("timestamp",)
    show_facets = NEVER_FACETS
    fields = ("subject", "action", "resource", "timestamp", "event_link", "values_pretty")
    readonly_fields = fields

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        term = term.strip()
        if not term:
            return queryset, False
        # Each is a hash-indexed equality (catalog_meta_*_hash).
        return (
            queryset.filter(subject=term)
            | queryset.filter(action=term)
            | queryset.filter(resource=term)
        ), False

    @admin.display(description="event")
    def event_link(self, record: MetadataRecord) -> str:
        url = reverse("admin:ingest_event_change", args=[record.event_id])
        return format_html('<a href="{}">#{}</a>', url, record.event_id)

    @admin.display(description="additional values")
    def values_pretty(self, record: MetadataRecord) -> str:
        return pretty_json(record.additional_values)


# --- alias rules: preview before saving, apply after ----------------------------------------


class AliasRuleForm(forms.ModelForm):
    class Meta:
        model = AliasRule
        fields = ("slug", *RULE_FIELDS)

    def clean_name_pattern(self) -> str:
        import re

        pattern = self.cleaned_data["name_pattern"]
        try:
            re.compile(pattern)
        except re.error as error:
            raise forms.ValidationError(f"Not a valid regular expression: {error}") from error
        return pattern


@admin.register(AliasRule)
class AliasRuleAdmin(admin.ModelAdmin):
    form = AliasRuleForm
    list_display = (
        "slug",
        "action",
        "namespace",
        "name_pattern",
        "target_namespace",
        "target_name",
        "priority",
        "enabled",
        "created_by",
        "updated_at",
    )
    list_filter = ("action", "enabled")
    list_select_related = ("created_by",)
    search_fields = ("slug", "namespace", "target_namespace", "description")
    readonly_fields = ("created_by", "created_at", "updated_at")
    actions = ["disable_rules", "enable_rules"]
    change_form_template = "admin/catalog/aliasrule/change_form.html"

    def get_fields(self, request: HttpRequest, obj: Any = None) -> "_FieldGroups":
        return [*AliasRuleForm.Meta.fields, *self.readonly_fields]

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        if request.method == "POST" and "_preview" in request.POST:
            return self._preview_view(request, object_id, form_url, extra_context)
        return super().changeform_view(request, object_id, form_url, extra_context)

    def _preview_view(
        self,
        request: HttpRequest,
        object_id: str | None,
        form_url: str,
        extra_context: dict[str, Any] | None,
    ) -> HttpResponse:
        """Validate the posted rule and show what it would regroup, without saving."""
        add = object_id is None
        obj = None if object_id is None else self.get_object(request, unquote(object_id))
        if add and not self.has_add_permission(request):
            raise PermissionDenied
        if not add and (obj is None or not self.has_change_permission(request, obj)):
            raise PermissionDenied
        form_class = self.get_form(request, obj, change=not add)
        form = form_class(request.POST, request.FILES, instance=obj)
        preview = None
        if form.is_valid():
            candidate = form.save(commit=False)
            preview = curation.preview_rule(candidate)
        fieldsets = self.get_fieldsets(request, obj)
        admin_form = helpers.AdminForm(
            form,
            # As Django's own changeform_view does; the stubs type the two sides differently.
            cast(list[tuple[Any, dict[str, list[str]]]], list(fieldsets)),
            self.get_prepopulated_fields(request, obj),
            self.get_readonly_fields(request, obj),
            model_admin=self,
        )
        context = {
            **self.admin_site.each_context(request),
            "title": ("Add" if add else "Change") + " alias rule: preview",
            "subtitle": None,
            "adminform": admin_form,
            "object_id": object_id,
            "original": obj,
            "is_popup": False,
            "to_field": None,
            "media": self.media + admin_form.media,
            "inline_admin_formsets": [],
            "errors": helpers.AdminErrorList(form, []),
            "preview": preview,
            "preview_limit": curation.PREVIEW_LIMIT,
            "preserved_filters": self.get_preserved_filters(request),
            **(extra_context or {}),
        }
        return self.render_change_form(
            request, context, add=add, change=not add, obj=obj, form_url=form_url
        )

    def save_model(self, request: HttpRequest, obj: AliasRule, form: Any, change: bool) -> None:
        if obj.created_by_id is None:
            if not request.user.is_authenticated:  # the admin only serves staff users
                raise PermissionDenied
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
        events, job_id = curation.apply_rule(obj, request.user)
        if job_id is not None:
            url = reverse("admin:catalog_rederive_progress", args=[job_id])
            self.message_user(
                request,
                format_html(
                    'Re-deriving {} event(s) in the background: <a href="{}">progress</a>.',
                    events,
                    url,
                ),
            )
        elif events:
            self.message_user(request, f"Re-derived {events} event(s) named by the rule.")
        if change and not obj.enabled:
            self.message_user(
                request,
                "A disabled rule stops applying to new events; run a full rederive to undo "
                "the groupings it already made.",
                messages.WARNING,
            )

    @admin.action(description="Disable selected rules", permissions=["change"])
    def disable_rules(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_enabled(request, queryset, False)

    @admin.action(description="Enable selected rules", permissions=["change"])
    def enable_rules(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_enabled(request, queryset, True)

    def _set_enabled(self, request: HttpRequest, queryset: QuerySet, enabled: bool) -> None:
        rules = list(queryset.exclude(enabled=enabled))
        for rule in rules:
            rule.enabled = enabled
            rule.save(update_fields=["enabled", "updated_at"])
            self.log_change(request, rule, [{"changed": {"fields": ["Enabled"]}}])
            if enabled:
                curation.apply_rule(rule, request.user)
        verb = "Enabled" if enabled else "Disabled"
        self.message_user(request, f"{verb} {len(rules)} rule(s).")


# The event admin and the admin log live in their own module (imported for registration).
from catalog import admin_events  # noqa: E402, F401
