"""Which schema changes break downstream column lineage (ADR 0082).

A removed or retyped column breaks what reads it: the column edges out of it (the one
column-lineage model, ``catalog.lineage.column_lineage``), each said current or stale
(``catalog.lineage.currency``). Read, not stored: whether a reader is still current changes
with every run of its job, so it is decided when asked, for a page of changes at a time.
"""

from collections.abc import Sequence
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


# What a change is to ``breaks_of``: its id, kind, its alias's dataset (None for the kinds
# without an alias) and its column. Rows as /changes reads them give it without instances.
Changed = tuple[int, str, int | None, str]


def breaks(changes: list[DatasetChange]) -> dict[int, Breaks]:
    """For each breaking change of ``changes`` (their aliases' datasets read already) the
    column edges that read the column: one query for the edges, one for their currency."""
    return breaks_of(
        [
            (
                change.pk,
                change.kind,
                # Only these have an alias; the others' is never read (no query for it).
                change.alias.dataset_id if change.kind in BREAKING_KINDS else None,
                change.column,
            )
            for change in changes
        ]
    )


def breaks_of(changes: Sequence[Changed]) -> dict[int, Breaks]:
    """``breaks`` of changes given as their ``Changed`` tuples."""
    wanted = {
        (dataset_id, column)
        for _, kind, dataset_id, column in changes
        if kind in BREAKING_KINDS and dataset_id is not None
    }
    if not wanted:
        return {}
    limit = READERS_PER_CHANGE * len(wanted) + 1
    edges = column_lineage.readers(set(wanted), limit)
    capped = len(edges) >= limit  # some change's readers may be cut: every list says so
    current = currency.current_column_edges({edge.id: edge.job_id for edge in edges})
    by_column: dict[tuple[int, str], list[column_lineage.Reader]] = {}
    for edge in edges:
        by_column.setdefault((edge.source_id, edge.source_field), []).append(edge)
    answer: dict[int, Breaks] = {}
    for change_id, kind, dataset_id, column in changes:
        if kind not in BREAKING_KINDS:  # only these have an alias and a column
            continue
        found = by_column.get((dataset_id or 0, column), [])
        if not found:
            continue
        found.sort(key=lambda edge: (edge.id not in current, edge.target_id, edge.target_field))
        answer[change_id] = Breaks(
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
