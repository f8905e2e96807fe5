"""Background re-derives (ADR 0046): steward input, kept by ``manage.py rederive``.

One row per request (selected events or everything since a time). The task that runs it
takes the row's id and writes its progress here, so PostgreSQL is the only store: the
progress page, the list of recent re-derives and the admin log all read this table.
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models.functions import Now


class RederiveState(models.TextChoices):
    QUEUED = "queued", "queued"
    NOT_QUEUED = "not_queued", "not queued (broker unavailable)"
    RUNNING = "running", "running"
    RETRYING = "retrying", "retrying"
    DONE = "done", "done"
    FAILED = "failed", "failed"


FINISHED_STATES = (RederiveState.DONE, RederiveState.FAILED)


class RederiveJob(models.Model):
    """Re-derive ``event_ids`` (at most 10,000), or every event from ``since`` on."""

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_at = models.DateTimeField(db_default=Now(), editable=False)
    description = models.CharField(max_length=200)
    reason = models.CharField(max_length=200, blank=True, default="")
    event_ids = ArrayField(models.BigIntegerField(), null=True)
    since = models.DateTimeField(null=True)
    state = models.CharField(
        max_length=16, choices=RederiveState.choices, default=RederiveState.QUEUED
    )
    total = models.IntegerField(null=True)  # None: "everything since", unknown up front
    claimed = models.IntegerField(default=0)
    derived = models.IntegerField(default=0)
    failed = models.IntegerField(default=0)
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)

    kept_by_rederive = True  # the record of a steward's request, not derived

    class Meta:
        db_table = "catalog_rederive_job"
        ordering = ["-id"]  # newest first, by primary key

    def __str__(self) -> str:
        return f"re-derive #{self.pk}: {self.description}"

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES
