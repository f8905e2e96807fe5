"""New event payloads are compressed with lz4 instead of pglz (ADR 0096, issue 42).

A catalog change only: rows already stored keep their pglz payloads (PostgreSQL reads
both), nothing is rewritten, so its time does not grow with the table; it takes the
table's lock for a moment (0.02-0.06 s on 10,000 rows at load 27, bench/storage.py
--alter). The lock timeout keeps it from queueing
ingest behind a long read; re-run the migration if it gives up. A PostgreSQL built
without lz4 refuses the method: then pglz stays, as before (a notice says so).
"""

from django.db import migrations

FORWARD = """
SET LOCAL lock_timeout = '5s';
DO $$
BEGIN
    ALTER TABLE ingest_event ALTER COLUMN payload SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4: event payloads stay pglz-compressed';
END
$$;
"""
BACKWARD = """
SET LOCAL lock_timeout = '5s';
ALTER TABLE ingest_event ALTER COLUMN payload SET COMPRESSION pglz;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0005_token_scope_curate"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
