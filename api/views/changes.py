"""/changes: what changed about datasets, newest first, with what each change breaks."""

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


class ChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ChangeKind.choices)
    dataset = serializers.CharField(help_text="dataset:<id>")
    namespace = serializers.CharField(help_text="The name the change was seen under.")
    name = serializers.CharField()
    column = serializers.CharField()
    old_type = serializers.CharField(allow_blank=True)
    new_type = serializers.CharField(allow_blank=True)
    changed_at = serializers.DateTimeField(help_text="When the new schema was first seen.")
    event_id = serializers.IntegerField(
        allow_null=True,
        help_text="The event that first showed it (null once retention removed it).",
    )
    run_id = serializers.CharField(allow_blank=True, help_text="That event's runId, if any.")
    breaking = serializers.BooleanField(
        help_text="A removed or retyped column that downstream column lineage reads."
    )
    breaks = ReaderSerializer(many=True, help_text="What it breaks (at most 20).")
    breaks_truncated = serializers.BooleanField()


class ChangePage(CursorPage):
    ordering = ("-changed_at", "-id")


def change_dict(change: DatasetChange, breaks: breaking.Breaks | None) -> dict[str, Any]:
    """A change as ChangeSerializer documents it."""
    return {
        "id": change.pk,
        "kind": change.kind,
        "dataset": f"dataset:{change.alias.dataset_id}",
        "namespace": change.alias.namespace,
        "name": change.alias.name,
        "column": change.column,
        "old_type": change.old_type,
        "new_type": change.new_type,
        "changed_at": change.changed_at,
        "event_id": change.event_id,
        "run_id": change.run_id,
        "breaking": breaks is not None,
        "breaks": breaks.readers if breaks else [],
        "breaks_truncated": bool(breaks and breaks.left_out),
    }


class ChangeList(ReadAPIView):
    read_permissions = (CHANGE, DATASET, JOB, COLUMN_EDGE)
    pagination_class = ChangePage

    @extend_schema(
        operation_id="changes_list",
        summary="Schema changes of datasets, newest first, with what each breaks",
        description=(
            "Every change between consecutive schema versions of a dataset's names "
            "(consecutive by when each schema was first seen): a column added, removed, or "
            "with its type changed. A removed or retyped column that downstream column "
            "lineage reads is `breaking`, and `breaks` names the downstream columns and "
            "jobs, each current or stale."
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
            OpenApiParameter("namespace", str, description="The dataset's namespace."),
            OpenApiParameter("dataset", int, description="One dataset's changes."),
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
        queryset = DatasetChange.objects.listed(
            since=params.moment(request, "since"),
            kinds=kinds,
            namespace=request.query_params.get("namespace") or None,
            dataset_id=dataset or None,
        )
        paginator = self.pagination_class()
        page = list(paginator.paginate_queryset(queryset, request, view=self) or [])
        breaks = breaking.breaks(page)
        return paginator.get_paginated_response(
            [change_dict(change, breaks.get(change.pk)) for change in page]
        )
