"""What retention kept of the runs and events it removed (ADR 0079).

``manage.py retention`` removes old events and the runs they made; before it does, it folds
what those runs and events contributed to the catalog into these summaries, keyed by
natural keys (job and alias ``key_hash``es), not ids, so a dataset merge or a full rederive
finds them again. Derivation folds them in like an event: an edge recomputed from its runs
adds its summary (``catalog.services.derivation.edge_runs``), and a full rederive starts
from the jobs, aliases and links and ends with the edges
(``catalog.services.derivation.retained``). Kept by rederive: they are what is left of
events the log no longer holds.
"""

from django.db import models


class RetainedJob(models.Model):
    """A job some removed event named: its first and last seen, facets and parent."""

    key_hash = models.BinaryField(max_length=32)
    namespace = models.TextField()
    name = models.TextField()
    first_seen = models.DateTimeField(null=True)
    last_seen = models.DateTimeField(null=True)
    # The job's facets and their versions as the catalog held them (Job.facets,
    # Job.facet_versions, "_parent" included), and its parent's (namespace, name).
    facets = models.JSONField(default=dict)
    facet_versions = models.JSONField(default=dict)
    parent = models.JSONField(null=True)
    is_placeholder = models.BooleanField(default=False)

    kept_by_rederive = True  # what is left of events the log no longer holds

    class Meta:
        db_table = "catalog_retained_job"
        constraints = [
            # Upserted by retention; read whole by a full rederive.
            models.UniqueConstraint(fields=["key_hash"], name="catalog_retained_job_uniq"),
        ]

    def __str__(self) -> str:
        return f"retained job {self.namespace}/{self.name}"


class RetainedAlias(models.Model):
    """An alias some removed event named: first/last seen, its reason, and the facets of
    its dataset when it was the dataset's display name."""

    key_hash = models.BinaryField(max_length=32)
    namespace = models.TextField()
    name = models.TextField()
    first_seen = models.DateTimeField(null=True)
    last_seen = models.DateTimeField(null=True)
    reason = models.CharField(max_length=8)
    reason_detail = models.TextField(blank=True, default="")
    reason_version = models.JSONField(default=list)
    is_table_name = models.BooleanField(default=False)
    facets = models.JSONField(default=dict)
    facet_versions = models.JSONField(default=dict)

    kept_by_rederive = True

    class Meta:
        db_table = "catalog_retained_alias"
        constraints = [
            # Upserted by retention; edges and links find their aliases by this key.
            models.UniqueConstraint(fields=["key_hash"], name="catalog_retained_alias_uniq"),
        ]

    def __str__(self) -> str:
        return f"retained alias {self.namespace}/{self.name}"


class RetainedLink(models.Model):
    """A link between two aliases (symlink, rename) whose reason event was removed."""

    alias_a = models.BinaryField(max_length=32)
    alias_b = models.BinaryField(max_length=32)
    reason = models.CharField(max_length=8)

    kept_by_rederive = True

    class Meta:
        db_table = "catalog_retained_link"
        constraints = [
            # Upserted by retention (ON CONFLICT DO NOTHING).
            models.UniqueConstraint(
                fields=["alias_a", "alias_b"], name="catalog_retained_link_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"retained {self.reason} link"


class RetainedEdge(models.Model):
    """The removed runs of one dataset → dataset edge: their span and counts.

    By the job's and the two datasets' display aliases' keys: an alias never merges, so
    after a merge the summary is found through the alias's new dataset."""

    job_key = models.BinaryField(max_length=32)
    source_key = models.BinaryField(max_length=32)
    target_key = models.BinaryField(max_length=32)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    run_count = models.IntegerField()
    completed_run_count = models.IntegerField()

    kept_by_rederive = True

    class Meta:
        db_table = "catalog_retained_edge"
        constraints = [
            # Natural key; retention adds removed runs with ON CONFLICT; the edge
            # recompute finds a job's summaries by its first column.
            models.UniqueConstraint(
                fields=["job_key", "source_key", "target_key"], name="catalog_retained_edge_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"retained edge ({self.run_count} runs)"


class RetainedJobEdge(models.Model):
    """The removed runs of one job ↔ dataset edge: their span and counts."""

    job_key = models.BinaryField(max_length=32)
    dataset_key = models.BinaryField(max_length=32)
    direction = models.CharField(max_length=6)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    run_count = models.IntegerField()
    completed_run_count = models.IntegerField()

    kept_by_rederive = True

    class Meta:
        db_table = "catalog_retained_job_edge"
        constraints = [
            # Natural key, as RetainedEdge's.
            models.UniqueConstraint(
                fields=["job_key", "dataset_key", "direction"],
                name="catalog_retained_job_edge_uniq",
            ),
        ]

    def __str__(self) -> str:
        return f"retained {self.direction} job edge ({self.run_count} runs)"


class RetainedJobDataset(models.Model):
    """The removed runs of one job that named one alias on one side (``JobDataset``, which
    points at aliases): their span. By the alias's own key, not the dataset's display
    alias, so a rederive gives each row back as the runs named it."""

    job_key = models.BinaryField(max_length=32)
    alias_key = models.BinaryField(max_length=32)
    direction = models.CharField(max_length=6)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    kept_by_rederive = True

    class Meta:
        db_table = "catalog_retained_job_dataset"
        constraints = [
            # Natural key, as JobDataset's.
            models.UniqueConstraint(
                fields=["job_key", "alias_key", "direction"],
                name="catalog_retained_job_ds_uniq",
            ),
        ]

    def __str__(self) -> str:
        return f"retained {self.direction} job dataset"


class RetainedColumnEdge(models.Model):
    """The removed runs' column facts of one column edge: span and run count.

    By the job's and the aliases' keys as the facts name them (facts point at aliases), and
    the edge's ``key_hash`` (the digest of its fields and transformation, held beside)."""

    job_key = models.BinaryField(max_length=32)
    target_key = models.BinaryField(max_length=32)
    source_key = models.BinaryField(max_length=32)
    key_hash = models.BinaryField(max_length=32)
    target_field = models.TextField()
    source_field = models.TextField()
    transformation_type = models.CharField(max_length=32, blank=True, default="")
    transformation_subtype = models.CharField(max_length=64, blank=True, default="")
    transformation_description = models.TextField(blank=True, default="")
    masking = models.BooleanField(default=False)
    dataset_level = models.BooleanField(default=False)
    field_transformation_type = models.CharField(max_length=32, blank=True, default="")
    field_transformation_description = models.TextField(blank=True, default="")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    run_count = models.IntegerField()

    kept_by_rederive = True

    class Meta:
        db_table = "catalog_retained_column_edge"
        constraints = [
            # Natural key; retention adds removed runs with ON CONFLICT; a column-edge
            # recompute finds a job's summaries by its first column.
            models.UniqueConstraint(
                fields=["job_key", "target_key", "source_key", "key_hash"],
                name="catalog_retained_column_uniq",
            ),
        ]

    def __str__(self) -> str:
        return f"retained column edge {self.source_field} → {self.target_field}"


class RetainedControlEdge(models.Model):
    """What the removed runs' ``jobDependencies`` facets stated of one control edge (ADR
    0090): its span and the newest stating event's version, last run and rules.

    By the two jobs' keys; both jobs are kept as ``RetainedJob`` with it, so a rederive
    has the jobs to draw it between even when only a removed event named one of them."""

    upstream_key = models.BinaryField(max_length=32)
    downstream_key = models.BinaryField(max_length=32)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    version = models.TextField()
    last_run_uuid = models.UUIDField()
    dependency_type = models.CharField(max_length=64, blank=True, default="")
    sequence_trigger_rule = models.CharField(max_length=64, blank=True, default="")
    status_trigger_rule = models.CharField(max_length=64, blank=True, default="")
    trigger_rule = models.CharField(max_length=64, blank=True, default="")

    kept_by_rederive = True

    class Meta:
        db_table = "catalog_retained_control_edge"
        constraints = [
            # Natural key, as ControlEdge's; retention upserts the greater version.
            models.UniqueConstraint(
                fields=["upstream_key", "downstream_key"], name="catalog_retained_control_uniq"
            ),
        ]

    def __str__(self) -> str:
        return "retained control edge"
