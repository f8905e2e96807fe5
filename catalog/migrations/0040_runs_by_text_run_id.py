# The runs of a runId that is no UUID (Spark's app-..., an Airflow run id), kept as sent:
# Run.objects.named finds them here, the first by id a range of the index, where it read the
# DISTINCT jobs of every event carrying the runId (a streaming run's 100,000 heartbeats on
# each run detail). md5 as the log's own runId index keys it: text of any length (ADR 0183).

import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: derivation keeps writing runs meanwhile.
    atomic = False

    dependencies = [
        ("catalog", "0039_aliases_of_a_dataset_by_id"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="run",
            index=models.Index(
                django.db.models.functions.text.MD5("run_id_text"),
                models.F("id"),
                name="catalog_run_text_idx",
            ),
        ),
    ]
