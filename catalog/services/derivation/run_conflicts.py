"""Runs that share their runId with another job's run (ADR 0028).

A run is identified by (runId, job), so two jobs sending one runId keep two runs; that is
a producer's mistake worth showing, not hiding. ``Run.shares_run_id`` is true on every own
(non-placeholder) run whose runId another own run also has. It is recomputed for every
runId a batch touches, under a transaction-scoped advisory lock per runId, so two batches
deriving the two jobs at once cannot both miss each other: the second waits for the first
to commit and then sees its run. The result is the same in any order and batching.

A runId that is no UUID is keyed per job (uuid5 over the job and the text), so its runs
have a run_uuid each and are recomputed by their text instead, under the text's lock
(``locks.RUN_TEXT_LOCK``, ADR 0201): one UPDATE for all the texts of a batch, reading each
text's runs on catalog_run_text_idx ``(md5(run_id_text), id)``, writing only the rows whose
flag changes. Its cost grows with the text's runs, not with their pairs.
"""

import uuid

from django.db import connection, transaction

from catalog.services.derivation.locks import lock_run_texts, lock_run_uuids, try_lock_run_texts

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


# Shared: two own runs keep the text (LIMIT 2: the decision reads at most two of them),
# decided once a text (MATERIALIZED: inlined, it was decided again for each of its runs).
# The text is compared after md5, as the index holds it, so a long text is no problem.
_MARK_TEXTS = """
WITH s AS MATERIALIZED (
    SELECT t, (
        SELECT count(*) FROM (
            SELECT 1 FROM catalog_run o
            WHERE md5(o.run_id_text) = md5(t) AND o.run_id_text = t AND NOT o.is_placeholder
            LIMIT 2
        ) AS two
    ) > 1 AS shared
    FROM unnest(%s::text[]) AS t
)
UPDATE catalog_run r SET shares_run_id = s.shared AND NOT r.is_placeholder
FROM s
WHERE md5(r.run_id_text) = md5(s.t) AND r.run_id_text = s.t
  AND r.shares_run_id IS DISTINCT FROM (s.shared AND NOT r.is_placeholder)
"""


def mark_shared_run_texts(texts: list[str]) -> int:
    """Recompute ``shares_run_id`` for every run of the text runIds ``texts`` (sorted, none
    a UUID); returns the rows changed."""
    if not texts:
        return 0
    lock_run_texts(texts)  # already held by the batch: a no-op then
    with connection.cursor() as cursor:
        cursor.execute(_MARK_TEXTS, [texts])
        return cursor.rowcount


# The next ``batch`` runs by id, and the texts among them another job's own run keeps: a
# run whose run_uuid is its text (a UUID runId as sent) or that is flagged already (by an
# earlier span, or an earlier pass) is not looked up, so a store where no text runId is
# shared costs one read of the table, in spans, and a probe of catalog_run_text_idx per
# unflagged run of a text runId.
_SPAN = """
SELECT max(id), array_agg(DISTINCT run_id_text) FILTER (WHERE shared) FROM (
    SELECT r.id, r.run_id_text,
        CASE WHEN NOT r.is_placeholder AND NOT r.shares_run_id
            AND r.run_uuid::text <> lower(r.run_id_text)
        THEN EXISTS (
            SELECT 1 FROM catalog_run o
            WHERE md5(o.run_id_text) = md5(r.run_id_text) AND o.run_id_text = r.run_id_text
              AND o.run_uuid <> r.run_uuid AND NOT o.is_placeholder
        ) ELSE false END AS shared
    FROM catalog_run r WHERE r.id > %s ORDER BY r.id LIMIT %s
) AS span
"""


def mark_all_shared_run_texts(batch: int = 10_000) -> int:
    """Recompute ``shares_run_id`` of every text runId two jobs' own runs keep (the data
    migration of ADR 0201), reading the runs ``batch`` a transaction by id; returns
    the rows changed. Idempotent: run again (a migration interrupted), it changes nothing
    it changed before."""
    changed, after = 0, 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_SPAN, [after, batch])
            upto, shared = cursor.fetchone()
            if upto is None:
                return changed
            # A text a derivation batch holds is left to it: the batch derives a run of the
            # text and recomputes it before its commit. So this never waits for a batch.
            texts = try_lock_run_texts(sorted(shared or []))
            changed += mark_shared_run_texts(texts)
        after = upto
