"""/search: ranked datasets and jobs (catalog.reads.search)."""

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from api import params
from api.access import DATASET, JOB
from api.base import ReadAPIView
from api.pagination import DEFAULT_PAGE_SIZE, MAX_OFFSET, MAX_PAGE_SIZE
from api.problems import COMMON, bad_parameter
from catalog.reads.search import MAX_QUERY_LENGTH, search_catalog


class SearchHitSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["dataset", "job"])
    id = serializers.IntegerField(help_text="The dataset's or job's id.")
    namespace = serializers.CharField()
    name = serializers.CharField()
    matched_field = serializers.ChoiceField(
        choices=["alias", "name", "words", "description", "column", "tag", "owner"],
        help_text="What matched best: an alias, a job name, namespace/name/description words, "
        "a dataset description, a column name, a tag (key or key:value) or an owner.",
    )
    matched_value = serializers.CharField()
    score = serializers.FloatField(help_text="Higher is better; comparable within one query.")


class SearchPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = SearchHitSerializer(many=True)


class Search(ReadAPIView):
    read_permissions = (JOB, DATASET)

    @extend_schema(
        operation_id="search",
        summary="Search datasets and jobs",
        description=(
            "Full-text and trigram search over dataset aliases (every name), job names, "
            "namespaces, descriptions and column names; ranked, best first. A typo still "
            "finds the table (`custmers` finds `shop.public.customers`)."
        ),
        parameters=[
            OpenApiParameter("q", str, required=True, description="1-200 characters."),
            OpenApiParameter("type", str, enum=["dataset", "job"]),
            OpenApiParameter("limit", int, description="1-500 (default 50)."),
            OpenApiParameter("offset", int, description=f"0-{MAX_OFFSET}."),
        ],
        responses={200: SearchPageSerializer, **COMMON},
        examples=[
            OpenApiExample(
                "hit",
                response_only=True,
                value={
                    "next": None,
                    "previous": None,
                    "results": [
                        {
                            "type": "dataset",
                            "id": 12,
                            "namespace": "postgres://db:5432",
                            "name": "shop.public.customers",
                            "matched_field": "alias",
                            "matched_value": "postgres://db:5432 shop.public.customers",
                            "score": 0.78,
                        }
                    ],
                },
            )
        ],
    )
    def get(self, request: Request) -> Response:
        query = params.required(request, "q")
        if len(query) > MAX_QUERY_LENGTH:
            raise bad_parameter("q", f"at most {MAX_QUERY_LENGTH} characters.")
        kind = request.query_params.get("type") or None
        if kind not in (None, "dataset", "job"):
            raise bad_parameter("type", "expected dataset or job.")
        limit = params.integer(request, "limit", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
        offset = params.integer(request, "offset", 0, 0, MAX_OFFSET)
        hits = search_catalog(query, limit + 1, offset, kind)
        url = request.build_absolute_uri()
        next_url = None
        if len(hits) > limit and offset + limit <= MAX_OFFSET:
            next_url = replace_query_param(url, "offset", offset + limit)
        previous_url = None
        if offset > 0:
            previous = max(offset - limit, 0)
            previous_url = (
                replace_query_param(url, "offset", previous)
                if previous
                else remove_query_param(url, "offset")
            )
        # SearchPageSerializer's document, built without it: its seven fields per hit were
        # most of the search's Python CPU (ADR 0105; tests/api/test_reads_snapshot.py).
        results = [
            {
                "type": hit.type,
                "id": hit.id,
                "namespace": hit.namespace,
                "name": hit.name,
                "matched_field": hit.matched_field,
                "matched_value": hit.matched_value,
                "score": float(hit.score),
            }
            for hit in hits[:limit]
        ]
        return Response({"next": next_url, "previous": previous_url, "results": results})
