"""Cursor positions of two columns, for a list whose order's first column ties.

DRF's cursor pagination keeps a position of one column and pages through rows that share it
with an offset, which it caps at 1,000 (``offset_cutoff``): past that cap ``next`` served
the same page again, forever. ``/changes`` and ``/metadata`` order by a time that ties (a
schema change of 1,600 columns is 1,600 changes at one ``changed_at``; a batch of metadata
records can share a timestamp), so their position is the time and the id after it
(``<time>|<id>``): every position is a row's own, no offset is ever needed, and the
statement still starts in the list's (time, id) index at the position. A position of the
time alone (a cursor served before) is still read as DRF reads it.
"""

from typing import Any

from django.db.models import Q

SEPARATOR = "|"


def split(position: str) -> tuple[str, str] | None:
    """A two-column position's parts, or None for a one-column position."""
    first, separator, second = position.rpartition(SEPARATOR)
    return (first, second) if separator else None


def joined(instance: Any, ordering: tuple[str, ...]) -> str:
    """The position of a row (a model instance or a dict) in a two-column order."""
    first, second = (_value(instance, field.lstrip("-")) for field in ordering[:2])
    return f"{first}{SEPARATOR}{second}"


def _value(instance: Any, name: str) -> Any:
    return instance[name] if isinstance(instance, dict) else getattr(instance, name)


class TiedOrder:
    """The list's queryset as DRF's ``CursorPagination.paginate_queryset`` uses it (an
    ``order_by``, one ``<first>__lt``/``__gt`` position filter, a slice), the position
    filter read as the two columns': ``(first, second) < (t, i)`` written as
    ``first <= t AND (first < t OR second < i)``, so PostgreSQL starts the scan at ``t``
    and passes over only the rows tied with it. Both columns run the same way."""

    def __init__(self, queryset: Any, ordering: tuple[str, ...]) -> None:
        if len({field.startswith("-") for field in ordering[:2]}) != 1:
            raise ValueError(f"{ordering}: both columns must run the same way")
        self.queryset = queryset
        self.ordering = ordering

    def order_by(self, *fields: str) -> "TiedOrder":
        return TiedOrder(self.queryset.order_by(*fields), self.ordering)

    def filter(self, **kwargs: Any) -> "TiedOrder":
        ((lookup, position),) = kwargs.items()
        parts = split(str(position))
        if parts is None:  # a one-column position: DRF's own filter
            return TiedOrder(self.queryset.filter(**kwargs), self.ordering)
        first_name, _, operator = lookup.rpartition("__")
        second_name = self.ordering[1].lstrip("-")
        first, second = parts
        after = Q(**{f"{first_name}__{operator}e": first}) & (
            Q(**{lookup: first}) | Q(**{f"{second_name}__{operator}": second})
        )
        return TiedOrder(self.queryset.filter(after), self.ordering)

    def __getitem__(self, key: slice) -> Any:
        return self.queryset[key]
