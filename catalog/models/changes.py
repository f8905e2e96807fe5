"""Change records: what changed about a dataset, when, and which event showed it (ADR 0082).

Derived, like everything else, from the raw events: each distinct schema an alias was sent
with (``SchemaVersion``, by its first sighting) and each difference between an alias's
consecutive versions (``DatasetChange``: a column added, removed, or retyped). Keyed by
alias, which never merges, so a dataset merge needs no upkeep: a dataset's changes are
its aliases'. ``kind`` leaves room for other change events (a new upstream edge, a job
that started failing); ``event`` and ``run_id`` are the evidence each carries.
"""

from datetime import datetime

from django.db import models

from catalog.models.fields import covered_fk
from catalog.models.identity import DatasetAlias


class ChangeKind(models.TextChoices):
    COLUMN_ADDED = "column_added", "column added"
    COLUMN_REMOVED = "column_removed", "column removed"
    TYPE_CHANGED = "type_changed", "column type changed"


# What can break a reader downstream: its column no longer there, or not the same type.
BREAKING_KINDS = (ChangeKind.COLUMN_REMOVED, ChangeKind.TYPE_CHANGED)


class SchemaVersion(models.Model):
    """A distinct schema an alias was sent with (its fields' names and types, in order),
    first seen when; the same schema sent again later is the same version."""

    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    # sha256 of ``fields``: a bounded key for an unbounded list.
    schema_hash = models.BinaryField(max_length=32, editable=False)
    fields = models.JSONField(default=list)  # [[name, type], ...] as flattened by the facet
    first_seen = models.DateTimeField()
    # The event that first showed it (the earliest eventTime, then the smallest digest);
    # NULL once retention removed it (ADR 0079): the version stays, its evidence is gone.
    first_event = models.ForeignKey(
        "ingest.Event", on_delete=models.SET_NULL, null=True, related_name="+", db_index=False
    )
    first_digest = models.BinaryField(max_length=32, editable=False)

    class Meta:
        db_table = "catalog_schema_version"
        constraints = [
            # One row per (alias, schema): upserted, moved earlier by an older sighting.
            models.UniqueConstraint(
                fields=["alias", "schema_hash"], name="catalog_schema_version_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"alias {self.alias_id} schema of {len(self.fields)} fields"


class DatasetChangeQuerySet(models.QuerySet["DatasetChange"]):
    def listed(
        self,
        since: datetime | None = None,
        kinds: list[str] | None = None,
        namespace: str | None = None,
        dataset_id: int | None = None,
    ) -> "DatasetChangeQuerySet":
        """Changes with their alias and dataset, filtered by time, kinds, the dataset's
        namespace and the dataset."""
        queryset = self.select_related("alias__dataset")
        if since is not None:
            queryset = queryset.filter(changed_at__gte=since)
        if kinds:
            queryset = queryset.filter(kind__in=kinds)
        if namespace is not None:
            queryset = queryset.filter(alias__dataset__namespace=namespace)
        if dataset_id is not None:
            queryset = queryset.filter(alias__dataset_id=dataset_id)
        return queryset


class DatasetChange(models.Model):
    """One change of a dataset (through one of its aliases), when it was first seen and
    the event (and run) that showed it."""

    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32, choices=ChangeKind.choices)
    column = models.TextField(blank=True, default="")
    old_type = models.TextField(blank=True, default="")
    new_type = models.TextField(blank=True, default="")
    changed_at = models.DateTimeField()
    # NULL once retention removed the event (ADR 0079).
    event = models.ForeignKey(
        "ingest.Event", on_delete=models.SET_NULL, null=True, related_name="+", db_index=False
    )
    run_id = models.TextField(blank=True, default="")  # the event's runId, if a run event's
    # The versions it lies between (their schema hashes) and sha256 of (kind, column): the
    # natural key, so re-deriving never records a change twice.
    before_hash = models.BinaryField(max_length=32, editable=False)
    after_hash = models.BinaryField(max_length=32, editable=False)
    key_hash = models.BinaryField(max_length=32, editable=False)

    objects = DatasetChangeQuerySet.as_manager()

    class Meta:
        db_table = "catalog_dataset_change"
        ordering = ["-changed_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["alias", "before_hash", "after_hash", "key_hash"],
                name="catalog_dataset_change_uniq",
            ),
        ]
        indexes = [
            # /changes newest first (and ?since=), its cursor order.
            models.Index(fields=["-changed_at", "-id"], name="catalog_change_time_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.column}"
