"""Namespaces: the namespace columns of jobs and datasets, with when each was active (of
what is not retired: a retired namespace is gone, ADR 0078)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Max, Min

from catalog.models import Dataset, Job


@dataclass(frozen=True)
class Namespace:
    name: str
    created: datetime | None  # first time anything in it was seen
    updated: datetime | None  # last time


def namespaces(namespace: str | None = None) -> list[Namespace]:
    """Every namespace (or the one named), by name: one GROUP BY per table over the
    namespace columns (as /api/v1/namespaces, ADR 0030)."""
    merged: dict[str, dict[str, Any]] = {}
    for model in (Job, Dataset):
        rows = model.objects.current().order_by()
        if namespace is not None:
            rows = rows.filter(namespace=namespace)
        row: Any
        for row in rows.values("namespace").annotate(
            created=Min("first_seen"), updated=Max("last_seen")
        ):
            entry = merged.setdefault(
                row["namespace"], {"created": row["created"], "updated": row["updated"]}
            )
            for key, pick in (("created", min), ("updated", max)):
                values = [v for v in (entry[key], row[key]) if v is not None]
                entry[key] = pick(values) if values else None
    return [
        Namespace(name, merged[name]["created"], merged[name]["updated"]) for name in sorted(merged)
    ]
