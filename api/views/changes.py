"""/changes: what changed about datasets and jobs, newest first, with what each change
breaks (ADR 0082, ADR 0088)."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api import params
from api.access import CHANGE, COLUMN_EDGE, DATASET, JOB
from api.base import ReadAPIView
from api.pagination import CursorPage
from api.problems import COMMON, bad_parameter
from catalog.lineage import breaking
from catalog.models import ChangeKind, DatasetChange


class ReaderSerializer(serializers.Serializer):
    dataset = serializers.CharField(help_text="dataset:<id> of the downstream column.")
    namespace = serializers.CharField()
    name = serializers.CharField()
    field = serializers.CharField()
    job = serializers.CharField(help_text="job:<id> whose column lineage reads the column.")
    current = serializers.BooleanField(
        help_text="The job's latest completed run still produced this column edge; false: "
        "stale (an older run did)."
    )


class NamedSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="dataset:<id> or job:<id>")
    namespace = serializers.CharField()
    name = serializers.CharField()


class ChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ChangeKind.choices)
    dataset = serializers.CharField(
        allow_null=True,
        help_text="dataset:<id>: whose schema or lifecycle changed, the edge's target; null "
        "for run_failed.",
    )
    namespace = serializers.CharField(
        help_text="The name the change was seen under (a schema change), the dataset's, or "
        "the job's for run_failed."
    )
    name = serializers.CharField()
    upstream = NamedSerializer(
        allow_null=True, help_text="edge_added, edge_stopped: the edge's upstream dataset."
    )
    job = NamedSerializer(allow_null=True, help_text="The edge's job, or the job whose run failed.")
    column = serializers.CharField()
    old_type = serializers.CharField(allow_blank=True)
    new_type = serializers.CharField(allow_blank=True)
    changed_at = serializers.DateTimeField(
        help_text="When: the new schema or edge first seen, the superseding or failing run's "
        "end, the retirement or restore."
    )
    event_id = serializers.IntegerField(
        allow_null=True,
        help_text="The event that showed it (null once retention removed it, or for a "
        "steward's retirement or restore).",
    )
    run_id = serializers.CharField(
        allow_blank=True,
        help_text="The run that showed it: that event's runId; the first run of a new edge, "
        "the run that superseded an edge, the failing run.",
    )
    previous_run_id = serializers.CharField(
        allow_blank=True,
        help_text="edge_stopped: the last run that produced the edge; run_failed: the "
        "previous run, which succeeded.",
    )
    detail = serializers.CharField(
        allow_blank=True, help_text="Who retired or restored the dataset and why."
    )
    breaking = serializers.BooleanField(
        help_text="A removed or retyped column that downstream column lineage reads."
    )
    breaks = ReaderSerializer(many=True, help_text="What it breaks (at most 20).")
    breaks_truncated = serializers.BooleanField()


class ChangePage(CursorPage):
    ordering = ("-changed_at", "-id")


def _named(prefix: str, pk: int | None, namespace: str, name: str) -> dict[str, Any] | None:
    if pk is None:
        return None
    return {"id": f"{prefix}:{pk}", "namespace": namespace, "name": name}


def change_item(row: dict[str, Any], breaks: breaking.Breaks | None) -> dict[str, Any]:
    """A change as ChangeSerializer documents it, from its row (``listed_rows``), as the
    run list's items are built (``api.list_rows``, ADR 0105): instances of the change and
    the four models it names were most of a page's CPU (docs/benchmarks.md, "/changes
    items built from rows")."""
    # Whose change it is: the alias a schema was sent under, the dataset, or the job.
    if row["alias_id"] is not None:
        named, dataset_id = "alias__", row["alias__dataset_id"]
    elif row["dataset_id"] is not None:
        named, dataset_id = "dataset__", row["dataset_id"]
    else:
        named, dataset_id = "job__", None
    return {
        "id": row["id"],
        "kind": row["kind"],
        "dataset": f"dataset:{dataset_id}" if dataset_id else None,
        "namespace": row[f"{named}namespace"],
        "name": row[f"{named}name"],
        "upstream": _named(
            "dataset", row["source_id"], row["source__namespace"], row["source__name"]
        ),
        "job": _named("job", row["job_id"], row["job__namespace"], row["job__name"]),
        "column": row["column"],
        "old_type": row["old_type"],
        "new_type": row["new_type"],
        "changed_at": row["changed_at"],
        "event_id": row["event_id"],
        "run_id": row["run_id"],
        "previous_run_id": row["previous_run_id"],
        "detail": row["detail"],
        "breaking": breaks is not None,
        "breaks": breaks.readers if breaks else [],
        "breaks_truncated": bool(breaks and breaks.left_out),
    }


class ChangeList(ReadAPIView):
    read_permissions = (CHANGE, DATASET, JOB, COLUMN_EDGE)
    pagination_class = ChangePage

    @extend_schema(
        operation_id="changes_list",
        summary="What changed about datasets and jobs, newest first, with what each breaks",
        description=(
            "Every change between consecutive schema versions of a dataset's names "
            "(consecutive by when each schema was first seen): a column added, removed, or "
            "with its type changed. A removed or retyped column that downstream column "
            "lineage reads is `breaking`, and `breaks` names the downstream columns and "
            "jobs, each current or stale. Also (ADR 0088): `edge_added`, a new upstream "
            "edge into a dataset that had lineage already; `edge_stopped`, an edge the "
            "job's previous completed run produced and its next one did not; `run_failed`, "
            "a failed run whose previous finished run had succeeded; `dataset_retired` and "
            "`dataset_restored`. Each says when, and the event and runs that showed it."
        ),
        parameters=[
            OpenApiParameter(
                "since", OpenApiTypes.DATETIME, description="Changes seen at or after."
            ),
            OpenApiParameter(
                "kind",
                str,
                many=True,
                explode=False,
                enum=ChangeKind.values,
                description="Comma-separated kinds.",
            ),
            OpenApiParameter(
                "namespace",
                str,
                description="The dataset's namespace (the job's, for run_failed).",
            ),
            OpenApiParameter(
                "dataset", int, description="One dataset's changes (and its edges' as source)."
            ),
            OpenApiParameter("job", int, description="One job's changes (its edges and runs)."),
            OpenApiParameter("cursor", str, description="From `next`/`previous`."),
            OpenApiParameter("limit", int, description="Page size, 1-500 (default 50)."),
        ],
        responses={200: ChangeSerializer(many=True), **COMMON},
    )
    def get(self, request: Request) -> Response:
        kinds = [kind for kind in request.query_params.get("kind", "").split(",") if kind]
        for kind in kinds:
            if kind not in ChangeKind.values:
                raise bad_parameter("kind", f"one of {', '.join(ChangeKind.values)}.")
        dataset = params.integer(request, "dataset", 0, 1, 2**63 - 1)
        job = params.integer(request, "job", 0, 1, 2**63 - 1)
        queryset = DatasetChange.objects.listed(
            since=params.moment(request, "since"),
            kinds=kinds,
            namespace=request.query_params.get("namespace") or None,
            dataset_id=dataset or None,
            job_id=job or None,
        ).listed_rows()
        paginator = self.pagination_class()
        page = list(paginator.paginate_queryset(queryset, request, view=self) or [])
        breaks = breaking.breaks_of(
            [(row["id"], row["kind"], row["alias__dataset_id"], row["column"]) for row in page]
        )
        return paginator.get_paginated_response(
            [change_item(row, breaks.get(row["id"])) for row in page]
        )
