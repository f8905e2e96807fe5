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


# A job the broker never took is finished too: nothing will ever run it (the steward asks
# again), so its progress page stops refreshing and wait_for stops waiting.
FINISHED_STATES = (RederiveState.DONE, RederiveState.FAILED, RederiveState.NOT_QUEUED)


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


class RememberedKind(models.IntegerChoices):
    DATASET = 1, "dataset (by alias key_hash)"
    JOB = 2, "job (by key_hash)"
    RUN = 3, "run (by runId uuid bytes + job key_hash)"


class RememberedId(models.Model):
    """The id a dataset, job or run had before a full rederive emptied the catalog (ADR 0077).

    ``catalog.services.derive.rederive`` fills it from the catalog in the transaction that
    empties it and clears it once every event is derived again; derivation gives a row it
    inserts meanwhile the id remembered for its natural key, so the same identity keeps the
    same id (a bookmarked ``dataset:5``, a client's stored job id). Not emptied by the
    rederive itself, so a rederive that stops half way leaves the memory for the next one.
    """

    kind = models.SmallIntegerField(choices=RememberedKind.choices)
    # A dataset: the key_hash of one of its aliases; a job: its key_hash; a run: its
    # runId's 16 bytes followed by its job's key_hash.
    key = models.BinaryField(max_length=48)
    object_id = models.BigIntegerField()

    kept_by_rederive = True  # the memory a rederive reads while the derived tables are empty

    class Meta:
        db_table = "catalog_remembered_id"
        constraints = [
            models.UniqueConstraint(fields=["kind", "key"], name="catalog_remembered_id_key_uniq")
        ]
        indexes = [models.Index(fields=["kind", "object_id"], name="catalog_remembered_obj_idx")]

    def __str__(self) -> str:
        return f"{RememberedKind(self.kind).label} → {self.object_id}"
