"""More catalog models: the graph's job edges (ADR 0027), steward-pinned dataset titles
(ADR 0020), metadata records. Imported by ``catalog.models``, which registers them."""

from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models.functions import MD5

from catalog.models import Dataset, Direction, Job, Run
from catalog.querysets import MetadataRecordQuerySet
from catalog.steward_input import StewardInput
from ingest.models import DigestIndexedText


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


class DisplayNamePin(StewardInput):
    """A steward's choice of a dataset's title, by alias name (not derived: survives a
    rederive, like ``AliasRule``). See catalog.display_names."""

    namespace = models.TextField()
    name = models.TextField()
    key_hash = models.BinaryField(max_length=32, editable=False)

    class Meta:
        db_table = "catalog_display_name_pin"
        ordering = ["namespace", "name"]
        constraints = [
            # Looked up by the aliases' key hashes during derivation.
            models.UniqueConstraint(fields=["key_hash"], name="catalog_display_pin_key_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class MetadataRecord(models.Model):
    """A generic metadata record (``/api/v1/metadata``), indexed for search."""

    event = models.OneToOneField("ingest.Event", on_delete=models.CASCADE, related_name="+")
    resource = DigestIndexedText()
    subject = DigestIndexedText()
    action = DigestIndexedText()
    timestamp = models.DateTimeField()
    additional_values = models.JSONField(default=dict, blank=True)

    objects = MetadataRecordQuerySet.as_manager()

    class Meta:
        db_table = "catalog_metadata_record"
        ordering = ["-timestamp", "-id"]
        indexes = [
            # Equality filters (?resource=, ?subject=, ?action=): btree on md5 (ADR 0025).
            models.Index(MD5("resource"), name="catalog_meta_resource_md5"),
            models.Index(MD5("subject"), name="catalog_meta_subject_md5"),
            models.Index(MD5("action"), name="catalog_meta_action_md5"),
            # Time ranges (?since=&until=) and the default newest-first order.
            models.Index(fields=["-timestamp", "-id"], name="catalog_meta_time_idx"),
            # ?key=value filters: additional_values @> {"key": "value"}.
            GinIndex(
                fields=["additional_values"],
                name="catalog_meta_values_gin",
                opclasses=["jsonb_path_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject} {self.action} {self.resource}"
