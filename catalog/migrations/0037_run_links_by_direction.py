# A run's detail shows its first 200 inputs and first 200 outputs by id (docs/api.md): read
# on (run, direction, id), each direction stops after its 200 rows. Without it the read
# went through catalog_run_dataset_uniq (run, alias, direction) over every row of the run
# and sorted them: a run that read 50,000 datasets read 50,000 rows per request (ADR 0168).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0036_nulls_last_time_orders"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="rundataset",
            index=models.Index(fields=["run", "direction", "id"], name="catalog_run_ds_run_idx"),
        ),
    ]
