"""Namespaces, jobs, runs and datasets: lists with filters and cursors, rich details."""

from typing import Any

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, mixins
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from api import params, run_item_text
from api.access import COLUMN_EDGE, DATASET, EVENT, JOB, RUN, RUN_FACT, sees_retired
from api.base import ReadAccessMixin, ReadAPIView, ReadOnlyViewSet
from api.filters import (
    JOB_FILTERS,
    DatasetFilterSet,
    FilterBackend,
    JobFilterSet,
    RunFilterSet,
    names_a_filter,
)
from api.keyset_rows import KeysetRows
from api.list_rows import dataset_detail, run_item
from api.pagination import CursorPage, WholeListPage
from api.problems import COMMON, WITH_404, not_found
from api.run_serializers import RunDetailSerializer
from api.serializers import (
    AliasSerializer,
    DatasetDetailSerializer,
    DatasetSerializer,
    JobDetailSerializer,
    JobSerializer,
    NamespaceSerializer,
    RunSerializer,
)
from api.views.run_links import JOB_ID_PARAMETER, RUN_ID_PATH, run_named, runs_named
from catalog.lineage import column_detail, design_time
from catalog.models import (
    RUN_LINKS_COUNTED,
    Dataset,
    DatasetAlias,
    Job,
    JobDataset,
    Namespace,
    RetiredKind,
    Run,
    writes,
)
from catalog.reads import datasets, run_facts
from catalog.reads import runs as run_reads
from core import pipelined_reads
from core.prepared import RowByKey

# Detail pages list related rows up to these bounds (invariant 7); the lists behind them
# are paginated endpoints (e.g. /runs?job_id=, /datasets?producer_job_id=).
RELATED_LIMIT = 200
# The run lists' rows (RunQuerySet.list_rows), built once: each request clones it. Building
# it (the deferred facets, the parent's runId, 22 columns resolved) was about half a
# millisecond of every run list request, as much as compiling its statement (ADR 0119).
# Filters and the cursor apply to it as to the model's queryset: the same SQL
# (tests/api/test_filter_backend.py).
RUN_ROWS = Run.objects.for_list().list_rows()
# What /runs reads when no filter is asked (every unfiltered page and each next one): the
# unasked rows, their page statements compiled once per shape (api.keyset_rows, ADR 0123),
# their items written by PostgreSQL (api.run_item_text, ADR 0130).
RUN_PAGES = KeysetRows(RunFilterSet.unasked(RUN_ROWS), run_item_text)


class NamespaceList(ReadAPIView):
    """Namespaces seen, with counts of jobs and datasets."""

    read_permissions = (JOB, DATASET)

    pagination_class = WholeListPage

    @extend_schema(
        operation_id="namespaces_list",
        responses={200: NamespaceSerializer(many=True), **COMMON},
        parameters=[
            OpenApiParameter("limit", int, description="Page size, 1-500 (default 50)."),
            OpenApiParameter(
                "offset", int, description="0 or more: every namespace can be reached."
            ),
        ],
    )
    def get(self, request: Request) -> Response:
        # One statement over the per-namespace summary PostgreSQL keeps (ADR 0121): as
        # many rows as namespaces, whatever the number of jobs and datasets.
        counts = Namespace.objects.counts()
        ordered = [
            {
                "namespace": name,
                "jobs": counts[name].get(RetiredKind.JOB, 0),
                "datasets": counts[name].get(RetiredKind.DATASET, 0),
            }
            for name in sorted(counts)
        ]
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(ordered, request, view=self)
        return paginator.get_paginated_response(NamespaceSerializer(page, many=True).data)


@extend_schema_view(
    list=extend_schema(summary="Jobs", responses={200: JobSerializer(many=True), **COMMON}),
    retrieve=extend_schema(summary="One job", responses={200: JobDetailSerializer, **WITH_404}),
)
class JobViewSet(ReadOnlyViewSet):
    """Jobs, oldest id first; the detail has facets, parent/children, inputs/outputs."""

    read_permissions = (JOB, RUN)  # each job with its latest run
    detail_read_permissions = (JOB, RUN, DATASET)  # and its inputs and outputs

    queryset = Job.objects.with_latest_run().for_list()
    # By id, what is retired answers a steward and says so (ADR 0078); lists hide it.
    detail_queryset = Job.objects.select_related("parent").with_latest_run().with_retirement()
    serializer_class = JobSerializer
    detail_serializer_class = JobDetailSerializer
    filterset_class = JobFilterSet
    cursor_ordering = "id"

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())  # the stubs return a Mapping
        if self.action == "retrieve":
            job_id = self.kwargs["pk"]
            context["children"] = list(
                Job.objects.filter(parent_id=job_id).order_by("id")[:RELATED_LIMIT]
            )
            links = JobDataset.objects.filter(job_id=job_id).select_related("alias__dataset")
            context["inputs"] = list(links.filter(direction="input").order_by("id")[:RELATED_LIMIT])
            context["outputs"] = list(
                links.filter(direction="output").order_by("id")[:RELATED_LIMIT]
            )
            context["latest_tests"] = run_facts.latest_tests(job_id)
            # Beside each, the job edge's runs and completed runs (ADR 0069).
            rows = [*context["inputs"], *context["outputs"]]
            counts = writes.dataset_counts(job_id, sorted({r.alias.dataset_id for r in rows}))
            for row in rows:
                row.run_count, row.completed_run_count = counts.get(
                    (row.alias.dataset_id, row.direction), (0, 0)
                )
        return context

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        job = self.get_object()
        return Response(self.get_serializer(job).data)

    def get_object(self) -> Any:
        params.row_id(self.kwargs["pk"], "job")
        return super().get_object()


class JobRunList(ReadAccessMixin, mixins.ListModelMixin, generics.GenericAPIView):
    """/jobs/{id}/runs: the run history of one job, newest run row first."""

    read_permissions = (RUN, JOB)

    queryset = RUN_ROWS
    serializer_class = RunSerializer
    filterset_class = RunFilterSet
    filter_backends = [FilterBackend]
    pagination_class = CursorPage
    cursor_ordering = "-id"

    @extend_schema(
        operation_id="jobs_runs_list",
        summary="Run history of a job",
        description="The same filters as /runs.",
        responses={200: RunSerializer(many=True), **WITH_404},
    )
    def get(self, request: Request, pk: str) -> Response:
        job_id = params.row_id(pk, "job")
        if not Job.objects.filter(pk=job_id).exists():
            raise not_found(f"No job has id {pk}.")
        return self.list(request)

    def get_queryset(self) -> Any:
        return super().get_queryset().filter(job_id=self.kwargs["pk"])

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return _run_page(self)


@extend_schema_view(
    list=extend_schema(summary="Runs", responses={200: RunSerializer(many=True), **COMMON}),
    retrieve=extend_schema(
        summary="One run",
        description="Addressed by the runId a producer sent: a UUID, or any other text "
        "(Airflow-style ids). When several jobs sent that runId (each keeps its own run, "
        "ADR 0028), their own runs come first, then by job namespace and name; "
        "`same_run_id_runs` lists the others and `job_id` picks one.",
        responses={200: RunDetailSerializer, **WITH_404},
        parameters=[OpenApiParameter("run_id", str, OpenApiParameter.PATH), JOB_ID_PARAMETER],
    ),
)
class RunViewSet(ReadOnlyViewSet):
    """Runs, newest row first; a run is addressed by its runId (UUID or the text sent)."""

    read_permissions = (RUN, JOB)  # each run names its job
    # its datasets and events, and what it reported about its datasets (run facts)
    detail_read_permissions = (RUN, JOB, DATASET, EVENT, RUN_FACT)

    queryset = RUN_ROWS
    # With how many inputs and outputs it has, counted in its own statement (ADR 0186).
    detail_queryset = Run.objects.with_parent_uuid().with_link_counts(RUN_LINKS_COUNTED)
    serializer_class = RunSerializer
    detail_serializer_class = RunDetailSerializer
    filterset_class = RunFilterSet
    lookup_field = "run_uuid"
    lookup_url_kwarg = "run_id"
    lookup_value_regex = RUN_ID_PATH
    cursor_ordering = "-id"

    def _same_run_id(self) -> Any:
        """Runs named by the path's runId (a UUID, or the text a producer sent); own runs
        first, then by job (deterministic)."""
        return runs_named(self.kwargs["run_id"])

    def get_object(self) -> Any:
        return run_named(self.request, self.kwargs["run_id"], self.get_queryset())

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return _run_page(self, RUN_PAGES)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        run = self.get_object()
        # The first RELATED_LIMIT of each direction by id, as a job's detail shows them, each
        # with its run facts: a read that stops there, however many the run has (ADR 0168).
        links = list(run_reads.shown_links(run.id, RELATED_LIMIT))
        context = {
            **self.get_serializer_context(),
            "inputs": [link for link in links if link.direction == "input"],
            "outputs": [link for link in links if link.direction == "output"],
            # Events that made the run: its first by eventTime, read in order (ADR 0181).
            "events": run_reads.shown_events(run, RELATED_LIMIT),
            "children": list(
                Run.objects.filter(parent_run=run)
                .order_by("id")
                .values_list("run_uuid", flat=True)[:RELATED_LIMIT]
            ),
            "same_run_id": list(
                self._same_run_id().exclude(id=run.id).select_related("job")[:RELATED_LIMIT]
            ),
            "dataset_facts": run_facts.of_links(links),
            # Where all of them are: named by the run's UUID and job, which address this
            # run and no other whatever runId it was sent as (ADR 0028, 0186).
            **{
                f"{plural}_url": self.request.build_absolute_uri(
                    f"{reverse(f'runs-{plural}', kwargs={'run_id': run.run_uuid})}"
                    f"?job_id={run.job_id}"
                )
                for plural in ("inputs", "outputs")
            },
        }
        return Response(RunDetailSerializer(run, context=context).data)


def _run_page(view: Any, kept: KeysetRows | None = None) -> Response:
    """A page of runs as RunSerializer shows them, built from rows (``RUN_ROWS``,
    api.list_rows); a request that names no filter reads ``kept``'s statements, when the
    view's rows are ``kept``'s (/runs; /jobs/{id}/runs adds its job), whose items
    PostgreSQL wrote (api.run_item_text: the same bytes)."""
    if kept is not None and not names_a_filter(view.request.query_params, view.filterset_class):
        page = view.paginate_queryset(kept.shape())
        return view.get_paginated_response([row["item"] for row in page])
    page = view.paginate_queryset(view.filter_queryset(view.get_queryset()))
    return view.get_paginated_response([run_item(row) for row in page])


# The dataset detail's column lineage filter, named as the graph's (api/views/lineage.py).
LINEAGE_PARAMETER = OpenApiParameter(
    "lineage",
    str,
    enum=list(design_time.LINEAGES),
    description="Which column edges and dependencies into the dataset: observed (what runs "
    "wrote), static (what jobs' current JobEvents declare, marked `static`), all (default).",
)


@extend_schema_view(
    list=extend_schema(summary="Datasets", responses={200: DatasetSerializer(many=True), **COMMON}),
    retrieve=extend_schema(
        summary="One dataset",
        responses={200: DatasetDetailSerializer, **WITH_404},
        parameters=[LINEAGE_PARAMETER],
    ),
)
class DatasetViewSet(ReadOnlyViewSet):
    """Datasets with every alias; the detail adds schema, facets and the jobs around it."""

    # the jobs producing and consuming it, the column lineage into it, and the latest
    # runs' facts about it
    detail_read_permissions = (DATASET, JOB, COLUMN_EDGE, RUN, RUN_FACT)

    @property
    def read_permissions(self) -> tuple[str, ...]:
        """The list's: a job filter (``job_id``, ``producer_job_id``, ``consumer_job_id``)
        answers which datasets a job reads and writes, what the detail shows to who may view
        jobs; so it needs that permission too, or a session that may view datasets only would
        learn the jobs' lineage one id at a time."""
        request = getattr(self, "request", None)
        params = request.query_params if request is not None else {}
        if any(name in params for name in JOB_FILTERS):
            return (DATASET, JOB)
        return (DATASET,)

    queryset = Dataset.objects.with_names().for_list()
    # The detail's aliases and fields are read beside it in one statement, not prefetched
    # (catalog.reads.datasets.detail_rows, ADR 0110, 0124); facet_versions is not shown.
    detail_queryset = Dataset.objects.defer("facet_versions").with_retirement()
    serializer_class = DatasetSerializer
    detail_serializer_class = DatasetDetailSerializer
    filterset_class = DatasetFilterSet
    cursor_ordering = "id"

    def get_object(self) -> Any:
        """The dataset's row (``DETAIL_ROW``), as ``get_queryset`` would find it: with what
        is retired only for a session that sees it (ADR 0078)."""
        key = params.row_id(self.kwargs["pk"], "dataset")
        row = DETAIL_ROWS[self.sees_retired()].get(key)
        if row is None:
            raise Http404
        self.check_object_permissions(self.request, row)
        return row

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._detail(self.get_object())

    def _detail(self, dataset: dict[str, Any]) -> Response:
        # Its aliases, fields, jobs' links and latest runs' facts: one statement (ADR 0124).
        # A job reference is its id and names: never its facets, which a Spark job's can
        # make hundreds of kilobytes, read 400 times for a busy dataset. Beside each, the
        # job's runs and completed runs with this dataset (catalog.models.writes, ADR 0069):
        # a job none of whose runs completed only attempted to write it.
        # The one column-lineage model (ADR 0060): what the graph and Marquez read too,
        # with the declared (static) edges beside the observed ones, as in the graph, and
        # the count of those outside its schema: one statement (ADR 0135). Both statements
        # take only the row's id: sent in one round trip (ADR 0140).
        which = params.choice(self.request, "lineage", design_time.LINEAGES, "all")
        detail, into = pipelined_reads.rows_together(
            [
                datasets.detail_rows_read(dataset["id"], 4 * RELATED_LIMIT),
                column_detail.into_dataset_read(
                    dataset["id"],
                    RELATED_LIMIT,
                    observed=which != "static",
                    static=which != "observed",
                ),
            ]
        )
        rows = datasets.detail_rows_of(detail)
        lineage, outside_schema = column_detail.into_dataset_of(into)
        # The first aliases by name and how many there are; the rest are a list's (ADR 0180).
        aliases_url = self.request.build_absolute_uri(
            reverse("dataset-aliases", kwargs={"pk": dataset["id"]})
        )
        written = _per_job(rows.links["output"])
        related = {
            "producing": [entry for entry in written if not _attempted(entry)][:RELATED_LIMIT],
            "attempting": [entry for entry in written if _attempted(entry)][:RELATED_LIMIT],
            "consuming": _per_job(rows.links["input"])[:RELATED_LIMIT],
            "column_lineage_outside_schema": outside_schema,
            "column_lineage": [edge.named() for edge in lineage.edges],
            "dataset_dependencies": [edge.named() for edge in lineage.dependencies],
            "run_facts": rows.run_facts,
        }
        # DatasetDetailSerializer's document, built from the rows (api.list_rows, ADR 0110).
        aliases = {"shown": rows.aliases, "count": rows.alias_count, "url": aliases_url}
        return Response(dataset_detail(dataset, aliases, rows.fields, related))

    @extend_schema(
        summary="Resolve a name to its dataset",
        description=(
            "Any alias the dataset was ever called resolves to it. The input is normalised "
            "as derivation does (scheme spellings, default ports, slashes) and steward "
            "rewrite rules apply, so `s3a://bucket/` and `s3://bucket` find the same "
            "dataset. Edge-API table strings live in namespace `table`."
        ),
        parameters=[
            OpenApiParameter("namespace", str, required=True),
            OpenApiParameter("name", str, required=True),
            LINEAGE_PARAMETER,
        ],
        responses={200: DatasetDetailSerializer, **WITH_404},
        filters=False,
    )
    @action(detail=False, methods=["get"], pagination_class=None, filterset_class=None)
    def lookup(self, request: Request) -> Response:
        namespace = params.required(request, "namespace")
        name = params.required(request, "name")
        dataset = self.detail_queryset.for_alias(namespace, name).values(*DETAIL_ROW).first()
        if dataset is None:
            raise not_found(f"No dataset is known as {namespace} {name}.")
        return self._detail(dataset)

    def filter_queryset(self, queryset: Any) -> Any:
        if self.action == "lookup":
            return queryset
        return super().filter_queryset(queryset)


class DatasetAliasList(ReadAccessMixin, mixins.ListModelMixin, generics.GenericAPIView):
    """/datasets/{id}/aliases: every name the dataset is known by, oldest alias first. The
    detail shows the first ``DETAIL_ALIASES`` by name (ADR 0180): a table symlinked under
    a new name by every run gathers tens of thousands over the years."""

    read_permissions = (DATASET,)

    queryset = DatasetAlias.objects.select_related("reason_rule")
    serializer_class = AliasSerializer
    pagination_class = CursorPage
    cursor_ordering = "id"

    @extend_schema(
        operation_id="datasets_aliases_list",
        summary="Every alias of a dataset",
        description="Oldest alias first (by id); the detail's `aliases` are the first "
        f"{datasets.DETAIL_ALIASES} by namespace and name, `alias_count` how many there are.",
        responses={200: AliasSerializer(many=True), **WITH_404},
    )
    def get(self, request: Request, pk: str) -> Response:
        dataset_id = params.row_id(pk, "dataset")
        found = Dataset.objects.filter(pk=dataset_id)
        if not sees_retired(request.user, Dataset):  # as the detail finds it (ADR 0078)
            found = found.current()
        if not found.exists():
            raise not_found(f"No dataset has id {pk}.")
        return self.list(request)

    def get_queryset(self) -> Any:
        return super().get_queryset().filter(dataset_id=self.kwargs["pk"])


# The columns of a dataset's row its detail shows (api.list_rows.dataset_detail), with its
# active retirement (``with_retirement``); facet_versions and the rest are not shown.
DETAIL_ROW = (
    "id",
    "namespace",
    "name",
    "description",
    "tags",
    "owners",
    "lifecycle_state",
    "is_dropped",
    "first_seen",
    "last_seen",
    "lifecycle_changed_at",
    "facets",
    "retired_at",
    "retired_by",
    "retired_reason",
)
# The detail's row by id, compiled once per process for each of the two querysets
# ReadOnlyViewSet.get_queryset gives a detail (by ``sees_retired``: what is retired too, or
# ``current()``), and prepared on a kept connection (core.prepared.RowByKey, ADR 0124).
# tests/api/test_detail_row.py holds each to the SQL get_queryset's queryset compiles to.
DETAIL_ROWS = {
    True: RowByKey(DatasetViewSet.detail_queryset, DETAIL_ROW),
    False: RowByKey(DatasetViewSet.detail_queryset.current(), DETAIL_ROW),
}


def _attempted(entry: dict[str, Any]) -> bool:
    return writes.only_attempted(
        entry["declared"], entry["run_count"], entry["completed_run_count"]
    )


def _per_job(links: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """One entry per job (a job may read several aliases of a merged dataset), in
    DatasetJobSerializer's shape, from ``catalog.reads.datasets.detail_rows``'s links. Built
    as dicts, not through the serializer: a busy dataset lists 400 jobs, and DRF's fields
    took 40 % of the detail's CPU. Times are UTC, which the JSON renderer writes as
    DateTimeField does (tests/api/test_list_columns.py compares the bytes)."""
    entries: dict[int, dict[str, Any]] = {}
    for job_id, namespace, name, declared, first_seen, last_seen, runs, done in links:
        entry = entries.get(job_id)
        if entry is None:
            entries[job_id] = {
                "job": {"id": job_id, "namespace": namespace, "name": name},
                "declared": declared,
                "first_seen": first_seen,
                "last_seen": last_seen,
                "run_count": runs,
                "completed_run_count": done,
            }
        else:
            entry["first_seen"] = min(entry["first_seen"], first_seen)
            entry["last_seen"] = max(entry["last_seen"], last_seen)
            entry["declared"] = entry["declared"] or declared
    return list(entries.values())
