"""The catalog derived from the raw event log (see docs/derivation.md).

Everything but steward input (``AliasRule``, ``RederiveJob``) is derived from
``ingest.Event`` and rebuilt by ``manage.py rederive``. Natural keys are unique constraints
on bounded columns: names of unbounded length are keyed by a sha256 (``key_hash``).

Facts (``RunDataset``, ``ColumnLineageFact``, ``JobDataset``, ``EventDataset``) point at
``DatasetAlias`` rows, which never merge, so a dataset merge only moves aliases and
recomputes the aggregates (``LineageEdge``, ``ColumnLineageEdge``, ``DatasetField``).
"""

from django.contrib.postgres.indexes import HashIndex
from django.db import models
from django.db.models import F
from django.db.models.functions import MD5, Left

from catalog.alias_rule import AliasRule as AliasRule  # defined apart, same app
from catalog.alias_rule import AliasRuleAction as AliasRuleAction
from catalog.fields import covered_fk
from catalog.querysets import (
    AliasQuerySet,
    DatasetQuerySet,
    JobQuerySet,
    RunQuerySet,
)
from catalog.rederive_job import RederiveJob as RederiveJob  # defined apart, same app
from catalog.rederive_job import RederiveState as RederiveState
from ingest.models import DigestIndexedText


class RunState(models.TextChoices):
    """OpenLineage event types as run states; see ADR 0021 for how one is chosen."""

    START = "START", "Started"
    RUNNING = "RUNNING", "Running"
    COMPLETE = "COMPLETE", "Completed"
    FAIL = "FAIL", "Failed"
    ABORT = "ABORT", "Aborted"
    OTHER = "OTHER", "Other"
    # A run known only from another run's parent facet.
    UNKNOWN = "UNKNOWN", "Unknown (placeholder)"


TERMINAL_STATES = frozenset({RunState.COMPLETE, RunState.FAIL, RunState.ABORT})


# How Marquez orders its lists (its JobDao and DatasetDao): jobs by last update, newest
# first; datasets by name. Each matches an index below.
JOBS_BY_UPDATE = (F("last_seen").desc(nulls_last=True), F("id").desc())
DATASETS_BY_NAME = (Left("name", 200), F("name"), F("id"))


class Job(models.Model):
    """A job, keyed by (namespace, name)."""

    namespace = DigestIndexedText()
    name = models.TextField()
    # sha256(namespace + "\0" + name): the natural key (names have no length limit).
    key_hash = models.BinaryField(max_length=32, editable=False)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    # True until one of the job's own events (not a child's parent facet) is derived.
    is_placeholder = models.BooleanField(default=True)
    # Latest value of each job facet (sql, sourceCode, jobType, ownership, documentation, ...).
    facets = models.JSONField(default=dict, blank=True)
    # Per facet key: [eventTime ISO, event digest hex] of the event that gave the value.
    facet_versions = models.JSONField(default=dict, blank=True, editable=False)
    processing_type = models.CharField(max_length=16, blank=True, default="")  # BATCH/STREAMING
    job_type = models.CharField(max_length=64, blank=True, default="")  # e.g. DAG, TASK, JOB
    integration = models.CharField(max_length=64, blank=True, default="")  # e.g. SPARK
    description = models.TextField(blank=True, default="")
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = JobQuerySet.as_manager()

    class Meta:
        db_table = "catalog_job"
        ordering = ["namespace", "name"]
        constraints = [
            # Natural key; derivation upserts with ON CONFLICT (key_hash).
            models.UniqueConstraint(fields=["key_hash"], name="catalog_job_key_uniq"),
        ]
        indexes = [
            # Jobs of a namespace (API filter); btree on md5: unbounded text, shared values.
            models.Index(MD5("namespace"), name="catalog_job_namespace_md5"),
            # Recently active jobs (API "seen since", default ordering of dashboards).
            models.Index(fields=["last_seen", "id"], name="catalog_job_last_seen_idx"),
            # Marquez's job lists: last update first, never-seen jobs last (JOBS_BY_UPDATE).
            models.Index(
                F("last_seen").desc(nulls_last=True), F("id").desc(), name="catalog_job_update_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class Run(models.Model):
    """One run of a job, keyed by its runId (UUID; other strings are mapped by uuid5) and
    its job: two jobs that send the same runId keep a run each (ADR 0028)."""

    run_uuid = models.UUIDField()
    # The runId as producers sent it (differs from run_uuid when it was not a UUID).
    run_id_text = models.TextField()
    # Indexed by catalog_run_job_started_idx (job first).
    job = covered_fk(Job, on_delete=models.CASCADE, related_name="runs")
    # Indexed by catalog_run_parent_idx (non-null only, which is all a lookup needs).
    parent_run = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="child_runs",
        db_index=False,
    )
    is_placeholder = models.BooleanField(default=True)
    state = models.CharField(max_length=8, choices=RunState.choices, default=RunState.UNKNOWN)
    # eventTime of the event that decided ``state``.
    state_time = models.DateTimeField(null=True, blank=True)
    # Internal: [terminal 0/1, eventTime ISO, type rank, digest hex] of the deciding event.
    state_version = models.JSONField(default=list, blank=True, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    duration = models.DurationField(null=True, blank=True)
    nominal_start_time = models.DateTimeField(null=True, blank=True)
    nominal_end_time = models.DateTimeField(null=True, blank=True)
    error_message = models.TextField(blank=True, default="")
    is_streaming = models.BooleanField(default=False)
    # Latest eventTime of any of the run's events (for streaming runs: the last heartbeat).
    last_event_time = models.DateTimeField(null=True, blank=True)
    first_event_time = models.DateTimeField(null=True, blank=True)
    # Earliest eventTime of a START event (started_at falls back to first_event_time).
    first_start_time = models.DateTimeField(null=True, blank=True)
    facets = models.JSONField(default=dict, blank=True)
    facet_versions = models.JSONField(default=dict, blank=True, editable=False)
    # Internal: version of the event that decided ``job`` (the run's own latest event).
    job_version = models.JSONField(default=list, blank=True, editable=False)
    # Another job's own events carry the same runId (a producer's mistake; ADR 0028).
    shares_run_id = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        db_table = "catalog_run"
        ordering = ["-started_at", "-id"]
        constraints = [
            # Natural key (also serves lookups by runId); derivation upserts on it.
            models.UniqueConstraint(fields=["run_uuid", "job"], name="catalog_run_uuid_job_uniq"),
        ]
        indexes = [
            # Admin filter and metric: runs whose runId another job also sent.
            models.Index(
                fields=["run_uuid"],
                name="catalog_run_shared_idx",
                condition=models.Q(shares_run_id=True),
            ),
            # Runs of a job by start, newest first (job detail, latest run).
            models.Index(fields=["job", "-started_at", "-id"], name="catalog_run_job_started_idx"),
            # Run history of a job in its cursor's order (jobs/{id}/runs, /runs?job_id=):
            # without it a job whose runs are old is found by walking every newer run.
            models.Index(fields=["job", "-id"], name="catalog_run_job_id_idx"),
            # Runs list filtered by state and ordered by start (API /runs?state=).
            models.Index(fields=["state", "-started_at"], name="catalog_run_state_idx"),
            # Child runs of a parent run (run detail).
            models.Index(
                fields=["parent_run"],
                name="catalog_run_parent_idx",
                condition=models.Q(parent_run__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_uuid} ({self.state})"


class Dataset(models.Model):
    """A dataset with a stable id; every name it was ever called is a ``DatasetAlias``."""

    # The display name: the alias with the smallest (display_rank, namespace, name), which
    # prefers a pinned name, a TABLE symlink, a catalog over a storage location
    # (catalog.display_names). Also the merge survivor's key.
    namespace = DigestIndexedText()
    name = models.TextField()
    display_rank = models.SmallIntegerField(default=3, editable=False)
    facets = models.JSONField(default=dict, blank=True)
    facet_versions = models.JSONField(default=dict, blank=True, editable=False)
    description = models.TextField(blank=True, default="")
    # From the latest lifecycleStateChange facet (CREATE, ALTER, DROP, RENAME, OVERWRITE, ...).
    lifecycle_state = models.CharField(max_length=16, blank=True, default="")
    lifecycle_changed_at = models.DateTimeField(null=True, blank=True)
    is_dropped = models.BooleanField(default=False)
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DatasetQuerySet.as_manager()

    class Meta:
        db_table = "catalog_dataset"
        ordering = ["namespace", "name", "id"]
        indexes = [
            # Datasets of a namespace (API filter); btree on md5: unbounded text, shared.
            models.Index(MD5("namespace"), name="catalog_dataset_ns_md5"),
            # Recently seen datasets (API "seen since").
            models.Index(fields=["last_seen", "id"], name="catalog_dataset_seen_idx"),
            # Marquez's dataset lists: a namespace's datasets by name (DATASETS_BY_NAME). The
            # name is cut to what a btree entry holds; a tie is sorted on the full name.
            models.Index(
                MD5("namespace"), Left("name", 200), F("id"), name="catalog_dataset_ns_name_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class AliasReason(models.TextChoices):
    EVENT = "event", "Named in an event"
    SYMLINK = "symlink", "symlinks facet"
    RENAME = "rename", "lifecycleStateChange RENAME previousIdentifier"
    RULE = "rule", "Alias rule"
    EDGE = "edge", "Edge API table name"


class DatasetAlias(models.Model):
    """One (namespace, name), normalised, and the dataset it currently belongs to."""

    namespace = models.TextField()
    name = models.TextField()
    # sha256(namespace + "\0" + name) of the normalised name: the lookup key.
    key_hash = models.BinaryField(max_length=32, editable=False)
    dataset = covered_fk(Dataset, null=True, on_delete=models.SET_NULL, related_name="aliases")
    # Why the alias exists: the first (by eventTime, then digest) reason that named it.
    reason = models.CharField(max_length=8, choices=AliasReason.choices)
    reason_event = models.ForeignKey(
        "ingest.Event", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason_rule = models.ForeignKey(
        "catalog.AliasRule", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Free text: the facet path, the symlink's other name, the rule name.
    reason_detail = models.TextField(blank=True, default="")
    # Internal: [reason rank, eventTime ISO, digest hex] of the reason kept.
    reason_version = models.JSONField(default=list, blank=True, editable=False)
    # Named as a symlinks identifier of type TABLE (the logical name; preferred as title).
    is_table_name = models.BooleanField(default=False)
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)

    objects = AliasQuerySet.as_manager()

    class Meta:
        db_table = "catalog_dataset_alias"
        ordering = ["namespace", "name"]
        verbose_name_plural = "dataset aliases"
        constraints = [
            # Lookup key (datasets/lookup) and the upsert target of derivation.
            models.UniqueConstraint(fields=["key_hash"], name="catalog_alias_key_uniq"),
        ]
        indexes = [
            # Aliases of a dataset (dataset detail, merges repoint them).
            models.Index(fields=["dataset"], name="catalog_alias_dataset_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class AliasLink(models.Model):
    """An equivalence between two aliases (undirected: stored with alias_a.id < alias_b.id)."""

    alias_a = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    alias_b = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=8, choices=AliasReason.choices)
    reason_event = models.ForeignKey(
        "ingest.Event", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason_rule = models.ForeignKey(
        "catalog.AliasRule", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "catalog_alias_link"
        constraints = [
            # One row per pair; upserted with ON CONFLICT DO NOTHING.
            models.UniqueConstraint(fields=["alias_a", "alias_b"], name="catalog_alias_link_uniq"),
        ]
        indexes = [
            # Links of an alias from its second side (the unique index covers alias_a).
            models.Index(fields=["alias_b"], name="catalog_alias_link_b_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.alias_a_id} ≡ {self.alias_b_id} ({self.reason})"


class Direction(models.TextChoices):
    INPUT = "input", "Input"
    OUTPUT = "output", "Output"


class RunDataset(models.Model):
    """A dataset read or written by a run, accumulated over all the run's events."""

    run = covered_fk(Run, on_delete=models.CASCADE, related_name="datasets")
    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    direction = models.CharField(max_length=6, choices=Direction.choices)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    # How the run named the dataset: "" in its inputs/outputs, "column_lineage" only in an
    # output's columnLineage (ADR 0060). Upserted with LEAST: a declaration wins.
    via = models.CharField(max_length=16, blank=True, default="", db_default="")

    class Meta:
        db_table = "catalog_run_dataset"
        constraints = [
            # One row per (run, alias, direction); upserted with LEAST/GREATEST times.
            models.UniqueConstraint(
                fields=["run", "alias", "direction"], name="catalog_run_dataset_uniq"
            ),
        ]
        indexes = [
            # Runs that read/wrote an alias (merges recompute their edges; dataset detail).
            models.Index(fields=["alias", "direction"], name="catalog_run_ds_alias_idx"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.direction} alias {self.alias_id}"


class JobDataset(models.Model):
    """A dataset a job declares (JobEvent, static lineage) or its runs touched."""

    job = covered_fk(Job, on_delete=models.CASCADE, related_name="datasets")
    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    direction = models.CharField(max_length=6, choices=Direction.choices)
    declared = models.BooleanField(default=False)  # True when a JobEvent declared it
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        db_table = "catalog_job_dataset"
        constraints = [
            # One row per (job, alias, direction); upserted.
            models.UniqueConstraint(
                fields=["job", "alias", "direction"], name="catalog_job_dataset_uniq"
            ),
        ]
        indexes = [
            # Jobs that read/write a dataset (dataset detail: producing jobs).
            models.Index(fields=["alias", "direction"], name="catalog_job_ds_alias_idx"),
        ]

    def __str__(self) -> str:
        return f"job {self.job_id} {self.direction} alias {self.alias_id}"


class LineageEdge(models.Model):
    """dataset → dataset through a job, aggregated over every run that produced it."""

    source = covered_fk(Dataset, on_delete=models.CASCADE, related_name="out_edges")
    target = covered_fk(Dataset, on_delete=models.CASCADE, related_name="in_edges")
    job = covered_fk(Job, on_delete=models.CASCADE, related_name="edges")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    last_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run_count = models.IntegerField(default=0)
    completed_run_count = models.IntegerField(default=0, db_default=0)  # COMPLETE runs (ADR 0069)
    # From the edge API (``lineage_type``, ``pipeline``) of the last run; "" for OpenLineage.
    lineage_type = models.CharField(max_length=100, blank=True, default="")
    pipeline = models.TextField(blank=True, default="")

    class Meta:
        db_table = "catalog_lineage_edge"
        constraints = [
            # Natural key; edges are recomputed for the touched keys with ON CONFLICT.
            models.UniqueConstraint(
                fields=["source", "target", "job"], name="catalog_lineage_edge_uniq"
            ),
        ]
        indexes = [
            # Upstream traversal: edges into a dataset.
            models.Index(fields=["target", "last_seen"], name="catalog_edge_target_idx"),
            # Jobs' edges (job node in the graph, job detail). The admin's job page lists
            # them newest first: in index order, not by sorting every edge of a job (a
            # planted job with 360,000 edges took 1.3 s a page, ADR 0057).
            models.Index(fields=["job", "last_seen", "id"], name="catalog_edge_job_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} → {self.target_id} via job {self.job_id}"


class LineageEdgeRun(models.Model):
    """One run's contribution to an edge: the edge history (graph as of a time, diffs)."""

    edge = covered_fk(LineageEdge, on_delete=models.CASCADE, related_name="runs")
    run = covered_fk(Run, on_delete=models.CASCADE, related_name="edge_runs")
    # When both ends were first / last named by the run's events.
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    completed = models.BooleanField(default=False, db_default=False)  # run COMPLETE (ADR 0069)

    class Meta:
        db_table = "catalog_lineage_edge_run"
        constraints = [
            # One row per (edge, run); the edge's run_count is the number of rows. Its
            # times ride in the index so the graph as of T reads an edge's history from
            # the index alone: the rows of one edge lie one per heap page (ADR 0050).
            models.UniqueConstraint(
                fields=["edge", "run"],
                include=["first_seen", "last_seen"],
                name="catalog_edge_run_uniq",
            ),
        ]
        indexes = [
            # Edges produced by a run (recomputed when the run gets new events).
            models.Index(fields=["run"], name="catalog_edge_run_run_idx"),
        ]

    def __str__(self) -> str:
        return f"edge {self.edge_id} in run {self.run_id}"


class ColumnLineageFact(models.Model):
    """One columnLineage entry seen in a run's output facets (per output alias and field)."""

    run = covered_fk(Run, on_delete=models.CASCADE, related_name="+")
    target_alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    target_field = models.TextField()
    source_alias = models.ForeignKey(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    source_field = models.TextField()
    transformation_type = models.CharField(max_length=32, blank=True, default="")
    transformation_subtype = models.CharField(max_length=64, blank=True, default="")
    transformation_description = models.TextField(blank=True, default="")
    masking = models.BooleanField(default=False)
    # The columnLineage facet's dataset-level dependency (its ``dataset`` list: a field that
    # filters, joins, groups, sorts or windows the whole output); target_field is "".
    dataset_level = models.BooleanField(default=False, db_default=False)
    # The producer's older field-level form (transformationType/Description on the output
    # field), kept beside the per-input transformation (ADR 0060).
    field_transformation_type = models.CharField(
        max_length=32, blank=True, default="", db_default=""
    )
    field_transformation_description = models.TextField(blank=True, default="", db_default="")
    # sha256 of the text columns above: bounded key for the text.
    key_hash = models.BinaryField(max_length=32, editable=False)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        db_table = "catalog_column_lineage_fact"
        constraints = [
            # One row per run, alias pair and field pair + transformation; upserted.
            models.UniqueConstraint(
                fields=["run", "target_alias", "source_alias", "key_hash"],
                name="catalog_column_fact_uniq",
            ),
        ]
        indexes = [
            # Facts about an alias (merges recompute the column edges of its runs).
            models.Index(fields=["target_alias"], name="catalog_colfact_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_field} → {self.target_field} (run {self.run_id})"


class ColumnLineageEdge(models.Model):
    """source dataset.field → target dataset.field through a job, aggregated over runs."""

    source = covered_fk(Dataset, on_delete=models.CASCADE, related_name="+")
    source_field = models.TextField()
    target = covered_fk(Dataset, on_delete=models.CASCADE, related_name="+")
    target_field = models.TextField()
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+")
    transformation_type = models.CharField(max_length=32, blank=True, default="")
    transformation_subtype = models.CharField(max_length=64, blank=True, default="")
    transformation_description = models.TextField(blank=True, default="")
    masking = models.BooleanField(default=False)
    dataset_level = models.BooleanField(
        default=False, db_default=False
    )  # a dataset-level dependency
    field_transformation_type = models.CharField(
        max_length=32, blank=True, default="", db_default=""
    )
    field_transformation_description = models.TextField(blank=True, default="", db_default="")
    key_hash = models.BinaryField(max_length=32, editable=False)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    last_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run_count = models.IntegerField(default=0)

    class Meta:
        db_table = "catalog_column_lineage_edge"
        constraints = [
            # Natural key (fields hashed into key_hash with the transformation).
            models.UniqueConstraint(
                fields=["target", "source", "job", "key_hash"], name="catalog_column_edge_uniq"
            ),
        ]
        indexes = [
            # Downstream column traversal: edges out of a dataset.
            models.Index(fields=["source"], name="catalog_coledge_source_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id}.{self.source_field} → {self.target_id}.{self.target_field}"


class DatasetField(models.Model):
    """A field of a dataset's current schema (nested fields flattened as a.b.c)."""

    dataset = covered_fk(Dataset, on_delete=models.CASCADE, related_name="fields")
    ordinal = models.IntegerField()
    name = models.TextField()
    type = models.TextField(blank=True, default="")
    description = models.TextField(blank=True, default="")

    class Meta:
        db_table = "catalog_dataset_field"
        ordering = ["dataset", "ordinal"]
        constraints = [
            # Fields of a dataset in schema order; replaced as a whole when the schema changes.
            models.UniqueConstraint(
                fields=["dataset", "ordinal"], name="catalog_dataset_field_uniq"
            ),
        ]
        indexes = [
            # Search by column name (equality; hash because names are unbounded).
            HashIndex(fields=["name"], name="catalog_field_name_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.type}"


class EventDatasetRole(models.TextChoices):
    INPUT = "input", "Input"
    OUTPUT = "output", "Output"
    DATASET = "dataset", "DatasetEvent subject"
    SYMLINK = "symlink", "Symlink"


class EventDataset(models.Model):
    """Which events named which alias: "the events of a dataset" (API /events?dataset=)."""

    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    event = covered_fk("ingest.Event", on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=8, choices=EventDatasetRole.choices)

    class Meta:
        db_table = "catalog_event_dataset"
        constraints = [
            # One row per (alias, event, role); also serves "events of an alias" by prefix.
            models.UniqueConstraint(
                fields=["alias", "event", "role"], name="catalog_event_dataset_uniq"
            ),
        ]
        indexes = [
            # Rederive --since deletes the links of re-derived events.
            models.Index(fields=["event"], name="catalog_event_ds_event_idx"),
        ]

    def __str__(self) -> str:
        return f"event {self.event_id} {self.role} alias {self.alias_id}"


# The job edges, title pins (issue 12) and metadata records live in catalog.models_extra
# (this module stays under 600 lines); importing them here registers them with the app.
from catalog.models_extra import (  # noqa: E402, F401
    DisplayNamePin,
    JobLineageEdge,
    JobLineageEdgeRun,
    MetadataRecord,
)

# Static (design-time) lineage and run facts (issue 26, ADR 0061).
from catalog.models_run_facts import RunDatasetFacet  # noqa: E402, F401
from catalog.models_static import (  # noqa: E402, F401
    StaticColumnLineage,
    StaticDataset,
    StaticLineage,
)
