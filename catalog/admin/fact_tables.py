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


def _assertion_detail(item: dict[str, Any]) -> str:
    """What a 1-1-0 assertion adds: its test's name, severity and, when sent, expected
    against actual."""
    parts = [f"{key} {item[key]}" for key in ("name", "severity") if item.get(key)]
    if item.get("expected") is not None or item.get("actual") is not None:
        parts.append(f"expected {item.get('expected')}, actual {item.get('actual')}")
    return f" [{'; '.join(parts)}]" if parts else ""


def _assertions(entry: dict[str, Any]) -> SafeString | str:
    return format_html_join(
        "",
        '<div class="{}">{} {}{}{}</div>',
        (
            (
                "lc-ok" if item["success"] else "lc-failed",
                "passed" if item["success"] else "FAILED" if item["success"] is False else "?",
                item["assertion"],
                f" ({item['column']})" if item["column"] else "",
                _assertion_detail(item),
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


def tests_table(tests: list[dict[str, Any]]) -> SafeString:
    """A run's test results (``catalog.facets.run_tests.results``), redacted."""
    return related_table(
        redact(tests),
        [
            ("test", lambda item: item["name"]),
            ("status", lambda item: format_html('<span class="{}">{}</span>', *_status(item))),
            ("severity", lambda item: item["severity"] or ""),
            ("type", lambda item: item["type"] or ""),
            ("expected", lambda item: item["expected"] or ""),
            ("actual", lambda item: item["actual"] or ""),
        ],
        empty="none reported",
    )


def _status(item: dict[str, Any]) -> tuple[str, str]:
    status = item["status"] or "?"
    return ("lc-failed" if status.lower() == "fail" else "lc-ok", status)


def parameters_table(parameters: list[dict[str, Any]]) -> SafeString:
    """A run's execution parameters (``catalog.facets.execution_parameters``), redacted: a
    secret key's value goes, like a URL's password."""
    return related_table(
        redact(parameters),
        [
            ("key", lambda item: item["key"]),
            ("name", lambda item: item["name"] or ""),
            ("value", lambda item: item["value"] or ""),
        ],
        empty="none reported",
    )
