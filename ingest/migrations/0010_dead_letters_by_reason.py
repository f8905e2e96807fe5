# The dead letters of one reason code, newest first, a range of this index; and the reason
# filter's choices, one probe a code present: the admin read every letter for each (a
# SELECT DISTINCT on every visit, and the page and its count until a rare code's letters had
# turned up) (ADR 0195).

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: the Kafka consumer keeps writing letters meanwhile.
    atomic = False

    dependencies = [
        ("ingest", "0009_run_events_in_time_order"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="deadletter",
            index=models.Index(fields=["reason_code", "id"], name="ingest_dead_letter_reason_idx"),
        ),
    ]
