"""Jobs and runs in the steward admin."""

from datetime import UTC
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from catalog.admin.changes import job_changes_table
from catalog.admin.fact_tables import dataset_cell, facts_table, parameters_table, tests_table
from catalog.admin.labels import LABEL_ADD, LabelColumnsMixin, OwnerFilter, TagFilter
from catalog.admin.picture import LineagePictureMixin
from catalog.admin.retirement import RetiredFilter, RetireMixin
from catalog.admin.search import SEARCH_HELP, RankedSearchMixin
from catalog.admin.support import (
    RELATED_LIMIT,
    HiddenIdFilter,
    changelist_link,
    link,
    related_table,
)
from catalog.admin.visibility import HidesRetiredMixin, hide_retired, visible_ids
from catalog.facets import execution_parameters, run_tests
from catalog.models import (
    RUNS_BY_START,
    Job,
    JobDataset,
    JobLineageEdge,
    LineageEdge,
    LineageEdgeRun,
    Run,
    RunDataset,
    RunState,
)
from catalog.permissions import VIEW_DATASET, VIEW_EVENT, VIEW_JOB, VIEW_RUN
from catalog.reads import run_facts
from core.admin_base import (
    BoundedAdmin,
    ChoicesFilter,
    WindowFilter,
    pretty_json,
)
from core.admin_scans import NewestRowsFilterMixin
from core.redaction import redact_text
from ingest.models import Event

if TYPE_CHECKING:
    pass


class StartedWithinFilter(WindowFilter):
    title = "started"
    parameter_name = "started_within"
    column = "started_at"  # with the state filter: catalog_run_state_idx


class RunStateFilter(ChoicesFilter):
    title = "state"
    parameter_name = "state__exact"
    column = "state"
    options = list(RunState.choices)


class SharedRunIdFilter(admin.SimpleListFilter):
    """Runs whose runId another job also sent (ADR 0028): catalog_run_shared_idx."""

    title = "runId shared with another job"
    parameter_name = "shares_run_id"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "shared with another job")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(shares_run_id=True) if self.value() == "yes" else queryset


def job_edges_table(rows: QuerySet, first: str, render: Any, more: dict[str, Any]) -> str:
    """The graph's dataset ↔ job edges (ADR 0027), with their history figures."""
    return related_table(
        rows.order_by("direction", "-last_seen", "-id"),
        [
            ("direction", lambda edge: edge.direction),
            (first, render),
            ("runs", lambda edge: edge.run_count),
            # Of those, the runs that completed: 0 means attempted only (ADR 0069).
            ("completed", lambda edge: edge.completed_run_count),
            (
                "last run",
                lambda edge: (
                    link(edge.last_run, edge.last_run.run_uuid) if edge.last_run_id else ""
                ),
            ),
            ("first seen", lambda edge: edge.first_seen),
            ("last seen", lambda edge: edge.last_seen),
        ],
        more=(JobLineageEdge, more),
    )


def lineage_edges_table(edges: QuerySet, ends: list[tuple[str, Any]], more: dict[str, Any]) -> str:
    """Dataset → dataset edges: the ``ends`` columns (what stands at either end), how many
    runs produced each edge, and a link to it saying when it was last seen."""
    return related_table(
        edges,
        [
            *ends,
            ("runs", lambda edge: edge.run_count),
            ("completed", lambda edge: edge.completed_run_count),
            ("edge", lambda edge: link(edge, f"last seen {edge.last_seen:%Y-%m-%d %H:%M}")),
        ],
        more=(LineageEdge, more),
    )


def dataset_uses_table(rows: QuerySet, last: tuple[str, Any]) -> str:
    """``JobDataset`` or ``RunDataset`` rows: direction, the dataset, the alias it was named
    by, and the ``last`` column."""
    return related_table(
        hide_retired(rows, datasets=("alias__dataset",)).select_related("alias__dataset"),
        [
            ("direction", lambda row: row.direction),
            ("dataset", lambda row: link(row.alias.dataset)),
            ("as alias", lambda row: link(row.alias)),
            last,
        ],
    )


@admin.register(Job)
class JobAdmin(
    RetireMixin,
    LabelColumnsMixin,
    RankedSearchMixin,
    LineagePictureMixin,
    NewestRowsFilterMixin,
    BoundedAdmin,
):
    search_kind = lineage_kind = "job"
    list_display = (
        "name",
        "namespace",
        "job_type",
        "integration",
        "tag_list",
        "owner_list",
        "is_placeholder",
        "last_seen",
    )
    list_filter = (RetiredFilter, "is_placeholder", TagFilter, OwnerFilter)
    actions = RetireMixin.retire_actions
    search_fields = ("name",)
    search_help_text = SEARCH_HELP
    ordering = ("-last_seen", "-id")  # catalog_job_last_seen_idx
    # In no index: filtered by it, the newest 10,000 jobs by id are searched, unless a
    # search (at most 500 ranked ids) names the rows (ADR 0208).
    scanned_columns = {"is_placeholder": frozenset()}
    search_is_bounded = True
    sortable_by = ("last_seen",)
    fields = (
        "namespace",
        "name",
        "retirement_status",
        "retirement_button",
        "parent_link",
        "is_placeholder",
        "job_type",
        "processing_type",
        "integration",
        "description",
        "labels_table",
        "labels_add_link",
        "first_seen",
        "last_seen",
        "runs_table",
        "latest_tests_table",
        "changes",
        "job_edges",
        "edges_table",
        "datasets_table",
        "children_table",
        "facets_pretty",
    )
    readonly_fields = fields
    field_permissions = {
        "retirement_button": ("catalog.change_job",),
        "labels_add_link": (LABEL_ADD,),
        "runs_table": (VIEW_RUN,),
        "latest_tests_table": (VIEW_RUN,),
        "changes": ("catalog.view_datasetchange", VIEW_DATASET),
        "job_edges": (VIEW_DATASET,),
        "edges_table": (VIEW_DATASET,),
        "datasets_table": (VIEW_DATASET,),
    }

    @admin.display(description="datasets it read and wrote (graph edges)")
    def job_edges(self, job: Job) -> str:
        rows = JobLineageEdge.objects.filter(job=job).select_related("dataset", "last_run")
        rows = hide_retired(rows, datasets=("dataset",))
        return job_edges_table(rows, "dataset", lambda edge: link(edge.dataset), {"job": job.pk})

    @admin.display(description="parent job")
    def parent_link(self, job: Job) -> str:
        shown = job.parent_id is not None and job.parent_id in visible_ids("job", [job.parent_id])
        return link(job.parent if shown else None)

    @admin.display(description="latest test results (of the newest run that reported tests)")
    def latest_tests_table(self, job: Job) -> str:
        latest = run_facts.latest_tests(job.pk)
        if latest is None:
            return tests_table([])
        return format_html("<p>run {}</p>{}", latest["run_id"], tests_table(latest["tests"]))

    @admin.display(
        description="changes, newest first: runs failed after success, edges new or no longer "
        "current (ADR 0088)"
    )
    def changes(self, job: Job) -> str:
        return job_changes_table(job)

    @admin.display(description="latest runs")
    def runs_table(self, job: Job) -> str:
        runs = Run.objects.filter(job=job).order_by(*RUNS_BY_START)  # placeholders last
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
        edges = hide_retired(edges, datasets=("source", "target"))
        return lineage_edges_table(
            edges.order_by("-last_seen", "-id"),
            [("from", lambda edge: link(edge.source)), ("to", lambda edge: link(edge.target))],
            {"job": job.pk},
        )

    @admin.display(description="datasets read and written")
    def datasets_table(self, job: Job) -> str:
        return dataset_uses_table(
            JobDataset.objects.filter(job=job).order_by("direction", "-last_seen"),
            ("declared", lambda row: "yes" if row.declared else ""),
        )

    @admin.display(description="child jobs")
    def children_table(self, job: Job) -> str:
        return related_table(
            hide_retired(Job.objects.filter(parent=job), jobs=("pk",)).order_by("id"),
            [("job", link), ("last seen", lambda child: child.last_seen)],
            more=(Job, {"parent": job.pk}),
        )

    @admin.display(description="facets")
    def facets_pretty(self, job: Job) -> str:
        return pretty_json(job.facets)


class ProducedDatasetFilter(HiddenIdFilter):
    """``?produced=<dataset id>``: runs that wrote one of the dataset's aliases."""

    parameter_name = "produced"

    def for_id(self, queryset: QuerySet, dataset_id: int) -> QuerySet:
        writes = RunDataset.objects.filter(
            run=OuterRef("pk"), direction="output", alias__dataset_id=dataset_id
        )
        return queryset.filter(Exists(writes))


@admin.register(Run)
class RunAdmin(HidesRetiredMixin, RankedSearchMixin, BoundedAdmin):
    retired_jobs = ("job",)
    search_kind = "run"
    list_display = (
        "short_run_id",
        "job_link",
        "state",
        "started",
        "took",
    )  # whether another job shares the runId: the filter beside it, and the run's page
    list_display_links = ("short_run_id",)
    list_filter = (RunStateFilter, StartedWithinFilter, ProducedDatasetFilter, SharedRunIdFilter)
    list_select_related = ("job",)
    search_fields = ("run_uuid",)
    search_help_text = "Any part of its job's name, its runId or the start of it, or #id."
    fields = (
        "run_uuid",
        "run_id_as_sent",
        "job_link",
        "shares_run_id",
        "same_run_id_table",
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
        "run_facts_table",
        "tests_table",
        "parameters_table",
        "edges_table",
        "children_table",
        "events_link",
        "facets_pretty",
    )
    readonly_fields = fields
    field_permissions = {
        "job_link": (VIEW_JOB,),
        "datasets_table": (VIEW_DATASET,),
        "edges_table": (VIEW_DATASET,),
        "events_link": (VIEW_EVENT,),
    }

    def get_ordering(self, request: HttpRequest) -> tuple[Any, ...]:
        if request.GET.get("q", "").strip():
            return tuple(super().get_ordering(request))  # best match first (admin/search.py)
        # With a state: catalog_run_state_idx (state, -started_at). Otherwise newest rows
        # by id: a started_at sort over every run would read the whole table. Placeholders
        # (no start) come last, as in every admin list (core.admin_base.TimeOrderChangeList).
        if request.GET.get("state__exact") or request.GET.get("job"):
            return ("-started_at", "-id")
        return ("-id",)

    @admin.display(description="other jobs' runs with this runId (ADR 0028)")
    def same_run_id_table(self, run: Run) -> str:
        # The runId as sent, found as the event page and /runs/{runId} find it
        # (``Run.objects.named``, ADR 0202): a text runId's runs have a run_uuid per job, so
        # the run's own listed none. In job order, read on the key's index (a UUID) or among
        # the text's first runs: a name sort read every sharer of a runId thousands sent.
        return related_table(
            hide_retired(
                Run.objects.named(run.run_id_text, jobs_limit=RELATED_LIMIT + 2), jobs=("job",)
            )
            .exclude(id=run.id)
            .select_related("job")
            .order_by("job_id", "id"),
            [
                ("run", lambda other: link(other, other.run_uuid)),
                ("job", lambda other: link(other.job)),
                ("placeholder", lambda other: "yes" if other.is_placeholder else ""),
            ],
            empty="none: this job alone sent this runId",
        )

    @admin.display(description="run")
    def short_run_id(self, run: Run) -> str:
        """The runId's first 8 and last 4 characters, the whole in its tooltip: a full UUID
        wrapped over five lines at a laptop's width. Both ends, because UUIDv7 runIds (most
        producers') started in the same minute share their first 8."""
        full = str(run.run_uuid)
        return format_html(
            '<span class="lc-run-id" title="{}">{}…{}</span>', full, full[:8], full[-4:]
        )

    @admin.display(description="started (UTC)")
    def started(self, run: Run) -> str:
        """To the minute, the exact time in its tooltip: the admin's long date format
        ("Dec. 2, 2026, 2:08 p.m.") cut the column at a laptop's width. The end is the
        duration's, and on the run's page."""
        if run.started_at is None:
            return "—"
        moment = run.started_at.astimezone(UTC)
        return format_html(
            '<span title="{}">{}</span>', moment.isoformat(), f"{moment:%Y-%m-%d %H:%M}"
        )

    @admin.display(description="took")
    def took(self, run: Run) -> str:
        """The duration in the largest two units ("0.44 s", "3 min 12 s", "2 h 5 min"), the
        exact one in its tooltip."""
        if run.duration is None:
            return "—"
        seconds = run.duration.total_seconds()
        if seconds < 60:
            short = f"{seconds:.2f} s"
        elif seconds < 3600:
            short = f"{int(seconds // 60)} min {int(seconds % 60)} s"
        else:
            short = f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
        return format_html('<span title="{}">{}</span>', str(run.duration), short)

    @admin.display(description="job")
    def job_link(self, run: Run) -> str:
        return link(run.job)

    @admin.display(description="parent run")
    def parent_link(self, run: Run) -> str:
        return link(run.parent_run)

    @admin.display(description="datasets read and written")
    def datasets_table(self, run: Run) -> str:
        return dataset_uses_table(
            RunDataset.objects.filter(run=run).order_by("direction", "id"),
            ("last seen", lambda row: row.last_seen),
        )

    @admin.display(description="statistics and data quality (ADR 0061)")
    def run_facts_table(self, run: Run) -> str:
        return facts_table(run_facts.of_run(run.pk), ("dataset", dataset_cell))

    @admin.display(description="tests (ADR 0092)")
    def tests_table(self, run: Run) -> str:
        return tests_table(run_tests.results(run.facets))

    @admin.display(description="execution parameters, secrets redacted (ADR 0092)")
    def parameters_table(self, run: Run) -> str:
        return parameters_table(execution_parameters.parameters(run.facets))

    @admin.display(description="lineage edges produced")
    def edges_table(self, run: Run) -> str:
        rows = LineageEdgeRun.objects.filter(run=run).select_related("edge__source", "edge__target")
        rows = hide_retired(rows, datasets=("edge__source", "edge__target"))
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
            hide_retired(Run.objects.filter(parent_run=run), jobs=("job",))
            .select_related("job")
            .order_by("id"),
            [("run", lambda child: link(child, child.run_uuid)), ("job", lambda c: link(c.job))],
        )

    @admin.display(description="run id text")
    def run_id_as_sent(self, run: Run) -> str:
        return redact_text(run.run_id_text)  # producer text (kept as sent: the log's key)

    @admin.display(description="events")
    def events_link(self, run: Run) -> str:
        if redact_text(run.run_id_text) != run.run_id_text:  # never a secret in an href
            return "its runId holds a secret: search the events by it"
        return changelist_link(Event, "events of this run", q=run.run_id_text)

    @admin.display(description="facets")
    def facets_pretty(self, run: Run) -> str:
        return pretty_json(run.facets)
