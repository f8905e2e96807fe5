"""A run found by the runId in its path, and /runs/{runId}/inputs and /outputs: every input
and output of a run, in pages. The run's detail shows the first ``RUN_LINKS_SHOWN`` of each
and how many there are; a run that read a partitioned table by wildcard or crawled a
catalog has tens of thousands (ADR 0186)."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, mixins
from rest_framework.request import Request
from rest_framework.response import Response

from api import params
from api.access import DATASET, RUN
from api.base import ReadAccessMixin
from api.list_rows import run_link_item
from api.pagination import CursorPage
from api.problems import WITH_404, not_found
from api.run_serializers import RunDatasetSerializer
from catalog.models import RUN_LINKS_COUNTED, RUN_LINKS_SHOWN, Direction, Run
from catalog.reads import runs as run_reads

# The runId as a producer sent it, whatever it holds: the router's default ([^/.]+) sent
# Airflow's manual__2026-10-01T09:00:00.123456+00:00, and any id with a dot or a slash, to a
# 404 before the view could look it up (ADR 0190). runs/{runId}/inputs and /outputs take a
# runId without a "/" (matched first, so a detail's runId may end in /inputs): a run whose
# runId holds one has its lists at its UUID, as the detail's inputs_url and outputs_url say.
RUN_ID_PATH = ".+"
# The job whose run to show when several jobs sent the runId (ADR 0028).
JOB_ID_PARAMETER = OpenApiParameter("job_id", int, description="The job whose run to show.")


def runs_named(run_id: str) -> QuerySet[Run]:
    """Runs the runId (a UUID, or the text a producer sent) names; own runs first, then by
    job (deterministic)."""
    return Run.objects.named(run_id).order_by("is_placeholder", "job__namespace", "job__name", "id")


def run_named(request: Request, run_id: str, rows: QuerySet[Run]) -> Run:
    """The run of ``rows`` the path's runId names (``runs_named``): ``?job_id=`` picks a
    job's when several jobs sent it, else the first. 404 when there is none; 400 for a runId
    redaction would change (it is shown redacted, as ``run_id_as_sent``)."""
    params.shown_as_is("run_id", run_id)
    job_id = request.query_params.get("job_id")
    if job_id is None:
        runs = runs_named(run_id)
    else:
        # The job's run by its key, however many jobs sent the runId (ADR 0196).
        runs = Run.objects.named_in_job(run_id, params.row_id(job_id, "job"))
    run = rows.filter(id__in=runs.values("id")[:1]).first()
    if run is None:
        raise not_found(f"No run has runId {run_id[:200]!r}.")
    return run


class RunLinkList(ReadAccessMixin, mixins.ListModelMixin, generics.GenericAPIView):
    """Every input (or output) of one run, oldest link first: the detail's first
    ``RUN_LINKS_SHOWN`` are this list's first items."""

    read_permissions = (RUN, DATASET)
    direction: str = ""

    serializer_class = RunDatasetSerializer
    pagination_class = CursorPage
    cursor_ordering = "id"

    def get(self, request: Request, run_id: str) -> Response:
        # What ``attempted`` needs of the run (catalog.models.writes.link_is_write).
        rows = Run.objects.only("id", "state", "is_streaming", "outputs_confirmed")
        self.run = run_named(request, run_id, rows)
        return self.list(request)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # Items built from rows in the serializer's shape (api.list_rows, ADR 0105), which
        # stays the view's serializer_class for the schema (a list: ListModelMixin).
        page = self.paginate_queryset(self.get_queryset()) or []
        return self.get_paginated_response([run_link_item(self.run, row) for row in page])

    def get_queryset(self) -> Any:
        return run_reads.link_rows(self.run.id, self.direction)


def _described(direction: str) -> Any:
    plural = f"{direction}s"
    return extend_schema(
        operation_id=f"runs_{plural}_list",
        summary=f"Every {direction} of a run",
        description=f"By link id, oldest first: the run detail's `{plural}` are the first "
        f"{RUN_LINKS_SHOWN} of this list, its `{direction}_count` how many there are (counted "
        f"up to {RUN_LINKS_COUNTED:,}). The run is addressed as its detail is: its runId, and "
        "`job_id` when several jobs sent that runId (the detail's "
        f"`{plural}_url` names both).",
        parameters=[OpenApiParameter("run_id", str, OpenApiParameter.PATH), JOB_ID_PARAMETER],
        responses={200: RunDatasetSerializer(many=True), **WITH_404},
    )


class RunInputList(RunLinkList):
    direction = Direction.INPUT

    @_described("input")
    def get(self, request: Request, run_id: str) -> Response:
        return super().get(request, run_id)


class RunOutputList(RunLinkList):
    direction = Direction.OUTPUT

    @_described("output")
    def get(self, request: Request, run_id: str) -> Response:
        return super().get(request, run_id)
