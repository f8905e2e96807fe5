"""Read-side query helpers for the raw event log and tokens."""

from dataclasses import dataclass
from datetime import datetime

from django.db import connections, models

# Backlog counts stop here: counting a million pending rows is itself a full scan, and past
# this "very large" is all a reader needs.
BACKLOG_COUNT_CAP = 100_000

# One statement, each part walking a partial index (ingest_event_pending_idx,
# ingest_event_failed_idx) and capped, so it costs the same however big the log is.
_BACKLOG_SQL = """
SELECT
  (SELECT count(*) FROM (SELECT 1 FROM ingest_event
     WHERE derivation_status = 'pending' LIMIT %(cap)s) AS p),
  (SELECT count(*) FROM (SELECT 1 FROM ingest_event
     WHERE derivation_status = 'failed' LIMIT %(cap)s) AS f),
  o.id, o.received_at
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (SELECT id, received_at FROM ingest_event
     WHERE derivation_status = 'pending' ORDER BY id LIMIT 1) AS o ON true
"""


@dataclass(frozen=True)
class DerivationBacklog:
    """What is still to derive: counts capped at ``cap``, and the oldest pending event."""

    pending: int
    failed: int
    oldest_pending_id: int | None
    oldest_pending_received_at: datetime | None
    cap: int = BACKLOG_COUNT_CAP


class EventQuerySet(models.QuerySet):
    def derivation_backlog(self, cap: int = BACKLOG_COUNT_CAP) -> DerivationBacklog:
        """Backlog, failures and the oldest pending event of the whole log (one query)."""
        with connections[self.db].cursor() as cursor:
            cursor.execute(_BACKLOG_SQL, {"cap": cap})
            pending, failed, oldest_id, oldest_at = cursor.fetchone()
        return DerivationBacklog(pending, failed, oldest_id, oldest_at, cap)


class TokenQuerySet(models.QuerySet):
    def active(self) -> "TokenQuerySet":
        return self.filter(revoked_at__isnull=True)
