"""OpenAPI description of the problem documents (RFC 9457) every read endpoint may answer."""

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers

from core.problems import FieldError, Problem


class FieldErrorSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="JSON Pointer of the offending field or parameter.")
    message = serializers.CharField()


class ReadProblemSerializer(serializers.Serializer):
    """An RFC 9457 problem document (``application/problem+json``)."""

    type = serializers.CharField(help_text="Stable URN, urn:lineage-catalog:problem:<slug>.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(required=False)
    # Only the stubs see Serializer.errors here: the serializer metaclass pops declared fields.
    errors = FieldErrorSerializer(many=True, required=False)  # type: ignore[assignment]


def _problem(status: int, slug: str, title: str, detail: str) -> OpenApiResponse:
    return OpenApiResponse(
        response=ReadProblemSerializer,
        description=title,
        examples=[
            OpenApiExample(
                slug,
                value={
                    "type": f"urn:lineage-catalog:problem:{slug}",
                    "title": title,
                    "status": status,
                    "detail": detail,
                },
                response_only=True,
                status_codes=[str(status)],
            )
        ],
    )


BAD_REQUEST = _problem(400, "invalid-request", "The request is not valid", "`depth` must be ...")
UNAUTHENTICATED = _problem(
    401, "unauthenticated", "Authentication required", "A read token or a staff session..."
)
FORBIDDEN = _problem(403, "forbidden", "Not allowed", "This token's scope does not allow...")
NOT_FOUND = _problem(404, "not-found", "Not found", "No dataset has this id.")
THROTTLED = _problem(429, "throttled", "Too many requests", "Request was throttled.")

PROBLEM = "application/problem+json"
# What every read endpoint may answer besides its success (errors: application/problem+json).
COMMON = {
    (400, PROBLEM): BAD_REQUEST,
    (401, PROBLEM): UNAUTHENTICATED,
    (403, PROBLEM): FORBIDDEN,
    (429, PROBLEM): THROTTLED,
}
WITH_404 = {**COMMON, (404, PROBLEM): NOT_FOUND}


def not_found(detail: str) -> Problem:
    return Problem(status=404, slug="not-found", title="Not found", detail=detail)


def bad_parameter(name: str, message: str, detail: str | None = None) -> Problem:
    """400 for the query parameter ``name``: ``message`` is the field error, ``detail``
    (by default the name and the message) the problem's sentence."""
    return Problem(
        status=400,
        slug="invalid-request",
        title="The request is not valid",
        detail=detail if detail is not None else f"`{name}`: {message}",
        errors=[FieldError(f"/{name}", message)],
    )
