"""Static lineage: what a JobEvent declares (ADR 0061).

A JobEvent has no run: it states which datasets a job reads and writes, and which columns
feed which, as designed (a dbt manifest, an orchestrator's DAG definition). The catalog
keeps, per job, the declaration of the JobEvent with the greatest version; the rows point at
aliases, like every fact, so a dataset merge needs no upkeep.
"""

from django.db import models

from catalog.models.edges import ColumnMapping
from catalog.models.fields import covered_fk
from catalog.models.identity import DatasetAlias
from catalog.models.jobs_runs import Direction, Job


def any_declared_sql() -> str:
    """SQL: some job declares its lineage (a ``StaticLineage`` row exists): the other fact a
    lineage graph is planned by (ADR 0104)."""
    return "EXISTS (SELECT 1 FROM catalog_static_lineage)"


class StaticLineage(models.Model):
    """A job's current design-time declaration: which JobEvent it comes from."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="static_lineage")
    # "<eventTime fixed-width ISO UTC>|<digest hex>": text order is version order.
    version = models.TextField()
    event = models.ForeignKey(
        "ingest.Event", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    declared_at = models.DateTimeField()  # the JobEvent's eventTime

    class Meta:
        db_table = "catalog_static_lineage"

    def __str__(self) -> str:
        return f"static lineage of job {self.job_id} ({self.declared_at:%Y-%m-%d %H:%M})"


class Via(models.TextChoices):
    DECLARED = "", "inputs/outputs"
    COLUMN_LINEAGE = "column_lineage", "columnLineage only"


class StaticDataset(models.Model):
    """An input or output of a job's current declaration.

    ``via``: ``""`` when the JobEvent lists it in its inputs/outputs, ``column_lineage``
    when it only appears as a source in an output's columnLineage (it is an input all the
    same: its columns feed the output)."""

    job = covered_fk(Job, on_delete=models.CASCADE, related_name="+")
    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    direction = models.CharField(max_length=6, choices=Direction.choices)
    via = models.CharField(max_length=16, choices=Via.choices, blank=True, default="")

    class Meta:
        db_table = "catalog_static_dataset"
        constraints = [
            models.UniqueConstraint(
                fields=["job", "direction", "alias"], name="catalog_static_dataset_uniq"
            ),
        ]
        indexes = [
            # The graph: the declarations naming a dataset (through its aliases).
            models.Index(fields=["alias", "direction", "job"], name="catalog_static_ds_alias_idx"),
        ]

    def __str__(self) -> str:
        return f"job {self.job_id} declares {self.direction} alias {self.alias_id}"


class StaticColumnLineage(ColumnMapping):
    """source alias.field → target alias.field as a job's current declaration states it,
    or (``dataset_level``, target field "") a field the whole target depends on: the
    values of ``ColumnLineageEdge``, read from the facet alike (ADR 0060)."""

    job = covered_fk(Job, on_delete=models.CASCADE, related_name="+")

    class Meta:
        db_table = "catalog_static_column_lineage"
        constraints = [
            models.UniqueConstraint(
                fields=["job", "target_alias", "source_alias", "key_hash"],
                name="catalog_static_column_uniq",
            ),
        ]
        indexes = [
            # The graph's column edges: those into the drawn datasets (through aliases).
            models.Index(fields=["target_alias"], name="catalog_static_col_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_field} → {self.target_field} (declared by job {self.job_id})"
