"""Shapes shared by the run-fact facets (statistics and metrics carry the same counts)."""

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
