"""The admin's view of run facts (``catalog.reads.run_facts``): statistics, data quality metrics
and assertions, on the run page (per dataset) and the dataset page (its latest runs)."""

from collections.abc import Callable
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from catalog.admin.support import related_table
from core.redaction import redact


def _statistics(entry: dict[str, Any]) -> str:
    values = entry["statistics"] or entry["quality_metrics"]
    if not values:
        return ""
    parts = [
        f"{values[key]} {label}"
        for key, label in (("row_count", "rows"), ("bytes", "bytes"), ("file_count", "files"))
        if values.get(key) is not None
    ]
    return ", ".join(parts)


def _metrics(entry: dict[str, Any]) -> SafeString | str:
    metrics = (entry["quality_metrics"] or {}).get("column_metrics") or {}
    return format_html_join(
        "",
        "<div><code>{}</code>: {}</div>",
        ((column, values) for column, values in metrics.items()),
    )


def _assertions(entry: dict[str, Any]) -> SafeString | str:
    return format_html_join(
        "",
        '<div class="{}">{} {}{}</div>',
        (
            (
                "lc-ok" if item["success"] else "lc-failed",
                "passed" if item["success"] else "FAILED" if item["success"] is False else "?",
                item["assertion"],
                f" ({item['column']})" if item["column"] else "",
            )
            for item in entry["assertions"]
        ),
    )


def facts_table(
    entries: list[dict[str, Any]], first: tuple[str, Callable[[dict[str, Any]], Any]]
) -> SafeString:
    """Run facts as a table; ``first`` is the column naming the dataset or the run."""
    entries = redact(entries)
    return related_table(
        entries,
        [
            first,
            ("direction", lambda entry: entry["direction"]),
            ("statistics", _statistics),
            ("column metrics", _metrics),
            ("assertions", _assertions),
        ],
        empty="none reported",
    )


def dataset_cell(entry: dict[str, Any]) -> SafeString:
    alias = entry["alias"]
    return format_html("{} {}", alias["namespace"], alias["name"])


def run_cell(entry: dict[str, Any]) -> SafeString:
    return format_html("{} ({})", entry["run_id"], entry["job"]["name"])
