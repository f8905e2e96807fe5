"""Read-side query helpers for the raw event log and tokens."""

from django.db import models


class EventQuerySet(models.QuerySet):
    def pending(self) -> "EventQuerySet":
        return self.filter(derivation_status="pending")

    def failed(self) -> "EventQuerySet":
        return self.filter(derivation_status="failed")

    def for_run(self, run_id: str) -> "EventQuerySet":
        return self.filter(run_id=run_id)


class TokenQuerySet(models.QuerySet):
    def active(self) -> "TokenQuerySet":
        return self.filter(revoked_at__isnull=True)
