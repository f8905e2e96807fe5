"""The lineage graph's edges, recomputed from facts (ADR 0023, 0027, 0060): dataset to
dataset through a job (``LineageEdge``), job to dataset (``JobLineageEdge``), the runs behind
each, and column lineage (``ColumnLineageFact`` per run, ``ColumnLineageEdge`` aggregated).
"""

from django.db import models

from catalog.models.fields import covered_fk
from catalog.models.identity import Dataset, DatasetAlias
from catalog.models.jobs_runs import Direction, Job, Run


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
            # An edge's first run: the change feed's edge_added names it on every batch
            # that touches the edge's target, in a few rows whatever the edge's history
            # (ADR 0185).
            models.Index(fields=["edge", "first_seen"], name="catalog_edge_run_first_idx"),
        ]

    def __str__(self) -> str:
        return f"edge {self.edge_id} in run {self.run_id}"


class ColumnMapping(models.Model):
    """source alias.field -> target alias.field as a columnLineage facet states it: what a
    run's fact (``ColumnLineageFact``) and a job's declaration (``StaticColumnLineage``)
    both hold, read from the facet alike (ADR 0060)."""

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
    # sha256 of the field pair and the transformation: bounded key for the text.
    key_hash = models.BinaryField(max_length=32, editable=False)

    class Meta:
        abstract = True


class ColumnLineageFact(ColumnMapping):
    """One columnLineage entry seen in a run's output facets (per output alias and field)."""

    run = covered_fk(Run, on_delete=models.CASCADE, related_name="+")
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


class JobLineageEdge(models.Model):
    """dataset → job (``input``) or job → dataset (``output``), aggregated over the job's runs.

    Every job that read or wrote a dataset has one, whether or not the same run also wrote
    or read another dataset: a dbt test or a data-quality check (inputs only), a loader or a
    sink (outputs only) are in the graph too (ADR 0027). ``LineageEdge`` keeps the
    dataset → dataset pairs the graph walks; these are the bipartite edges it draws.
    """

    # No foreign-key indexes of their own: the unique key leads with job, the dataset index
    # with dataset; each extra index is upkeep on every fold of the edge.
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="io_edges", db_index=False)
    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="io_edges", db_index=False
    )
    direction = models.CharField(max_length=6, choices=Direction.choices)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    last_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run_count = models.IntegerField(default=0)
    completed_run_count = models.IntegerField(default=0, db_default=0)  # COMPLETE runs (ADR 0069)
    # How the last run named the dataset: "" in its inputs/outputs, "column_lineage" only in
    # an output's columnLineage (ADR 0060); carried from the last run like its figures.
    via = models.CharField(max_length=16, blank=True, default="", db_default="")

    class Meta:
        db_table = "catalog_job_edge"
        constraints = [
            # Natural key; derivation upserts the touched keys with ON CONFLICT.
            models.UniqueConstraint(
                fields=["job", "dataset", "direction"], name="catalog_job_edge_uniq"
            ),
        ]
        indexes = [
            # The graph: jobs that read / wrote the chosen datasets, in the walk's order and
            # filtered by as_of / since from the index alone (a big graph links thousands,
            # one heap page each otherwise; ADR 0050); admin dataset page.
            models.Index(
                fields=["dataset", "direction", "job"],
                include=["first_seen", "last_seen"],
                name="catalog_job_edge_dataset_idx",
            ),
            # The admin's edges named only in column lineage (a few), newest first: the rest
            # are found at once along the primary key (ADR 0195).
            models.Index(
                fields=["id"],
                name="catalog_job_edge_via_idx",
                condition=~models.Q(via=""),
            ),
        ]

    def __str__(self) -> str:
        return f"job {self.job_id} {self.direction} dataset {self.dataset_id}"


class JobLineageEdgeRun(models.Model):
    """One run's contribution to a job edge: its history (as of a time, diffs)."""

    # No index of their own (ADR 0025): the unique (edge, run) serves edge_id, the run index
    # below serves run_id; each extra index is upkeep on every run's insert.
    edge = models.ForeignKey(
        JobLineageEdge, on_delete=models.CASCADE, related_name="runs", db_index=False
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", db_index=False)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    via = models.CharField(
        max_length=16, blank=True, default="", db_default=""
    )  # as RunDataset.via
    completed = models.BooleanField(default=False, db_default=False)  # run COMPLETE (ADR 0069)

    class Meta:
        db_table = "catalog_job_edge_run"
        constraints = [
            # One row per (edge, run); the edge's run_count is the number of rows. Its
            # times ride in the index so the graph as of T reads an edge's history from
            # the index alone: the rows of one edge lie one per heap page (ADR 0050).
            models.UniqueConstraint(
                fields=["edge", "run"],
                include=["first_seen", "last_seen"],
                name="catalog_job_edge_run_uniq",
            ),
        ]
        indexes = [
            # Rows of a run (rebuilt when the run gets new events).
            models.Index(fields=["run"], name="catalog_job_edge_run_run_idx"),
        ]

    def __str__(self) -> str:
        return f"job edge {self.edge_id} in run {self.run_id}"


class ControlEdge(models.Model):
    """upstream job → downstream job: control flow a run's ``jobDependencies`` facet states
    (ADR 0090). Its own table, so no read of data lineage (walk, impact, column lineage,
    currency, edge counts) can count it. One row per pair, from every run that stated it:
    first and last seen are the stating events' times, the rules are the newest event's."""

    upstream = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="control_out")
    downstream = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="control_in")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    # The newest stating event's version ("<eventTime ISO>|<digest hex>") and what it said:
    # the upsert keeps the greater, so any order of events gives the same row.
    version = models.TextField()
    last_run_uuid = models.UUIDField()
    dependency_type = models.CharField(max_length=64, blank=True, default="")
    sequence_trigger_rule = models.CharField(max_length=64, blank=True, default="")
    status_trigger_rule = models.CharField(max_length=64, blank=True, default="")
    trigger_rule = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        db_table = "catalog_control_edge"
        constraints = [
            models.UniqueConstraint(
                fields=["upstream", "downstream"], name="catalog_control_edge_uniq"
            ),
        ]
        indexes = [models.Index(fields=["downstream"], name="catalog_control_down_idx")]

    def __str__(self) -> str:
        return f"job {self.upstream_id} → job {self.downstream_id} (control)"
