"""Runs that share their runId with another job's run (ADR 0028).

A run is identified by (runId, job), so two jobs sending one runId keep two runs; that is
a producer's mistake worth showing, not hiding. ``Run.shares_run_id`` is true on every own
(non-placeholder) run whose runId another own run also has. It is recomputed for every
runId a batch touches, under a transaction-scoped advisory lock per runId, so two batches
deriving the two jobs at once cannot both miss each other: the second waits for the first
to commit and then sees its run. The result is the same in any order and batching.
"""

import uuid

from django.db import connection

from catalog.services.derivation.locks import lock_run_uuids

_MARK = """
UPDATE catalog_run r SET shares_run_id = s.shared AND NOT r.is_placeholder
FROM (
    SELECT run_uuid, count(*) FILTER (WHERE NOT is_placeholder) > 1 AS shared
    FROM catalog_run WHERE run_uuid = ANY(%s::uuid[]) GROUP BY run_uuid
) s
WHERE r.run_uuid = ANY(%s::uuid[]) AND r.run_uuid = s.run_uuid
  AND r.shares_run_id IS DISTINCT FROM (s.shared AND NOT r.is_placeholder)
"""


def mark_shared_run_ids(run_uuids: list[uuid.UUID]) -> None:
    """Recompute ``shares_run_id`` for every run of ``run_uuids`` (sorted)."""
    if not run_uuids:
        return
    lock_run_uuids(run_uuids)  # already held by the batch: a no-op then
    with connection.cursor() as cursor:
        cursor.execute(_MARK, [run_uuids, run_uuids])
