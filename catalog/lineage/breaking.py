"""Which schema changes break downstream column lineage (ADR 0082).

A removed or retyped column breaks what reads it: the column edges out of it (the one
column-lineage model, ``catalog.lineage.column_lineage``), each said current or stale
(``catalog.lineage.currency``). Read, not stored: whether a reader is still current changes
with every run of its job, so it is decided when asked, for a page of changes at a time.
"""

from dataclasses import dataclass
from typing import Any

from catalog.lineage import column_lineage, currency
from catalog.models import BREAKING_KINDS, DatasetChange

# Downstream column edges named per change; more are counted as left out.
READERS_PER_CHANGE = 20


@dataclass
class Breaks:
    readers: list[dict[str, Any]]  # the downstream columns and jobs, current ones first
    left_out: bool  # there may be more readers than listed (READERS_PER_CHANGE)


def breaks(changes: list[DatasetChange]) -> dict[int, Breaks]:
    """For each breaking change of ``changes`` (their aliases' datasets read already) the
    column edges that read the column: one query for the edges, one for their currency."""
    wanted = {
        (change.alias.dataset_id, change.column): change
        for change in changes
        if change.kind in BREAKING_KINDS and change.alias.dataset_id is not None
    }
    if not wanted:
        return {}
    limit = READERS_PER_CHANGE * len(wanted) + 1
    edges = column_lineage.step(set(wanted), upstream=False, limit=limit)
    capped = len(edges) >= limit  # some change's readers may be cut: every list says so
    current = currency.current_column_edges({edge.id: edge.job_id for edge in edges})
    by_column: dict[tuple[int, str], list[column_lineage.ColumnEdge]] = {}
    for edge in edges:
        by_column.setdefault((edge.source_id, edge.source_field), []).append(edge)
    answer: dict[int, Breaks] = {}
    for change in changes:
        if change.kind not in BREAKING_KINDS:  # only these have an alias and a column
            continue
        found = by_column.get((change.alias.dataset_id or 0, change.column), [])
        if not found:
            continue
        found.sort(key=lambda edge: (edge.id not in current, edge.target_id, edge.target_field))
        answer[change.pk] = Breaks(
            [
                {
                    "dataset": f"dataset:{edge.target_id}",
                    "namespace": edge.target_namespace,
                    "name": edge.target_name,
                    "field": edge.target_field,
                    "job": f"job:{edge.job_id}",
                    "current": edge.id in current,
                }
                for edge in found[:READERS_PER_CHANGE]
            ],
            capped or len(found) > READERS_PER_CHANGE,
        )
    return answer
