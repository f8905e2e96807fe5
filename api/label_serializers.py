"""Tags and owners as /api/v1 shows them (ADR 0083): the visible entries of the row's
projection (a tag or owner a steward hid is kept, not shown), each with its source."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class TagSerializer(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.CharField(help_text="Empty when the tag has no value.")
    field = serializers.CharField(help_text="The column it tags; empty for the whole holder.")
    # The answer's "source" key; the stubs know Field.source as the attribute path.
    source = serializers.ChoiceField(choices=["producer", "steward"])  # type: ignore[assignment]
    origin = serializers.CharField(help_text="The producer's own source of the tag, if sent.")


class OwnerSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="As sent, e.g. team:data or user:jdoe.")
    type = serializers.CharField(help_text="Empty when not said, e.g. MAINTAINER.")
    # The answer's "source" key; the stubs know Field.source as the attribute path.
    source = serializers.ChoiceField(choices=["producer", "steward"])  # type: ignore[assignment]


TAG_KEYS = ("key", "value", "field", "source", "origin")
OWNER_KEYS = ("name", "type", "source")


def visible(entries: Any, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """The entries a steward did not hide, each with ``keys`` ("" where missing)."""
    listed = entries if isinstance(entries, list) else []
    return [
        {key: entry.get(key, "") for key in keys} for entry in listed if not entry.get("hidden")
    ]


@extend_schema_field(TagSerializer(many=True))
class TagsField(serializers.Field):
    def __init__(self, **options: Any) -> None:
        super().__init__(read_only=True, **options)

    def to_representation(self, value: Any) -> list[dict[str, Any]]:
        return visible(value, TAG_KEYS)


@extend_schema_field(OwnerSerializer(many=True))
class OwnersField(serializers.Field):
    def __init__(self, **options: Any) -> None:
        super().__init__(read_only=True, **options)

    def to_representation(self, value: Any) -> list[dict[str, Any]]:
        return visible(value, OWNER_KEYS)
