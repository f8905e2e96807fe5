"""The time window of a lineage read, as SQL: one spelling for every edge table.

Observed edges keep their first and last seen: ``as_of`` T keeps those first seen by T,
``since`` S those seen again at or after S. A declaration (static lineage) holds until it
is replaced, so only ``as_of`` filters it, by when it was declared (ADR 0061).

An observed edge that touches a retired dataset or runs through a retired job is not in
any window (ADR 0078): no graph path runs through what is retired, and retiring a job
unlinks the datasets it connected. Three index probes per edge
(catalog_retirement_active_uniq), in the same query. A declaration is filtered the same
way: a retired job's declared inputs and outputs draw nothing, and a retired dataset is
no declared end.
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


def datasets_not_retired(*columns: str) -> str:
    """``AND NOT ...``: no dataset id in ``columns`` is retired."""
    return "".join(f" AND NOT {retired_sql(RetiredKind.DATASET, column)}" for column in columns)


def _none_retired(job: str, datasets: tuple[str, ...]) -> str:
    """``AND NOT ...``: neither the job id in column ``job`` nor a dataset id in one of
    ``datasets`` is retired."""
    return datasets_not_retired(*datasets) + f" AND NOT {retired_sql(RetiredKind.JOB, job)}"


def not_retired(alias: str) -> str:
    """``AND NOT ...``: the edge aliased ``alias`` touches nothing retired."""
    datasets, job = _ENDS[alias]
    return _none_retired(f"{alias}.{job}", tuple(f"{alias}.{column}" for column in datasets))


def observed(
    as_of: datetime | None, since: datetime | None, alias: str, retired: bool = True
) -> tuple[str, dict[str, Any]]:
    """``AND ...`` conditions on an observed edge table aliased ``alias``, and their values.

    ``retired`` False: the caller read in this request that nothing is retired (the graph's
    root check, ADR 0104), so the three probes per edge are left out."""
    sql = not_retired(alias) if retired else ""
    values: dict[str, Any] = {}
    if as_of is not None:
        sql += f" AND {alias}.first_seen <= %(as_of)s"
        values["as_of"] = as_of
    if since is not None:
        sql += f" AND {alias}.last_seen >= %(since)s"
        values["since"] = since
    return sql, values


def declared(
    as_of: datetime | None, alias: str, datasets: tuple[str, ...] = ()
) -> tuple[str, dict[str, Any]]:
    """``AND ...`` on a declaration (``StaticLineage``) aliased ``alias``, and its value:
    its job and the dataset id columns ``datasets`` (the declared ends the read draws) are
    not retired."""
    sql = _none_retired(f"{alias}.job_id", datasets)
    if as_of is None:
        return sql, {}
    return f"{sql} AND {alias}.declared_at <= %(as_of)s", {"as_of": as_of}
