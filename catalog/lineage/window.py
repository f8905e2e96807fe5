"""The time window of a lineage read, as SQL: one spelling for every edge table.

Observed edges keep their first and last seen: ``as_of`` T keeps those first seen by T,
``since`` S those seen again at or after S. A declaration (static lineage) holds until it
is replaced, so only ``as_of`` filters it, by when it was declared (ADR 0061).
"""

from datetime import datetime
from typing import Any


def observed(
    as_of: datetime | None, since: datetime | None, alias: str
) -> tuple[str, dict[str, Any]]:
    """``AND ...`` conditions on an observed edge table aliased ``alias``, and their values."""
    sql = ""
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
