# A dataset's aliases in id order: /datasets/{id}/aliases pages through them as a range of
# (dataset_id, id), where the index on dataset_id alone made PostgreSQL read and sort every
# alias of the dataset, or walk the primary key past every other dataset's aliases (a table
# symlinked under a new name by every run gathers tens of thousands). It replaces
# catalog_alias_dataset_idx, whose equality lookups (a dataset's aliases, their count, a
# merge repointing them) it serves as well: one index for one, not an eighth on derivation's
# alias writes (ADR 0184).

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: derivation keeps writing aliases meanwhile. The new index first,
    # so that a dataset's aliases are never without one.
    atomic = False

    dependencies = [
        ("catalog", "0038_edge_first_run"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="datasetalias",
            index=models.Index(fields=["dataset", "id"], name="catalog_alias_dataset_id_idx"),
        ),
        RemoveIndexConcurrently(
            model_name="datasetalias",
            name="catalog_alias_dataset_idx",
        ),
    ]
