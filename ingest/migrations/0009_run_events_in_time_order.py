# A run's events in (eventTime, id) order: the run detail's first 200 events and a dataset
# version's newest events of its run are a range of the index, where md5(run_id) alone made
# PostgreSQL read and sort every event of the run (a streaming run's months of heartbeats).
# It replaces ingest_event_run_md5, whose equality lookups it serves as well: one index
# for one, not a ninth on the ingest path (ADR 0181, ADR 0142).

import django.db.models.functions.text
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: on a log of millions of events, ingest keeps writing meanwhile.
    # The new index first, so that a run's events are never without one.
    atomic = False

    dependencies = [
        ("ingest", "0008_event_schema_url_from_payload"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="event",
            index=models.Index(
                django.db.models.functions.text.MD5("run_id"),
                "event_time",
                "id",
                name="ingest_event_run_time_idx",
            ),
        ),
        RemoveIndexConcurrently(
            model_name="event",
            name="ingest_event_run_md5",
        ),
    ]
