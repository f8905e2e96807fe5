"""Every event row's payload is compressed, not only rows over the TOAST threshold (ADR 0103).

PostgreSQL compresses a row's values only when the row is over TOAST_TUPLE_THRESHOLD (about
2 KB, fixed when PostgreSQL is built); ``toast_tuple_target`` only says how small toasting
should make a row once it runs. So a 1.2-1.5 KB event, whose jsonb is larger than its JSON,
was stored uncompressed at about 1.6x its JSON. Three catalog changes make every row toast:

- ``toast_pad``: a column whose default is 2,032 spaces, so every new row starts over the
  threshold. The toaster compresses it first (the largest value) to 26 bytes with lz4.
- ``toast_tuple_target = 128``: toasting then goes on to compress the payload, since the
  row is still over the target.
- ``STORAGE MAIN`` on every variable-width column: a row can never get under 128 bytes, so
  toasting would otherwise push every EXTENDED value over 24 bytes (the digest, the run id)
  out into the TOAST table. MAIN values are compressed inline and moved out only when the
  row is still over about 8 KB.

An UPDATE (derivation status) keeps the compressed values as they are. Nothing here rewrites
the table: the default is a constant (a fast default), storage and reloptions are catalog
changes; rows stored before keep their layout until they are next updated.
"""

from django.db import migrations

VARIABLE = (
    "kind", "event_type", "run_id", "job_namespace", "job_name", "producer", "schema_url",
    "payload", "payload_raw", "digest", "derivation_status", "derivation_error",
    "facet_problems", "toast_pad",
)  # fmt: skip

FORWARD = f"""
SET LOCAL lock_timeout = '5s';
ALTER TABLE ingest_event ADD COLUMN toast_pad text DEFAULT repeat(' ', 2032);
ALTER TABLE ingest_event {", ".join(f"ALTER COLUMN {name} SET STORAGE MAIN" for name in VARIABLE)};
ALTER TABLE ingest_event SET (toast_tuple_target = 128);
DO $$
BEGIN
    ALTER TABLE ingest_event ALTER COLUMN toast_pad SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4: the pad is pglz-compressed (35 bytes, not 26)';
END
$$;
"""
BACKWARD = f"""
SET LOCAL lock_timeout = '5s';
ALTER TABLE ingest_event RESET (toast_tuple_target);
ALTER TABLE ingest_event DROP COLUMN toast_pad;
ALTER TABLE ingest_event {
    ", ".join(f"ALTER COLUMN {name} SET STORAGE EXTENDED" for name in VARIABLE[:-1])
};
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0006_event_payload_lz4"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
