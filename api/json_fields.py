"""The serializer field for JSON a producer wrote (facets, payloads, metadata values, run
facts): shown redacted by ``core.redaction.redact``, the one redaction function (ADR
0056). Its own module so the smaller serializer modules can use it without importing
``api.serializers``."""

from typing import Any

from rest_framework import serializers

from core.redaction import redact


class RedactedJSONField(serializers.JSONField):
    """Facets come from events: secrets in them are redacted like payloads."""

    def to_representation(self, value: Any) -> Any:
        return redact(value)
