"""Jobs and runs (ADR 0021, 0028), and the facts of what each reads and writes: a run's
datasets (``RunDataset``) and a job's (``JobDataset``), pointing at aliases, and what a run
reported about them (``RunDatasetFacet``, the run facts). Each model's queryset is here too.
"""

import uuid
from typing import Any

from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import BigIntegerField, F, OuterRef, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.functions import MD5

from catalog.models.fields import FACET_FIELDS, LABELLED, NamespacedQuerySet, covered_fk
from catalog.models.identity import DatasetAlias
from catalog.models.retirement import RetiredKind
from catalog.names import naming
from ingest.models import DigestIndexedText

# The first ``jobs_limit`` runs by id that keep a text runId as sent (``RunQuerySet.named``;
# parameters: the text twice, the limit, the text twice, the limit), read along
# catalog_run_text_idx ``(md5(run_id_text), id)`` in its order and no further (ADR 0202).
# With the text compared inside that LIMIT, PostgreSQL multiplied the md5's and the text's
# selectivities, expected a handful of rows and read all of a text's runs by a bitmap to
# sort them (1,000 for an Airflow runId 1,000 DAGs sent, to show 20). So the md5 alone
# decides the range and the text is compared on the rows it gave; only if another text with
# the same md5 is among them is the text compared inside the LIMIT, in a second read the
# first one gates (an InitPlan: not run otherwise), so the answer is exact. (A text that is
# a large part of all runs, a sixth, may be read along the primary key instead, filtering
# the md5: about 20 / that part rows.)
_FIRST_NAMED = """
WITH first AS MATERIALIZED (
    SELECT id, run_id_text = %s AS kept FROM catalog_run WHERE md5(run_id_text) = md5(%s)
    ORDER BY id LIMIT %s
)
SELECT id FROM first WHERE kept AND NOT EXISTS (SELECT FROM first WHERE NOT kept)
UNION ALL
(
    SELECT id FROM catalog_run WHERE md5(run_id_text) = md5(%s) AND run_id_text = %s
      AND EXISTS (SELECT FROM first WHERE NOT kept)
    ORDER BY id LIMIT %s
)
"""


class JobQuerySet(NamespacedQuerySet):
    retired_kind = RetiredKind.JOB

    def for_name(self, namespace: str, name: str) -> "JobQuerySet":
        return self.filter(key_hash=naming.job_key(namespace, name))

    def with_latest_run(self) -> "JobQuerySet":
        """Annotate the newest started run's ``latest_run_uuid``, ``_state``, ``_started``
        (three correlated subqueries per row, each on catalog_run_job_started_idx); a
        placeholder run (no start) only when the job has no started run (RUNS_BY_START)."""
        latest = Run.objects.filter(job=OuterRef("pk")).order_by(*RUNS_BY_START)
        return self.annotate(
            latest_run_uuid=Subquery(latest.values("run_uuid")[:1]),
            latest_run_state=Subquery(latest.values("state")[:1]),
            latest_run_started=Subquery(latest.values("started_at")[:1]),
        )

    def with_latest_run_state(self) -> "JobQuerySet":
        """Annotate ``latest_run_state`` unless it is already there (the state filter)."""
        if "latest_run_state" in self.query.annotations:
            return self
        latest = Run.objects.filter(job=OuterRef("pk")).order_by(*RUNS_BY_START)
        return self.annotate(latest_run_state=Subquery(latest.values("state")[:1]))


# The columns of a run list item (api.list_rows.run_item): nothing else is read.
RUN_LIST_COLUMNS = (
    "id",
    "run_uuid",
    "run_id_text",
    "job_id",
    "job__namespace",
    "job__name",
    "state",
    "state_time",
    "started_at",
    "ended_at",
    "duration",
    "nominal_start_time",
    "nominal_end_time",
    "parent_uuid",
    "error_message",
    "is_streaming",
    "is_placeholder",
    "tags",
    "shares_run_id",
    "first_event_time",
    "last_event_time",
    "lineage_edges_cut",
)


class RunQuerySet(models.QuerySet):
    def for_list(self) -> "RunQuerySet":
        """Runs with their job and parent runId, without any facet column or merge version
        (``with_parent_uuid``, what a list page reads)."""
        job_facets = [f"job__{name}" for name in FACET_FIELDS]
        return self.with_parent_uuid().defer(
            *FACET_FIELDS, *job_facets, "state_version", "job_version"
        )

    def list_rows(self) -> Any:
        """What a run list page shows, as dicts of ``RUN_LIST_COLUMNS`` (``id`` for the
        cursor, the job's names, the parent's runId): no model instance per row, whose
        construction was a third of a list page's CPU (ADR 0105)."""
        query = self if "parent_uuid" in self.query.annotations else self.with_parent_uuid()
        return query.values(*RUN_LIST_COLUMNS)

    def for_run_id(self, run_id: str, job_namespace: str = "", job_name: str = "") -> Any:
        return self.filter(run_uuid=naming.job_run_uuid(run_id, job_namespace, job_name))

    def named(self, run_id: str, jobs_limit: int = 20) -> Any:
        """Runs the runId a producer sent names, in any job: a UUID is the key itself; other
        text is mapped per job (uuid5 over job and runId), so its runs are those that keep
        it as sent, the first ``jobs_limit`` by id, read on catalog_run_text_idx in its order
        and no further (``_FIRST_NAMED``, ADR 0202).

        Not the jobs of the events that carried it: a DISTINCT over them read every event
        of the run, a streaming run's 100,000 heartbeats on each detail (ADR 0183). A run
        row exists only once an event of it is derived, so the events found no more; they
        found less: a run known only from a child's parent facet (a placeholder), which a
        UUID runId finds too."""
        try:
            return self.filter(run_uuid=uuid.UUID(run_id))
        except ValueError:
            pass
        found = [run_id, run_id, jobs_limit, run_id, run_id, jobs_limit]  # _FIRST_NAMED's
        return self.filter(id__in=RawSQL(_FIRST_NAMED, found))

    def shared_with(self, run_id: str, namespace: str, name: str, limit: int) -> "RunQuerySet":
        """The other jobs' own runs of ``run_id`` than job ``namespace``/``name``'s, flagged
        as sharing it, at most ``limit``, with their jobs: ``named``'s (its first runs of a
        text runId by id), in job order, the key's (run_uuid, job) index order. Sorted by
        the jobs' names, a UUID a thousand jobs sent read all thousand runs and jobs for
        each event's page (ADR 0202)."""
        return (  # type: ignore[no-any-return]
            self.named(run_id, jobs_limit=limit + 1)
            .filter(shares_run_id=True)
            .exclude(job__namespace=namespace, job__name=name)
            .select_related("job")
            .order_by("job_id")[:limit]
        )

    def named_in_job(self, run_id: str, job_id: int) -> "RunQuerySet":
        """The run of job ``job_id`` the runId names (``named``'s, of that job, whichever of
        its sharers it is): at most one, the natural key catalog_run_uuid_job_uniq
        ``(run_uuid, job)`` looked up. A text runId's key is uuid5 over the job's names
        (as derivation keys it), so the job's row is read first; picking the job among
        ``named``'s first 20 missed the runs of a text runId 21 or more jobs sent (ADR
        0196)."""
        # No order: one row at most, and the runs' default order (by start) made PostgreSQL
        # take the job's runs by start (catalog_run_job_started_idx), all of a busy job's.
        try:
            return self.filter(run_uuid=uuid.UUID(run_id), job_id=job_id).order_by()
        except ValueError:
            pass
        names = Job.objects.filter(pk=job_id).values_list("namespace", "name").first()
        if names is None:
            return self.none()
        # The job's row holds its names as derivation keyed it (naming.job_name), so they
        # are not cleaned again; the text is compared as well, as ``named`` keeps it.
        key = naming.run_uuid(run_id, *names)
        return self.filter(run_uuid=key, job_id=job_id, run_id_text=run_id).order_by()

    def with_link_counts(self, cap: int) -> "RunQuerySet":
        """Annotate ``input_count`` and ``output_count``: the run's links of each direction,
        counted up to ``cap + 1`` (more than ``cap``: the run has more than ``cap``). Each
        is an index-only range of catalog_run_ds_run_idx ``(run, direction, id)`` that stops
        there: an exact count of 50,000 read them all on every detail (ADR 0186)."""
        counts = {
            f"{direction.value}_count": _Counted(
                RunDataset.objects.filter(run=OuterRef("pk"), direction=direction)
                .order_by()
                .values("id")[: cap + 1]
            )
            for direction in Direction
        }
        return self.annotate(**counts)

    def with_parent_uuid(self) -> "RunQuerySet":
        """Runs with their job and ``parent_uuid`` (the parent run's runId, one subquery)."""
        parent = Run.objects.filter(pk=OuterRef("parent_run_id")).values("run_uuid")[:1]
        return self.select_related("job").annotate(parent_uuid=Subquery(parent))


class _Counted(Subquery):
    """How many rows a subquery returns: ``count(*)`` over it (sliced: up to its limit)."""

    template = "(SELECT count(*) FROM (%(subquery)s) AS counted)"
    output_field = BigIntegerField()


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


# How Marquez orders its job list (its JobDao): by last update, newest first. It matches
# an index below (DATASETS_BY_NAME, beside Dataset, is its dataset order).
JOBS_BY_UPDATE = (F("last_seen").desc(nulls_last=True), F("id").desc())
# Runs newest start first. A run with no start (a placeholder, known only from another run's
# parent facet) comes after every started run, not before them as PostgreSQL's DESC puts a
# NULL: a job's placeholders hid its real newest runs (ADR 0160). catalog_run_job_started_idx
# and catalog_run_state_idx are in this order.
RUNS_BY_START = (F("started_at").desc(nulls_last=True), F("id").desc())


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
    # A run of the job had input x output pairs past LINEAGE_MAX_RUN_EDGES (its
    # ``lineage_edges_cut``): a walk from a cut input reaches the job but not, through it,
    # the outputs; the graph says so (``cut.run_edges``, ADR 0080). Set by derivation,
    # cleared only by a full rederive (which rebuilds the jobs).
    lineage_edges_cut = models.BooleanField(default=False, db_default=False)
    updated_at = models.DateTimeField(auto_now=True)
    # Tags and owners: the producer's (from the tags and ownership facets) and the
    # steward's (StewardLabel), each entry marked with its source and whether a steward
    # hid it (ADR 0083); a projection, rewritten by derivation and by the steward's edits.
    tags = models.JSONField(default=list, blank=True, editable=False)
    owners = models.JSONField(default=list, blank=True, editable=False)

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
            # ?tag= and ?owner= filters and search: jsonb containment (@>) of one entry.
            GinIndex(fields=["tags"], opclasses=["jsonb_path_ops"], name="catalog_job_tags_gin"),
            GinIndex(
                fields=["owners"], opclasses=["jsonb_path_ops"], name="catalog_job_owners_gin"
            ),
            # Marquez's GET /tags and the admin's filters: the few labelled rows, newest
            # first, without reading the others.
            models.Index(fields=["id"], condition=LABELLED, name="catalog_job_labelled_idx"),
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
    # One of the run's own events says each event is complete for its time window
    # (emissionPattern.eventContentMode COMPLETE_SNAPSHOT): its lineage is its newest
    # window's (catalog.models.writes.newest_window_sql, ADR 0091). OR-merged.
    emits_snapshots = models.BooleanField(default=False, db_default=False)
    # The producer's tags of the run (tags facet; ADR 0083).
    tags = models.JSONField(default=list, blank=True, editable=False)
    # A write event of the run (a COMPLETE, a streaming job's RUNNING) named an output:
    # then only the outputs such events named (RunDataset.confirmed) are writes
    # (catalog.models.writes). OR-merged.
    outputs_confirmed = models.BooleanField(default=False, db_default=False)
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
    # Dataset → dataset pairs (an input x an output) the run states but has no lineage edge
    # for: a run's edges stop at LINEAGE_MAX_RUN_EDGES (issue 38), so one wide event cannot
    # make millions of rows. Its job edges still name every input and output.
    lineage_edges_cut = models.BigIntegerField(default=0, db_default=0)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        db_table = "catalog_run"
        ordering = list(RUNS_BY_START)
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
            models.Index(F("job"), *RUNS_BY_START, name="catalog_run_job_started_idx"),
            # Run history of a job in its cursor's order (jobs/{id}/runs, /runs?job_id=):
            # without it a job whose runs are old is found by walking every newer run.
            models.Index(fields=["job", "-id"], name="catalog_run_job_id_idx"),
            # The runs of a runId that is no UUID, kept as sent (Run.objects.named): equality
            # through md5 (text of any length), the first by id a range (ADR 0183).
            models.Index(MD5("run_id_text"), "id", name="catalog_run_text_idx"),
            # Runs filtered by state and ordered by start (the admin's run list, the dashboard).
            models.Index(F("state"), RUNS_BY_START[0], name="catalog_run_state_idx"),
            # Child runs of a parent run (run detail).
            models.Index(
                fields=["parent_run"],
                name="catalog_run_parent_idx",
                condition=models.Q(parent_run__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_uuid} ({self.state})"


class Direction(models.TextChoices):
    INPUT = "input", "Input"
    OUTPUT = "output", "Output"


# What a run's detail shows of a run's inputs and of its outputs: the first this many of
# each by id (docs/api.md; the REST detail and the Marquez mount's run, ADR 0168).
RUN_LINKS_SHOWN = 200
# How far a run's detail counts its inputs and its outputs: past it, it says "more than this
# many" (``input_count_is_lower_bound``) and /runs/{runId}/inputs and /outputs list them all.
# Counting is an index-only range of catalog_run_ds_run_idx, linear in what it counts:
# 50,000 cost 17-29 ms a direction, 10,000 1-3 ms (ADR 0186).
RUN_LINKS_COUNTED = 10_000


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
    # An output a write event of the run named (a COMPLETE, a streaming job's RUNNING; not
    # only its START): the run's writes when it has any (catalog.models.writes). OR-merged, so
    # any order agrees.
    confirmed = models.BooleanField(default=False, db_default=False)

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
            # A run's first inputs and first outputs by id, as its detail shows them
            # (``catalog.reads.runs.shown_links``, ADR 0168).
            models.Index(fields=["run", "direction", "id"], name="catalog_run_ds_run_idx"),
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


# Run facts: what a run said about a dataset it read or wrote, beyond reading or writing
# it.
#
# Output statistics (``outputStatistics``: rows, bytes, files), input statistics
# (``inputStatistics``), data quality metrics (``dataQualityMetrics``: rows, bytes,
# per-column metrics) and assertions (``dataQualityAssertions``: assertion, success,
# column), as the run's input/output facets (or the dataset facets of that input/output)
# carried them. One row per (run, alias, direction, facet), holding the value of the
# greatest version ``(eventTime, digest)`` among the run's events: order-independent and
# idempotent like every fact (ADR 0061).
class RunDatasetFacet(models.Model):
    run = covered_fk(Run, on_delete=models.CASCADE, related_name="+")
    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    direction = models.CharField(max_length=6, choices=Direction.choices)
    name = models.CharField(max_length=32)  # one of catalog.facets.RUN_FACT_FACETS
    # "<eventTime fixed-width ISO UTC>|<digest hex>": the greatest wins.
    version = models.TextField()
    value = models.JSONField()

    class Meta:
        db_table = "catalog_run_dataset_facet"
        constraints = [
            models.UniqueConstraint(
                fields=["run", "alias", "direction", "name"], name="catalog_run_ds_facet_uniq"
            ),
        ]
        indexes = [
            # Dataset detail: the latest runs' facts about a dataset (through its aliases).
            models.Index(fields=["alias", "run"], name="catalog_run_ds_facet_alias_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.name} of alias {self.alias_id} in run {self.run_id}"
