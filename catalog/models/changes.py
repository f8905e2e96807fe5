"""Change records: what changed about a dataset, when, and which event showed it (ADR 0082).

Derived, like everything else, from the raw events: each distinct schema an alias was sent
with (``SchemaVersion``, by its first sighting) and each difference between an alias's
consecutive versions (``DatasetChange``: a column added, removed, or retyped). Keyed by
alias, which never merges, so a dataset merge needs no upkeep: a dataset's changes are
its aliases'. The other kinds (ADR 0088: a new upstream edge, an edge no longer current,
a run that failed after a success, a dataset retired or restored) name a dataset, an edge
or a job instead; ``event``, ``run_id`` and ``previous_run_id`` are the evidence.
"""

from datetime import datetime
from typing import Any

from django.db import models
from django.db.models import Q

from catalog.models.fields import covered_fk
from catalog.models.identity import Dataset, DatasetAlias
from catalog.models.jobs_runs import Job


class ChangeKind(models.TextChoices):
    COLUMN_ADDED = "column_added", "column added"
    COLUMN_REMOVED = "column_removed", "column removed"
    TYPE_CHANGED = "type_changed", "column type changed"
    # Issue 40 item 3 (ADR 0088): lineage, runs and lifecycle.
    EDGE_ADDED = "edge_added", "new upstream edge"
    EDGE_STOPPED = "edge_stopped", "edge no longer current"
    RUN_FAILED = "run_failed", "run failed after success"
    DATASET_RETIRED = "dataset_retired", "dataset retired"
    DATASET_RESTORED = "dataset_restored", "dataset restored"


SCHEMA_KINDS = (ChangeKind.COLUMN_ADDED, ChangeKind.COLUMN_REMOVED, ChangeKind.TYPE_CHANGED)
EDGE_KINDS = (ChangeKind.EDGE_ADDED, ChangeKind.EDGE_STOPPED)
LIFECYCLE_KINDS = (ChangeKind.DATASET_RETIRED, ChangeKind.DATASET_RESTORED)


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


# A change's columns and those of what it names, as ``listed_rows`` reads them: the alias a
# schema change was seen under (and its dataset), the dataset, the edge's source, the job.
LISTED_COLUMNS = (
    "id",
    "kind",
    "alias_id",
    "alias__namespace",
    "alias__name",
    "alias__dataset_id",
    "dataset_id",
    "dataset__namespace",
    "dataset__name",
    "source_id",
    "source__namespace",
    "source__name",
    "job_id",
    "job__namespace",
    "job__name",
    "column",
    "old_type",
    "new_type",
    "changed_at",
    "event_id",
    "run_id",
    "previous_run_id",
    "detail",
)


class DatasetChangeQuerySet(models.QuerySet["DatasetChange"]):
    def listed(
        self,
        since: datetime | None = None,
        kinds: list[str] | None = None,
        namespace: str | None = None,
        dataset_id: int | None = None,
        job_id: int | None = None,
    ) -> "DatasetChangeQuerySet":
        """Changes with what they name, filtered by time, kinds, namespace (the dataset's,
        or the job's for a job's change), one dataset (through its aliases for a schema
        change, as target or source of an edge) and one job."""
        queryset = self.select_related("alias__dataset", "dataset", "source", "job")
        if since is not None:
            queryset = queryset.filter(changed_at__gte=since)
        if kinds:
            queryset = queryset.filter(kind__in=kinds)
        if namespace is not None:
            queryset = queryset.filter(
                Q(alias__dataset__namespace=namespace)
                | Q(dataset__namespace=namespace)
                | Q(dataset__isnull=True, alias__isnull=True, job__namespace=namespace)
            )
        if dataset_id is not None:
            queryset = queryset.filter(
                Q(alias__dataset_id=dataset_id) | Q(dataset_id=dataset_id) | Q(source_id=dataset_id)
            )
        if job_id is not None:
            queryset = queryset.filter(job_id=job_id)
        return queryset

    def listed_rows(self) -> "models.QuerySet[DatasetChange, dict[str, Any]]":
        """The changes as rows of ``LISTED_COLUMNS``: what /changes shows of a change and of
        what it names. Rows, not instances (ADR 0105): a change's instance with its four
        related ones (every column of each, their JSON fields parsed) was most of a page's
        CPU (docs/benchmarks.md, "/changes items built from rows")."""
        return self.values(*LISTED_COLUMNS)


# Which references each kind sets (ADR 0088): a schema change its alias; an edge change the
# edge's target (``dataset``), source and job; a failed run its job; a lifecycle change
# its dataset. The CHECK below holds every row to it.
_REFERENCES = Q(
    kind__in=SCHEMA_KINDS,
    alias__isnull=False,
    dataset__isnull=True,
    source__isnull=True,
    job__isnull=True,
) | Q(alias__isnull=True) & (
    Q(kind__in=EDGE_KINDS, dataset__isnull=False, source__isnull=False, job__isnull=False)
    | Q(kind=ChangeKind.RUN_FAILED, dataset__isnull=True, source__isnull=True, job__isnull=False)
    | Q(kind__in=LIFECYCLE_KINDS, dataset__isnull=False, source__isnull=True, job__isnull=True)
)


class DatasetChange(models.Model):
    """One change: of a dataset's schema (through one of its aliases), its upstream
    lineage, its lifecycle, or a job's runs; when it was first seen and the event (and
    run) that showed it. Written only by ``catalog.services.derivation.change_log``."""

    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, null=True, related_name="+")
    # The dataset of a lineage or lifecycle change (an edge's target); the edge's source.
    dataset = covered_fk(Dataset, on_delete=models.CASCADE, null=True, related_name="+")
    source = models.ForeignKey(Dataset, on_delete=models.CASCADE, null=True, related_name="+")
    job = covered_fk(Job, on_delete=models.CASCADE, null=True, related_name="+")
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
    # The run before it: the last successful run before a failure, the last run that
    # produced an edge no longer current (its runId).
    previous_run_id = models.TextField(blank=True, default="", db_default="")
    # Who and why, for a retirement or a restore (redacted when written, ADR 0056).
    detail = models.TextField(blank=True, default="", db_default="")
    # The versions it lies between (their schema hashes) and sha256 of (kind, column): the
    # natural key, so re-deriving never records a change twice. Other kinds have no alias
    # and empty hashes; their key_hash is sha256 of the kind and what they name.
    before_hash = models.BinaryField(max_length=32, editable=False)
    after_hash = models.BinaryField(max_length=32, editable=False)
    key_hash = models.BinaryField(max_length=32, editable=False)

    objects = DatasetChangeQuerySet.as_manager()

    class Meta:
        db_table = "catalog_dataset_change"
        ordering = ["-changed_at", "-id"]
        constraints = [
            # NULLS NOT DISTINCT: the kinds without an alias are unique by key_hash too.
            models.UniqueConstraint(
                fields=["alias", "before_hash", "after_hash", "key_hash"],
                name="catalog_dataset_change_uniq",
                nulls_distinct=False,
            ),
            models.CheckConstraint(condition=_REFERENCES, name="catalog_dataset_change_refs"),
        ]
        indexes = [
            # /changes newest first (and ?since=), its cursor order.
            models.Index(fields=["-changed_at", "-id"], name="catalog_change_time_idx"),
            # A dataset's and a job's changes (pages, ?dataset=, ?job=).
            models.Index(fields=["dataset", "-changed_at", "-id"], name="catalog_change_ds_idx"),
            models.Index(fields=["job", "-changed_at", "-id"], name="catalog_change_job_idx"),
            # Derivation re-reads the run changes a run supersedes or precedes.
            models.Index(
                fields=["run_id"],
                condition=Q(kind__in=[ChangeKind.EDGE_STOPPED, ChangeKind.RUN_FAILED]),
                name="catalog_change_run_idx",
            ),
            models.Index(
                fields=["previous_run_id"],
                condition=Q(kind__in=[ChangeKind.EDGE_STOPPED, ChangeKind.RUN_FAILED]),
                name="catalog_change_prev_run_idx",
            ),
        ]

    def __str__(self) -> str:
        if self.kind in SCHEMA_KINDS:
            return f"{self.get_kind_display()} {self.column}"
        return str(self.get_kind_display())
