"""schemaURL is read from the payload, not stored twice (ADR 0103).

Nothing queried the column (the admin shows it); it took 73 bytes of every stored event.
Dropping a column is a catalog change: rows stored before keep its bytes until they are
rewritten (the next update of a row, or VACUUM FULL); new rows store nothing for it.
"""

from django.db import migrations

FORWARD = """
SET LOCAL lock_timeout = '5s';
ALTER TABLE ingest_event DROP COLUMN schema_url;
"""
BACKWARD = """
SET LOCAL lock_timeout = '5s';
ALTER TABLE ingest_event ADD COLUMN schema_url text NULL;
ALTER TABLE ingest_event ALTER COLUMN schema_url SET STORAGE MAIN;
UPDATE ingest_event SET schema_url = payload ->> 'schemaURL'
WHERE jsonb_typeof(payload -> 'schemaURL') = 'string';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0007_event_rows_compressed"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, BACKWARD)],
            state_operations=[migrations.RemoveField(model_name="event", name="schema_url")],
        )
    ]
