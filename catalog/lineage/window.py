"""The time window of a lineage read, as SQL: one spelling for every edge table.

Observed edges keep their first and last seen: ``as_of`` T keeps those first seen by T,
``since`` S those seen again at or after S. A declaration (static lineage) holds until it
is replaced, so only ``as_of`` filters it, by when it was declared (ADR 0061).

An observed edge that touches a retired dataset or runs through a retired job is not in
any window (ADR 0078): no graph path runs through what is retired, and retiring a job
unlinks the datasets it connected. Three index probes per edge
(catalog_retirement_active_uniq), in the same query.
"""

from datetime import datetime
from typing import Any

from catalog.models import RetiredKind, retired_sql

# Each observed edge table's dataset and job columns, by the alias every read gives it:
# ``e`` dataset → dataset edges, ``c`` column edges, ``je`` job edges.
_ENDS = {
    "e": (("source_id", "target_id"), "job_id"),
    "c": (("source_id", "target_id"), "job_id"),
    "je": (("dataset_id",), "job_id"),
}


def not_retired(alias: str) -> str:
    """``AND NOT ...``: the edge aliased ``alias`` touches nothing retired."""
    datasets, job = _ENDS[alias]
    ends = [retired_sql(RetiredKind.DATASET, f"{alias}.{column}") for column in datasets]
    ends.append(retired_sql(RetiredKind.JOB, f"{alias}.{job}"))
    return "".join(f" AND NOT {end}" for end in ends)


def observed(
    as_of: datetime | None, since: datetime | None, alias: str
) -> tuple[str, dict[str, Any]]:
    """``AND ...`` conditions on an observed edge table aliased ``alias``, and their values."""
    sql = not_retired(alias)
    values: dict[str, Any] = {}
    if as_of is not None:
        sql += f" AND {alias}.first_seen <= %(as_of)s"
        values["as_of"] = as_of
    if since is not None:
        sql += f" AND {alias}.last_seen >= %(since)s"
        values["since"] = since
    return sql, values


def declared(as_of: datetime | None, alias: str) -> tuple[str, dict[str, Any]]:
    """``AND ...`` on a declaration (``StaticLineage``) aliased ``alias``, and its value."""
    if as_of is None:
        return "", {}
    return f" AND {alias}.declared_at <= %(as_of)s", {"as_of": as_of}
