"""/impact: what is downstream (or upstream) of a dataset or a column (catalog.lineage.impact).

JSON by default; CSV with ``Accept: text/csv`` or ``?format=csv``, streamed row by row.
"""

from collections.abc import Mapping
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import renderers, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api import params
from api.access import COLUMN_EDGE, DATASET, EDGE, JOB, STATIC, STATIC_COLUMN
from api.base import ReadAPIView
from api.label_serializers import OwnerSerializer, TagSerializer
from api.problems import WITH_404, bad_parameter, not_found
from catalog.lineage import design_time, impact
from catalog.lineage.request import MAX_DEPTH, NodeRef, UnknownNode
from core.rendering import JSONRenderer

CSV_TYPE = "text/csv"


class CSVRenderer(renderers.BaseRenderer):
    """Chooses CSV in content negotiation; the view streams the rows itself. Anything
    else it is handed (a problem document) is written as JSON, under the problem's own
    content type."""

    media_type = CSV_TYPE
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return JSONRenderer().render(data)


class ImpactItemSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["dataset", "column", "job"])
    id = serializers.CharField(help_text="dataset:<id> (a column: its dataset's) or job:<id>.")
    namespace = serializers.CharField()
    name = serializers.CharField()
    field = serializers.CharField(allow_blank=True, help_text='The column; "" otherwise.')
    depth = serializers.IntegerField(help_text="Hops from the root (a job: the hop it makes).")
    path = serializers.ChoiceField(
        choices=list(impact.PATHS),
        allow_null=True,
        help_text="The best path reaching the item, as strong as its weakest hop: current "
        "(every hop observed and produced by its job's latest completed run), declared "
        "(some hop only declared by a JobEvent, none stale), stale (some hop no longer "
        "produced). null: the hop's job edges were past the read's cap (see cut.edges).",
    )
    last_seen = serializers.DateTimeField(
        allow_null=True, help_text="When that path's last hop was last seen (declared: when)."
    )
    last_run_state = serializers.CharField(
        allow_null=True, help_text="A job's newest run's state; null for datasets and columns."
    )
    via_jobs = serializers.ListField(
        child=serializers.CharField(), help_text="The jobs on the hops reaching the item."
    )
    owners = OwnerSerializer(
        many=True,
        help_text="As the dataset's or job's details show them: the producer's (ownership "
        "facet) and a steward's, without those a steward hid; [] for a column.",
    )
    tags = TagSerializer(
        many=True,
        help_text="As the details show them (the producer's and a steward's, without those a "
        "steward hid): a dataset's or job's own tags (field empty); a column's, the tags of "
        "its field.",
    )


class ImpactSerializer(serializers.Serializer):
    # Only the stubs see Field.root here: the serializer metaclass pops declared fields.
    root = serializers.CharField()  # type: ignore[assignment]
    field = serializers.CharField(allow_blank=True)
    direction = serializers.ChoiceField(choices=["downstream", "upstream"])
    items = ImpactItemSerializer(many=True)
    truncated = serializers.BooleanField()
    cut = serializers.DictField(
        child=serializers.JSONField(),
        help_text="What a bound cut: `max_items` {limit, omitted_datasets, omitted_items, "
        "omitted_is_lower_bound}, `depth` {limit, nodes_with_more}, `edges` {limit}. Empty "
        "when complete.",
    )


IMPACT_EXAMPLE = {
    "root": "dataset:1",
    "field": "",
    "direction": "downstream",
    "items": [
        {
            "type": "job",
            "id": "job:4",
            "namespace": "airflow",
            "name": "etl.orders_daily",
            "field": "",
            "depth": 1,
            "path": "current",
            "last_seen": "2026-11-02T10:00:00Z",
            "last_run_state": "COMPLETE",
            "via_jobs": [],
            "owners": [{"name": "team:finance", "type": "MAINTAINER", "source": "producer"}],
            "tags": [],
        },
        {
            "type": "dataset",
            "id": "dataset:7",
            "namespace": "postgres://db:5432",
            "name": "shop.public.revenue",
            "field": "",
            "depth": 1,
            "path": "stale",
            "last_seen": "2026-10-02T10:00:00Z",
            "last_run_state": None,
            "via_jobs": ["job:4"],
            "owners": [{"name": "user:ana", "type": "", "source": "steward"}],
            "tags": [{"key": "pii", "value": "", "field": "", "source": "steward", "origin": ""}],
        },
    ],
    "truncated": False,
    "cut": {},
}


class Impact(ReadAPIView):
    read_permissions = (JOB, DATASET, EDGE, COLUMN_EDGE, STATIC, STATIC_COLUMN)
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        operation_id="impact",
        summary="Everything downstream (or upstream) of a dataset or one of its columns",
        description=(
            "A flat list of the datasets, columns (with `field`) and jobs reached, nearest "
            "first, each with its depth, the kind of the best path reaching it, when that "
            "path was last seen, a job's last run state, and owners and tags as the dataset "
            "and job details show them (the producer's and a steward's). Bounded by `depth` "
            "and `max_items`; `cut` says what was left out. The filters choose what is "
            "listed; the walk goes on through what they leave out. "
            "`Accept: text/csv` (or `format=csv`) streams the same items as CSV, one row "
            f"each, columns {', '.join(impact.CSV_COLUMNS)}."
        ),
        parameters=[
            OpenApiParameter("node", str, required=True, description="dataset:<id>."),
            OpenApiParameter(
                "field", str, description="A column of that dataset: its column lineage."
            ),
            OpenApiParameter(
                "direction", str, enum=["downstream", "upstream"], description="Default downstream."
            ),
            OpenApiParameter(
                "depth", int, description=f"Hops, 1-{MAX_DEPTH} (default {impact.DEFAULT_DEPTH})."
            ),
            OpenApiParameter(
                "max_items",
                int,
                description=f"Items listed, 1-{impact.MAX_ITEMS} "
                f"(default {impact.DEFAULT_MAX_ITEMS}).",
            ),
            OpenApiParameter("namespace", str, description="Only items in this namespace."),
            OpenApiParameter(
                "currency",
                str,
                enum=list(impact.CURRENCIES),
                description="Only items whose path is of this kind (default any).",
            ),
            OpenApiParameter(
                "lineage",
                str,
                enum=list(design_time.LINEAGES),
                description="observed, static (declared) or all (default).",
            ),
            OpenApiParameter("format", str, enum=["json", "csv"], description="As Accept."),
        ],
        responses={
            (200, "application/json"): ImpactSerializer,
            (200, CSV_TYPE): OpenApiResponse(
                response=OpenApiTypes.STR, description="The items as CSV, a header row first."
            ),
            **WITH_404,
        },
        examples=[OpenApiExample("impact", value=IMPACT_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response | StreamingHttpResponse:
        asked = impact_request(request)
        try:
            report = impact.report(asked)
        except UnknownNode:
            raise not_found(f"No dataset has id {asked.dataset_id}.") from None
        except impact.UnknownField:
            raise not_found(
                f"Dataset {asked.dataset_id} has no such column (in its schema or its "
                "column lineage)."
            ) from None
        if request.accepted_renderer.format == "csv":
            response = StreamingHttpResponse(impact.csv_chunks(report), content_type=CSV_TYPE)
            response["Content-Disposition"] = 'attachment; filename="impact.csv"'
            return response
        return Response(impact.native(report))


def impact_request(request: Request) -> impact.ImpactRequest:
    """The report asked for by the query; a 4xx problem for a bad parameter, a 404 for a
    dataset or column that is not there."""
    raw = params.required(request, "node")
    try:
        root = NodeRef.parse(raw)
    except ValueError as error:
        raise bad_parameter("node", str(error)) from None
    if root.kind != "dataset":
        raise bad_parameter("node", "the impact report starts from a dataset: dataset:<id>.")
    field = request.query_params.get("field")
    if field is not None and not field:
        raise bad_parameter("field", "must not be empty.")
    namespace = request.query_params.get("namespace") or None
    return impact.ImpactRequest(
        dataset_id=root.id,
        field=field,
        upstream=params.choice(request, "direction", ("downstream", "upstream"), "downstream")
        == "upstream",
        depth=params.integer(request, "depth", impact.DEFAULT_DEPTH, 1, MAX_DEPTH),
        max_items=params.integer(
            request, "max_items", impact.DEFAULT_MAX_ITEMS, 1, impact.MAX_ITEMS
        ),
        namespace=namespace,
        currency=params.choice(request, "currency", impact.CURRENCIES, "any"),
        lineage=params.choice(request, "lineage", design_time.LINEAGES, "all"),
    )
