"""Datasets, the names they are known by (aliases), their fields and metadata records."""

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from catalog.admin.browse import BrowsePathColumnMixin, BrowsePathFilter
from catalog.admin.changes import changes_table
from catalog.admin.fact_tables import facts_table, run_cell
from catalog.admin.impact import ImpactMixin, impact_link
from catalog.admin.jobs import job_edges_table, lineage_edges_table
from catalog.admin.labels import LABEL_ADD, LabelColumnsMixin, OwnerFilter, TagFilter
from catalog.admin.picture import LineagePictureMixin
from catalog.admin.retirement import RetiredFilter, RetireMixin
from catalog.admin.search import SEARCH_HELP, RankedSearchMixin
from catalog.admin.support import (
    RELATED_LIMIT,
    HiddenIdFilter,
    changelist_link,
    link,
    name_keys,
    related_table,
    selection,
)
from catalog.admin.visibility import HidesRetiredMixin, hide_retired, visible_ids
from catalog.facets import hierarchy
from catalog.lineage import column_lineage
from catalog.models import (
    AliasLink,
    Dataset,
    DatasetAlias,
    DatasetField,
    Job,
    JobDataset,
    JobLineageEdge,
    LineageEdge,
    MetadataRecord,
    Run,
    RunDataset,
)
from catalog.models.writes import row_is_write
from catalog.permissions import VIEW_EVENT, VIEW_JOB, VIEW_RUN
from catalog.reads import run_facts
from catalog.services import curation, display_names
from core.admin_base import BoundedAdmin, IdSearchMixin, pretty_json
from core.admin_scans import NewestRowsFilterMixin
from core.redaction import redact_text
from ingest.models import Event

if TYPE_CHECKING:
    pass


# --- datasets and aliases -------------------------------------------------------------------


def _transformation(edge: column_lineage.ColumnEdge) -> str:
    parts = [edge.transformation_type, edge.transformation_subtype]
    text = " ".join(part for part in parts if part)
    return f"{text} (masking)" if edge.masking else text


def _lineage_kind(edge: column_lineage.ColumnEdge) -> str:
    """Declared edges are the job's current JobEvent (no runs, never current); observed ones
    say whether the job's latest completed run still produced them (ADR 0060)."""
    if edge.static:
        return "declared (JobEvent)"
    return f"observed, {edge.run_count} runs" + ("" if edge.current else ", stale")


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
class DatasetAdmin(
    RetireMixin,
    ImpactMixin,
    LabelColumnsMixin,
    RankedSearchMixin,
    LineagePictureMixin,
    BrowsePathColumnMixin,
    NewestRowsFilterMixin,
    BoundedAdmin,
):
    search_kind = lineage_kind = "dataset"
    list_display = (
        "display_name",
        "namespace",
        "alias_count",
        "tag_list",
        "owner_list",
        "browse_path_column",
        "lifecycle_state",
        "last_seen",
    )
    list_filter = (
        RetiredFilter,
        SeveralAliasesFilter,
        "is_dropped",
        TagFilter,
        OwnerFilter,
        BrowsePathFilter,
    )
    search_fields = ("name",)
    search_help_text = SEARCH_HELP
    ordering = ("-last_seen", "-id")  # catalog_dataset_seen_idx
    # In no index: filtered by it, the newest 10,000 datasets by id are searched, unless a
    # search (at most 500 ranked ids) names the rows (ADR 0208).
    scanned_columns = {"is_dropped": frozenset()}
    search_is_bounded = True
    sortable_by = ("last_seen",)
    actions = ["merge_action", "unpin_action", *RetireMixin.retire_actions]
    fields = (
        "namespace",
        "name",
        "retirement_status",
        "retirement_button",
        "display_name_source",
        "description",
        "hierarchy_path",
        "labels_table",
        "labels_add_link",
        "lifecycle_state",
        "lifecycle_changed_at",
        "is_dropped",
        "first_seen",
        "last_seen",
        "impact",
        "changes",
        "aliases_table",
        "upstream_table",
        "downstream_table",
        "job_edges",
        "producing_runs",
        "consuming_jobs",
        "run_facts_table",
        "column_lineage_table",
        "fields_table",
        "events_link",
        "facets_pretty",
    )
    readonly_fields = fields
    field_permissions = {
        "retirement_button": ("catalog.change_dataset",),
        "impact": (VIEW_JOB,),
        "changes": (VIEW_JOB, "catalog.view_columnlineageedge"),
        "labels_add_link": (LABEL_ADD,),
        "upstream_table": (VIEW_JOB,),
        "downstream_table": (VIEW_JOB,),
        "job_edges": (VIEW_JOB,),
        "column_lineage_table": (VIEW_JOB, "catalog.view_columnlineageedge"),
        "producing_runs": (VIEW_JOB, VIEW_RUN),
        "consuming_jobs": (VIEW_JOB,),
        "events_link": (VIEW_EVENT,),
    }

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

    def has_merge_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("catalog.merge_dataset")

    @admin.display(description="dataset")
    def display_name(self, dataset: Dataset) -> str:
        return dataset.name

    @admin.display(description="why this name")
    def display_name_source(self, dataset: Dataset) -> str:
        reasons = {
            display_names.PINNED: "pinned by a steward (kept across rederives)",
            display_names.TABLE_SYMLINK: "a TABLE symlink: the logical name",
            display_names.LOGICAL: "a catalog or database name",
            display_names.OTHER: "the first of its names",
            display_names.STORAGE: "a storage location (no logical name known)",
            display_names.CATALOG_KEY: "the catalog facet's key (no name known)",
        }
        return format_html(
            "{}. To choose another, select an alias in {} and “Use as display name”.",
            reasons.get(dataset.display_rank, "by rule"),
            changelist_link(DatasetAlias, "its aliases", dataset=dataset.pk),
        )

    @admin.display(description="the latest runs' statistics and data quality (ADR 0061)")
    def run_facts_table(self, dataset: Dataset) -> str:
        aliases = list(DatasetAlias.objects.filter(dataset=dataset).values_list("id", flat=True))
        return facts_table(run_facts.of_dataset(aliases[:100]), ("run", run_cell))

    @admin.display(description="column lineage into it, observed and declared (ADR 0060, 0061)")
    def column_lineage_table(self, dataset: Dataset) -> str:
        # The API detail's model and bound (catalog.lineage.column_lineage.into, 200 of each kind).
        lineage = column_lineage.into([dataset.id], RELATED_LIMIT, static=True)
        edges = lineage.edges + lineage.dependencies
        # Of a retired source or through a retired job: gone for a reader (ADR 0078).
        datasets = visible_ids("dataset", (edge.source_id for edge in edges))
        jobs = visible_ids("job", (edge.job_id for edge in edges))
        return related_table(
            [edge for edge in edges if edge.source_id in datasets and edge.job_id in jobs],
            [
                ("from", lambda edge: f"{edge.source_name}.{edge.source_field}"),
                ("into", lambda edge: edge.target_field or "(the whole dataset)"),
                ("transformation", _transformation),
                ("job", lambda edge: changelist_link(Job, f"#{edge.job_id}", id=edge.job_id)),
                ("lineage", _lineage_kind),
                ("last seen", lambda edge: edge.last_seen),
            ],
            limit=2 * RELATED_LIMIT,
        )

    @admin.display(description="jobs that read or write it (graph edges)")
    def job_edges(self, dataset: Dataset) -> str:
        rows = JobLineageEdge.objects.filter(dataset=dataset).select_related("job", "last_run")
        rows = hide_retired(rows, jobs=("job",))
        return job_edges_table(rows, "job", lambda edge: link(edge.job), {"dataset": dataset.pk})

    @admin.action(
        description="Let the display name follow the rule again (remove the pin)",
        permissions=["merge"],
    )
    def unpin_action(self, request: HttpRequest, queryset: QuerySet) -> None:
        if (chosen := selection(request, queryset.order_by("id"), self, 20)) is None:
            return
        gone = [
            str(dataset)
            for dataset in chosen
            if display_names.unpin_display_name(request.user, dataset) is None
        ]
        self.message_user(request, "Display names follow the rule again.", messages.SUCCESS)
        if gone:  # merged or purged between the page's read and the action
            self.message_user(request, "No longer stored: " + ", ".join(gone), messages.WARNING)

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
        edges = hide_retired(edges, datasets=("source",), jobs=("job",))
        return lineage_edges_table(
            edges.order_by("-last_seen", "-id"),
            [("from", lambda edge: link(edge.source)), ("via job", lambda edge: link(edge.job))],
            {"target": dataset.pk},
        )

    @admin.display(description="downstream (edges out of this dataset)")
    def downstream_table(self, dataset: Dataset) -> str:
        edges = LineageEdge.objects.filter(source=dataset).select_related("target", "job")
        edges = hide_retired(edges, datasets=("target",), jobs=("job",))
        return lineage_edges_table(
            edges.order_by("id"),
            [("to", lambda edge: link(edge.target)), ("via job", lambda edge: link(edge.job))],
            {"source": dataset.pk},
        )

    @admin.display(description="producing runs")
    def producing_runs(self, dataset: Dataset) -> str:
        writes = RunDataset.objects.filter(alias__dataset=dataset, direction="output")
        writes = hide_retired(writes, jobs=("run__job",))
        return related_table(
            writes.select_related("run__job").order_by("-last_seen", "-id"),
            [
                ("run", lambda row: link(row.run, row.run.run_uuid)),
                ("job", lambda row: link(row.run.job)),
                ("state", lambda row: row.run.get_state_display()),
                # A run that did not complete wrote nothing, and a completed one only what
                # its COMPLETE named, when it named any (catalog.models.writes, ADR 0069).
                (
                    "write",
                    lambda row: "written" if row_is_write(row.run, row) else "attempted only",
                ),
                ("written", lambda row: row.last_seen),
            ],
            more=(Run, {"produced": dataset.pk}),
        )

    @admin.display(description="jobs that read or write it")
    def consuming_jobs(self, dataset: Dataset) -> str:
        rows = JobDataset.objects.filter(alias__dataset=dataset).select_related("job")
        rows = hide_retired(rows, jobs=("job",))
        return related_table(
            rows.order_by("-last_seen", "-id"),
            [("job", lambda row: link(row.job)), ("direction", lambda row: row.direction)],
        )

    @admin.display(description="impact (what a change here reaches, ADR 0081)")
    def impact(self, dataset: Dataset) -> str:
        return format_html(
            "{} · {}",
            impact_link(dataset.pk, text="Impact: everything downstream"),
            format_html(
                '<a href="{}?direction=upstream">upstream</a>',
                reverse("admin:catalog_dataset_impact", args=[dataset.pk]),
            ),
        )

    @admin.display(
        description="changes, newest first: schema (and what each breaks), upstream edges, "
        "retired or restored (ADR 0082, 0088)"
    )
    def changes(self, dataset: Dataset) -> str:
        return changes_table(dataset)

    @admin.display(description="schema fields")
    def fields_table(self, dataset: Dataset) -> str:
        return related_table(
            DatasetField.objects.filter(dataset=dataset).order_by("ordinal"),
            [
                ("name", lambda f: f.name),
                ("type", lambda f: f.type),
                ("", lambda f: f.description),
                ("impact", lambda f: impact_link(dataset.pk, f.name)),
            ],
            limit=50,
            more=(DatasetField, {"dataset": dataset.pk}),
        )

    @admin.display(description="events")
    def events_link(self, dataset: Dataset) -> str:
        return changelist_link(Event, "events that named this dataset", dataset=dataset.pk)

    @admin.display(description="browse path (HierarchyDatasetFacet, ADR 0093)")
    def hierarchy_path(self, dataset: Dataset) -> str:
        return redact_text(hierarchy.path(dataset.facets))

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
            rule = curation.merge_as_steward(request.user, survivor, other)
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


@admin.register(DatasetAlias)
class DatasetAliasAdmin(HidesRetiredMixin, IdSearchMixin, NewestRowsFilterMixin, BoundedAdmin):
    retired_datasets = ("dataset",)
    list_display = (
        "alias_name",
        "namespace",
        "dataset_link",
        "reason",
        "reason_detail",
        "first_seen",
    )
    list_filter = ("reason", AliasDatasetFilter)
    # A reason is in no index: filtered by it, the newest 10,000 aliases are searched, unless
    # the search (an exact name or #id, a few rows of their indexes) names them (ADR 0208).
    scanned_columns = {"reason": frozenset()}
    search_is_bounded = True
    list_select_related = ("dataset",)
    search_fields = ("name",)
    search_help_text = "Exact namespace/name, or #id."
    ordering = ("-id",)
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

    actions = ["split_action", "pin_action"]

    def search_exact(self, queryset: QuerySet, term: str) -> QuerySet:
        return queryset.filter(key_hash__in=name_keys(term))

    @admin.action(
        description="Use as display name of its dataset (pinned, kept across rederives)",
        permissions=["split"],
    )
    def pin_action(self, request: HttpRequest, queryset: QuerySet) -> None:
        aliases = list(queryset.order_by("id")[:2])
        if len(aliases) != 1:
            self.message_user(request, "Select exactly one alias.", messages.WARNING)
            return
        try:
            dataset = display_names.pin_display_name(request.user, aliases[0])
        except ValueError as error:
            self.message_user(request, f"{aliases[0]}: {error}", messages.WARNING)
            return
        self.message_user(
            request,
            format_html(
                "{} is now shown as {} {}.", link(dataset), dataset.namespace, dataset.name
            ),
            messages.SUCCESS,
        )

    def has_split_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("catalog.merge_dataset")

    @admin.action(
        description="Split the selected aliases off into datasets of their own",
        permissions=["split"],
    )
    def split_action(self, request: HttpRequest, queryset: QuerySet) -> None:
        for alias in selection(request, queryset.order_by("id"), self, 20) or []:
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
class AliasLinkAdmin(NewestRowsFilterMixin, BoundedAdmin):
    list_display = ("id", "alias_a", "alias_b", "reason", "reason_rule")
    list_filter = ("reason",)
    # In no index: filtered by it, the newest 10,000 links are searched (ADR 0208).
    scanned_columns = {"reason": frozenset()}
    list_select_related = ("alias_a", "alias_b", "reason_rule")
    raw_id_fields = ("alias_a", "alias_b", "reason_event", "reason_rule")
    ordering = ("-id",)


class FieldDatasetFilter(AliasDatasetFilter):
    pass


@admin.register(DatasetField)
class DatasetFieldAdmin(HidesRetiredMixin, IdSearchMixin, BoundedAdmin):
    retired_datasets = ("dataset",)
    list_display = ("name", "type", "dataset", "ordinal")
    list_filter = (FieldDatasetFilter,)
    list_select_related = ("dataset",)
    search_fields = ("name",)
    search_help_text = "Exact column name, or #id."
    raw_id_fields = ("dataset",)
    ordering = ("-id",)

    def search_exact(self, queryset: QuerySet, term: str) -> QuerySet:
        return queryset.filter(name=term)  # catalog_field_name_hash: equality only

    def get_ordering(self, request: HttpRequest) -> tuple[str, ...]:
        return ("ordinal",) if request.GET.get("dataset") else ("-id",)


@admin.register(MetadataRecord)
class MetadataRecordAdmin(IdSearchMixin, BoundedAdmin):
    list_display = ("subject", "action", "resource", "timestamp", "event_link")
    search_fields = ("subject",)
    search_help_text = "Exact subject, action or resource, or #id."
    ordering = ("-timestamp", "-id")  # catalog_meta_time_idx
    sortable_by = ("timestamp",)
    fields = ("subject", "action", "resource", "timestamp", "event_link", "values_pretty")
    readonly_fields = fields

    def search_exact(self, queryset: QuerySet, term: str) -> QuerySet:
        # Each is a hash-indexed equality (catalog_meta_*_hash).
        return (
            queryset.filter(subject=term)
            | queryset.filter(action=term)
            | queryset.filter(resource=term)
        )

    @admin.display(description="event")
    def event_link(self, record: MetadataRecord) -> str:
        url = reverse("admin:ingest_event_change", args=[record.event_id])
        return format_html('<a href="{}">#{}</a>', url, record.event_id)

    @admin.display(description="additional values")
    def values_pretty(self, record: MetadataRecord) -> str:
        return pretty_json(record.additional_values)
