"""Shapes shared by the facets that show values: the run facts' counts (statistics and metrics
carry the same ones) and scalar text (assertions' and tests' expected and actual values)."""

from typing import Any


def number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def statistics(value: dict[str, Any]) -> dict[str, Any]:
    """Rows, bytes (``size``, else ``bytes``) and files of a statistics facet."""
    return {
        "row_count": number(value.get("rowCount")),
        "bytes": number(value.get("size", value.get("bytes"))),
        "file_count": number(value.get("fileCount")),
    }


def text(value: Any) -> str | None:
    """A string field as sent; a number a producer sent where the spec says string
    (``expected: 1000``) as its text; anything else (objects, lists, booleans) None."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None
