"""Run facts: what a run said about a dataset it read or wrote, beyond reading or writing it.

Output statistics (``outputStatistics``: rows, bytes, files), input statistics
(``inputStatistics``), data quality metrics (``dataQualityMetrics``: rows, bytes,
per-column metrics) and assertions (``dataQualityAssertions``: assertion, success,
column), as the run's input/output facets (or the dataset facets of that input/output)
carried them. One row per (run, alias, direction, facet), holding the value of the
greatest version ``(eventTime, digest)`` among the run's events: order-independent and
idempotent like every fact (ADR 0061).
"""

from django.db import models

from catalog.models.fields import covered_fk
from catalog.models.identity import DatasetAlias
from catalog.models.jobs_runs import Direction, Run


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
