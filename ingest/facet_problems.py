"""Reading the facet problems recorded on an event (ADR 0004), redacted for display.

A problem's message is jsonschema's, which quotes the offending value: a facet that carries
credentials in the wrong shape would show them. Every read path (API, admin) shows problems
through ``redacted_problems``, which withholds the message when the path or the quoted
value names a secret key, and otherwise applies ``core.redaction.redact_text`` to it. The
path and the facet are pointers whose tokens are the producer's own keys (a column keyed by
a DSN in ``catalogProperties`` or ``columnLineage``): each key is redacted as the payload
beside it redacts an object's keys (ADR 0179), so a path never shows what the payload hides.
"""

from typing import Any

from django.conf import settings
from rest_framework import serializers

from core.redaction import is_secret_key, redact_text
from ingest import pointers


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
                "path": _redacted_pointer(path),
                "message": message,
                "facet": _redacted_pointer(str(problem.get("facet", ""))),
                "skipped": bool(problem.get("skipped")),
            }
        )
    return shown


def _redacted_pointer(pointer: str) -> str:
    """``pointer`` with each of its keys redacted as text (unchanged when none holds a secret)."""
    parts = pointer.split("/")
    shown = [pointers.token(redact_text(pointers.key(part))) for part in parts]
    return "/".join(shown)
