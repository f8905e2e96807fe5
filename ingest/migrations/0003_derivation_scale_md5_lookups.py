# Hash indexes → btree on md5(column): inserts no longer walk a bucket's overflow chain
# (ADR 0025).

import django.db.models.functions.text
import ingest.models
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # Built concurrently: on a log of millions of events, ingest keeps writing meanwhile.
    atomic = False

    dependencies = [
        ("ingest", "0002_fidelity_facet_problems"),
    ]

    operations = [
        RemoveIndexConcurrently(
            model_name="event",
            name="ingest_event_run_hash",
        ),
        RemoveIndexConcurrently(
            model_name="event",
            name="ingest_event_job_hash",
        ),
        RemoveIndexConcurrently(
            model_name="event",
            name="ingest_event_producer_hash",
        ),
        migrations.AlterField(
            model_name="event",
            name="job_name",
            field=ingest.models.DigestIndexedText(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="event",
            name="producer",
            field=ingest.models.DigestIndexedText(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="event",
            name="run_id",
            field=ingest.models.DigestIndexedText(blank=True, null=True),
        ),
        AddIndexConcurrently(
            model_name="event",
            index=models.Index(
                django.db.models.functions.text.MD5("run_id"), name="ingest_event_run_md5"
            ),
        ),
        AddIndexConcurrently(
            model_name="event",
            index=models.Index(
                django.db.models.functions.text.MD5("job_name"), name="ingest_event_job_md5"
            ),
        ),
        AddIndexConcurrently(
            model_name="event",
            index=models.Index(
                django.db.models.functions.text.MD5("producer"), name="ingest_event_producer_md5"
            ),
        ),
        # Vacuum after a bounded number of changed rows, not a fraction of the table: each
        # derived event leaves a dead tuple (its pending version), and a 20% scale factor on
        # a log of 100 million events would let 20 million accumulate (ADR 0025).
        migrations.RunSQL(
            "ALTER TABLE ingest_event SET (autovacuum_vacuum_scale_factor = 0.0, "
            "autovacuum_vacuum_threshold = 50000, autovacuum_analyze_scale_factor = 0.0, "
            "autovacuum_analyze_threshold = 50000)",
            "ALTER TABLE ingest_event RESET (autovacuum_vacuum_scale_factor, "
            "autovacuum_vacuum_threshold, autovacuum_analyze_scale_factor, "
            "autovacuum_analyze_threshold)",
        ),
    ]
