"""Reading the facet problems recorded on an event (ADR 0004), redacted for display.

A problem's message is jsonschema's, which quotes the offending value: a facet that carries
credentials in the wrong shape would show them. Every read path (API, admin) shows problems
through ``redacted_problems``, which withholds the message when the path or the quoted
value names a secret key, and otherwise applies ``core.redaction.redact_text`` to it.
"""

from typing import Any

from django.conf import settings
from rest_framework import serializers

from core.redaction import is_secret_key, redact_text


# One entry of ``redacted_problems``: the shape of a problem in every read and ingest answer.
# (A comment, not a docstring: drf-spectacular would publish a docstring in the schema.)
class FacetProblemSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="JSON Pointer into the event.")
    message = serializers.CharField()
    facet = serializers.CharField(
        allow_blank=True, help_text="The facet the problem belongs to; '' outside facets."
    )
    skipped = serializers.BooleanField(help_text="True: derivation does not use that facet.")


WITHHELD = "does not match the facet's schema (message withheld: it quotes a secret value)"


def _secret_keys() -> tuple[str, ...]:
    return tuple(key.lower() for key in settings.LINEAGE.get("REDACT_KEYS", ()))


def redacted_problems(problems: Any) -> list[dict[str, Any]]:
    """The event's ``facet_problems`` as shown to readers ([] when there are none)."""
    if not isinstance(problems, list):
        return []
    keys = _secret_keys()
    shown = []
    for problem in problems:
        if not isinstance(problem, dict):
            continue
        path = str(problem.get("path", ""))
        message = str(problem.get("message", ""))
        lowered = (path + " " + message).lower()
        secret = any(is_secret_key(part) for part in path.split("/") if part) or any(
            key in lowered for key in keys
        )
        message = WITHHELD if secret else redact_text(message)
        shown.append(
            {
                "path": path,
                "message": message,
                "facet": str(problem.get("facet", "")),
                "skipped": bool(problem.get("skipped")),
            }
        )
    return shown
