# An edge's first run (first seen, then run UUID), which the change feed's edge_added names:
# on (edge, first_seen) it is the first few entries of the edge. Without it every batch
# touching a dataset read all the runs of each edge added after the dataset's first one
# (ADR 0185).

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: catalog_lineage_edge_run is the largest per-run table, and
    # derivation keeps writing it meanwhile.
    atomic = False

    dependencies = [
        ("catalog", "0037_run_links_by_direction"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="lineageedgerun",
            index=models.Index(fields=["edge", "first_seen"], name="catalog_edge_run_first_idx"),
        ),
    ]
