"""Per-target dataset pairs of the experimental ``lineage`` facet (ADR 0102).

The facet names, per target dataset, the datasets feeding it; a job reading A and B and
writing C and D whose facet says A → C and B → D has two dataset → dataset pairs, not the
four of its inputs x outputs. These rows hold them, by alias like every fact (a merge
needs no upkeep): a run's, accumulated over its events like ``RunDataset``, and a job's
current JobEvent declaration's, replaced with it like ``StaticDataset`` (ADR 0061). Only
written with ``LINEAGE_EXPERIMENTAL_LINEAGE_FACET`` on; a run or job without rows has its
edges from the product of its inputs and outputs, as before.
"""

from django.db import models

from catalog.models.fields import covered_fk
from catalog.models.identity import DatasetAlias
from catalog.models.jobs_runs import Job, Run


class RunDatasetPair(models.Model):
    """The facet on one of the run's events said ``source`` feeds ``target``; first and
    last seen upserted with LEAST/GREATEST, so any order of the run's events agrees."""

    run = covered_fk(Run, on_delete=models.CASCADE, related_name="+")
    source_alias = models.ForeignKey(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    target_alias = models.ForeignKey(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        db_table = "catalog_run_dataset_pair"
        constraints = [
            models.UniqueConstraint(
                fields=["run", "source_alias", "target_alias"], name="catalog_run_ds_pair_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id}: alias {self.source_alias_id} → {self.target_alias_id}"


class StaticDatasetPair(models.Model):
    """The job's current declaration says ``source`` feeds ``target`` (its facet did)."""

    job = covered_fk(Job, on_delete=models.CASCADE, related_name="+")
    source_alias = models.ForeignKey(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    target_alias = models.ForeignKey(DatasetAlias, on_delete=models.CASCADE, related_name="+")

    class Meta:
        db_table = "catalog_static_dataset_pair"
        constraints = [
            models.UniqueConstraint(
                fields=["job", "source_alias", "target_alias"],
                name="catalog_static_ds_pair_uniq",
            ),
        ]

    def __str__(self) -> str:
        return f"job {self.job_id} declares alias {self.source_alias_id} → {self.target_alias_id}"
