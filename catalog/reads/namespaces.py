"""Namespaces: the namespaces that hold a current job or dataset, with when each was active
(of what is not retired: a retired namespace is gone, ADR 0078)."""

from dataclasses import dataclass
from datetime import datetime

from catalog.models import Namespace as Summary


@dataclass(frozen=True)
class Namespace:
    name: str
    created: datetime | None  # first time anything in it was seen
    updated: datetime | None  # last time


def namespaces(namespace: str | None = None) -> list[Namespace]:
    """Every namespace (or the one named), by name: one statement over the per-namespace
    summary PostgreSQL keeps (ADR 0121), whatever the number of jobs and datasets."""
    return [Namespace(*row) for row in Summary.objects.spans(namespace)]
