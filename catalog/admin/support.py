"""Building blocks of the catalog admin: links, bounded related tables, name search.

The shared base admin, "#id" search and window filter are in core/admin_base.py.

Related rows are shown as small read-only tables (at most ``RELATED_LIMIT`` rows, one query
each, LIMIT n+1) with a link to the filtered changelist that holds the rest: an inline
formset would load every related row of a dataset with a million events.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from catalog.models import AliasRule
from catalog.names import naming
from catalog.names.rules import alias_key

RELATED_LIMIT = 20


def selection(
    request: HttpRequest, queryset: QuerySet, model_admin: Any, limit: int, hint: str = ""
) -> list[Any] | None:
    """An action's selection, or None (and a message saying so) when it holds more than
    ``limit``: an action that did the first ``limit`` and said nothing of the rest left the
    steward believing it had done them all (ADR 0173)."""
    chosen = list(queryset[: limit + 1])
    if len(chosen) <= limit:
        return chosen
    model_admin.message_user(
        request, f"Select at most {limit} at once: nothing was done{hint}.", messages.ERROR
    )
    return None


def admin_url(obj: Model) -> str:
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])


def link(obj: Model | None, label: Any = None) -> SafeString:
    """A link to an object's admin page ("—" for None)."""
    if obj is None:
        return mark_safe("—")
    return format_html('<a href="{}">{}</a>', admin_url(obj), label if label is not None else obj)


def changelist_url(model: type[Model], **params: Any) -> str:
    meta = model._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


def changelist_link(model: type[Model], label: str, **params: Any) -> SafeString:
    return format_html('<a href="{}">{}</a>', changelist_url(model, **params), label)


def related_table(
    rows: QuerySet | Sequence[Any],
    columns: Sequence[tuple[str, Callable[[Any], Any]]],
    more: tuple[type[Model], dict[str, Any]] | None = None,
    limit: int = RELATED_LIMIT,
    empty: str = "none",
) -> SafeString:
    """At most ``limit`` rows as an HTML table; "more…" links to the filtered changelist."""
    items = list(rows[: limit + 1])
    if not items:
        return format_html('<span class="lc-empty">{}</span>', empty)
    header = format_html_join("", "<th>{}</th>", ((title,) for title, _ in columns))
    body = format_html_join(
        "",
        "<tr>{}</tr>",
        (
            (format_html_join("", "<td>{}</td>", ((render(item),) for _, render in columns)),)
            for item in items[:limit]
        ),
    )
    footer: SafeString = mark_safe("")
    if more is not None:
        model, params = more
        text = f"more than {limit}: see all…" if len(items) > limit else "open as a list"
        footer = format_html("<p>{}</p>", changelist_link(model, text, **params))
    return format_html(
        '<table class="lc-related"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>{}',
        header,
        body,
        footer,
    )


def name_keys(term: str) -> list[bytes]:
    """Key hashes of every way to read ``term`` as namespace + name.

    ``s3://lake/orders`` may be (``s3://lake``, ``orders``) or (``s3://lake/orders``, ...):
    each split at a "/" (or at whitespace) is keyed as the derivation stores it,
    so the search is a handful of exact lookups on the unique key index.
    """
    term = term.strip()
    candidates: set[tuple[str, str]] = set()
    if " " in term or "\t" in term:
        namespace, _, name = term.partition(" ") if " " in term else term.partition("\t")
        candidates.add((namespace.strip(), name.strip()))
    for index, char in enumerate(term):
        if char == "/" and 0 < index < len(term) - 1:
            candidates.add((term[:index], term[index + 1 :]))
            candidates.add((term[:index], term[index:]))
    rules = AliasRule.objects.rule_set()
    keys = set()
    for namespace, name in candidates:
        if namespace and name:
            keys.add(alias_key(namespace, name, rules))  # a dataset alias
            keys.add(naming.key_hash(namespace, name))  # a job (stored as written)
    return sorted(keys)


class HiddenIdFilter(admin.SimpleListFilter):
    """A filter set only by links (``?dataset=12``): no sidebar entry, no DISTINCT query."""

    title = ""
    parameter_name = ""

    def lookups(self, request: HttpRequest, model_admin: Any) -> Iterable[tuple[str, str]]:
        return ()

    def has_output(self) -> bool:
        return False

    def id_value(self) -> int | None:
        value = self.value()
        return int(value) if value and value.isdigit() else None

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.id_value()
        return queryset if value is None else self.for_id(queryset, value)

    def for_id(self, queryset: QuerySet, value: int) -> QuerySet:
        """The rows the id selects: by default those whose ``parameter_name`` field is it."""
        return queryset.filter(**{self.parameter_name: value})
