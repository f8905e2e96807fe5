"""Read-side query helpers for the raw event log and tokens."""

from dataclasses import dataclass
from datetime import datetime

from django.db import connections, models
from django.db.models import Q

from ingest import derivation_status

# Backlog counts stop here: counting a million pending rows is itself a full scan, and past
# this "very large" is all a reader needs.
BACKLOG_COUNT_CAP = 100_000


@dataclass(frozen=True)
class DerivationBacklog:
    """What is still to derive: counts capped at ``cap``, and the oldest pending event."""

    pending: int
    failed: int
    oldest_pending_id: int | None
    oldest_pending_received_at: datetime | None
    cap: int = BACKLOG_COUNT_CAP

    def lag_seconds(self, now: datetime) -> float | None:
        """How long the oldest pending event has waited; None when nothing is pending."""
        oldest = self.oldest_pending_received_at
        return None if oldest is None else max((now - oldest).total_seconds(), 0.0)


class EventQuerySet(models.QuerySet):
    def openlineage_export(
        self, since: datetime | None = None, until: datetime | None = None, namespace: str = ""
    ) -> "EventQuerySet":
        """OpenLineage events (run, dataset and job events) with eventTime in [since, until),
        of one namespace when given: the job's, or a DatasetEvent's dataset's."""
        from ingest.models import OPENLINEAGE_KINDS, EventKind

        queryset = self.filter(kind__in=OPENLINEAGE_KINDS, event_time__isnull=False)
        if since is not None:
            queryset = queryset.filter(event_time__gte=since)
        if until is not None:
            queryset = queryset.filter(event_time__lt=until)
        if namespace:
            queryset = queryset.filter(
                Q(job_namespace=namespace)
                | Q(kind=EventKind.DATASET, payload__dataset__namespace=namespace)
            )
        return queryset

    def derivation_backlog(self, cap: int = BACKLOG_COUNT_CAP) -> DerivationBacklog:
        """Backlog, failures and the oldest pending event of the whole log (one query)."""
        with connections[self.db].cursor() as cursor:
            cursor.execute(derivation_status.BACKLOG, {"cap": cap})
            pending, failed, oldest_id, oldest_at = cursor.fetchone()
        return DerivationBacklog(pending, failed, oldest_id, oldest_at, cap)


class TokenQuerySet(models.QuerySet):
    def active(self) -> "TokenQuerySet":
        return self.filter(revoked_at__isnull=True)
