"""The derivation-status protocol of ``ingest_event``: every statement that reads or moves it.

An event is stored ``pending``. A derivation batch claims pending events with
``SELECT ... FOR NO KEY UPDATE SKIP LOCKED`` inside its own transaction and marks each
``derived`` or ``failed`` (with the error) in that same transaction, so a killed worker
leaves its events pending for the sweep (ADR 0024). A re-derive sets events ``pending``
again. NO KEY UPDATE, not UPDATE: another batch's foreign-key check on an event (a change
record's evidence, ADR 0088) holds KEY SHARE on it, which FOR UPDATE SKIP LOCKED would
take as "claimed", leaving a retried batch's own event pending until the sweep; retention's
FOR UPDATE still excludes a claim.

Ingest owns the column; the catalog drives it through this module only (it knows the
catalog by a task name, never by an import), so the three values and the partial indexes
that serve them (``ingest_event_pending_idx``, ``ingest_event_failed_idx``) are spelled
in one place.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import models


class DerivationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DERIVED = "derived", "Derived"
    FAILED = "failed", "Failed"


PENDING = DerivationStatus.PENDING.value
DERIVED = DerivationStatus.DERIVED.value
FAILED = DerivationStatus.FAILED.value

# What a claim returns, in this order (the catalog's reader of a claimed row relies on it).
CLAIMED_COLUMNS = (
    "id, kind, event_type, event_time, run_id, job_namespace, job_name, payload, digest, "
    "facet_problems"
)
# Claim the pending ones among some ids (params: [ids]).
CLAIM_IDS = f"""
SELECT {CLAIMED_COLUMNS} FROM ingest_event
WHERE id = ANY(%s) AND derivation_status = '{PENDING}'
ORDER BY id FOR NO KEY UPDATE SKIP LOCKED
"""
# Claim the oldest pending events received more than some seconds ago (params: [seconds,
# limit]); uses ingest_event_pending_idx.
CLAIM_PENDING = f"""
SELECT {CLAIMED_COLUMNS} FROM ingest_event
WHERE derivation_status = '{PENDING}' AND received_at <= now() - make_interval(secs => %s)
ORDER BY id LIMIT %s FOR NO KEY UPDATE SKIP LOCKED
"""
# Mark claimed events (params: [ids]).
MARK_DERIVED = f"""
UPDATE ingest_event SET derivation_status = '{DERIVED}', derived_at = now(),
    derivation_error = NULL
WHERE id = ANY(%s)
"""
# Mark claimed events failed, each with its error (params: [ids, errors]).
MARK_FAILED = f"""
UPDATE ingest_event e
SET derivation_status = '{FAILED}', derived_at = now(), derivation_error = f.error
FROM unnest(%s::bigint[], %s::text[]) AS f(id, error) WHERE e.id = f.id
"""
_RESET = (
    f"UPDATE ingest_event SET derivation_status = '{PENDING}', derived_at = NULL, "
    f"derivation_error = NULL WHERE derivation_status <> '{PENDING}'"
)
# One statement, each part walking a partial index and capped (params: {"cap": n}), so it
# costs the same however big the log is.
BACKLOG = f"""
SELECT
  (SELECT count(*) FROM (SELECT 1 FROM ingest_event
     WHERE derivation_status = '{PENDING}' LIMIT %(cap)s) AS p),
  (SELECT count(*) FROM (SELECT 1 FROM ingest_event
     WHERE derivation_status = '{FAILED}' LIMIT %(cap)s) AS f),
  o.id, o.received_at
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (SELECT id, received_at FROM ingest_event
     WHERE derivation_status = '{PENDING}' ORDER BY id LIMIT 1) AS o ON true
"""
# The newest failures with their errors (params: [limit]); ingest_event_failed_idx.
RECENT_FAILURES = f"""
SELECT id, coalesce(job_name, kind), left(coalesce(derivation_error, ''), 200)
FROM ingest_event WHERE derivation_status = '{FAILED}' ORDER BY id DESC LIMIT %s
"""


def reset_ids(cursor: Any, event_ids: Sequence[int]) -> int:
    """Set the given events pending again (their derivation will run again)."""
    cursor.execute(_RESET + " AND id = ANY(%s)", [list(event_ids)])
    return int(cursor.rowcount)


def reset_selected(cursor: Any, select: str, params: Any) -> int:
    """Set pending again the events whose ids ``select`` returns: a SELECT of one ``id``
    column, or a data-modifying statement ``RETURNING id`` (it runs as the statement's
    WITH, so the ids never leave PostgreSQL)."""
    cursor.execute(f"WITH chosen AS ({select}) {_RESET} AND id IN (SELECT id FROM chosen)", params)
    return int(cursor.rowcount)


def reset_all(cursor: Any) -> int:
    """Set every event pending again (a full re-derive)."""
    cursor.execute(_RESET)
    return int(cursor.rowcount)


def reset_since(cursor: Any, since: datetime) -> int:
    """Set pending the events with eventTime >= ``since`` and every event of their runs."""
    cursor.execute(
        _RESET + " AND (event_time >= %s OR run_id IN (SELECT run_id FROM ingest_event "
        "WHERE event_time >= %s AND run_id IS NOT NULL))",
        [since, since],
    )
    return int(cursor.rowcount)
