"""The dataset detail's column lineage in one statement: the observed edges into it, the
declared ones, and how many observed edges target a field outside its schema (ADR 0135).

Why: these were three statements (``column_lineage.into`` read the observed and the
declared rows apart, ``outside_schema_count`` counted), each a round trip with its cursor,
its execution and its fetch: about a third of the detail's five statements. Here they are
one fixed text per kind of lineage asked (``?lineage=``), prepared on a kept connection as
before (``core.prepared.read_rows``). Each part is the read it replaces, word for word:
the same SELECT, WHERE, ORDER BY and LIMIT, so the same rows in the same order (a part's
row number over its own ORDER BY, which the outer ORDER BY follows), and what was Python's
stays Python's (``column_lineage.edges_of``: the descriptions redacted; ``with_currency``:
which observed edges are current, one more statement only when there are some).
"""

from functools import cache
from typing import Any

from catalog.lineage import column_lineage
from catalog.lineage.column_lineage import ColumnLineage
from core.prepared import read_rows

_WHERE = {
    False: " WHERE c.target_id = %(id)s::bigint",
    True: " WHERE ta.dataset_id = %(id)s::bigint",
}
# ColumnEdge's columns a row holds (all but ``current`` and ``static``, set in Python).
_WIDTH = len(column_lineage.ColumnEdge.__dataclass_fields__) - 2


def _part(number: int, static: bool) -> str:
    order = column_lineage.order_sql(static)  # " ORDER BY <keys> LIMIT %(limit)s"
    keys = order.removeprefix(" ORDER BY ").rsplit(" LIMIT ", 1)[0]
    columns = column_lineage.select_sql(static).strip().removeprefix("SELECT ")
    return (
        f"(SELECT {number} AS part, row_number() OVER (ORDER BY {keys}) AS ord,"
        f" NULL::bigint AS outside, {columns}{_WHERE[static]}{order})"
    )


@cache
def statement(observed: bool, static: bool) -> str:
    """The one statement of the kinds asked: parts 0 (the observed rows), 1 (the declared
    rows) and 2 (the count of every observed edge outside the schema, its edge columns
    empty), by part and each part's own order."""
    parts = [_part(0, False)] if observed else []
    if static:
        parts.append(_part(1, True))
    parts.append(
        "(SELECT 2, 0, COUNT(*)" + ", NULL" * _WIDTH + " FROM catalog_column_lineage_edge c"
        f" WHERE c.target_id = %(id)s::bigint AND {column_lineage.outside('c.target_id')})"
    )
    return "SELECT * FROM (" + " UNION ALL ".join(parts) + ") q ORDER BY 1, 2"


def into_dataset(
    dataset_id: int, limit: int, observed: bool = True, static: bool = True
) -> tuple[ColumnLineage, int]:
    """What ``column_lineage.into([dataset_id], limit, observed=..., static=...)`` answers,
    and ``column_lineage.outside_schema_count(dataset_id)``, in one statement."""
    return into_dataset_of(read_rows(*into_dataset_read(dataset_id, limit, observed, static)))


def into_dataset_read(
    dataset_id: int, limit: int, observed: bool = True, static: bool = True
) -> tuple[str, dict[str, Any]]:
    """``into_dataset``'s statement and its values: for a caller that sends it with another
    read in one round trip (the detail, ``core.pipelined_reads``, ADR 0140)."""
    return statement(observed, static), {"id": dataset_id, "limit": limit}


def into_dataset_of(rows: list[Any]) -> tuple[ColumnLineage, int]:
    """``into_dataset`` from its statement's rows (and, with observed edges, one more
    statement: their currency)."""
    count = 0
    found: dict[int, list[tuple]] = {0: [], 1: []}
    for row in rows:
        if row[0] == 2:
            count = int(row[2])
        else:
            found[row[0]].append(row[3:])
    answer = column_lineage.with_currency(column_lineage.edges_of(found[0], static=False), None)
    for edge in column_lineage.edges_of(found[1], static=True):
        edge.current = False  # no run produced it (as in ``into``)
        (answer.dependencies if edge.dataset_level else answer.edges).append(edge)
    return answer, count
