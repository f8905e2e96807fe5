"""The redaction of metadata records stored before ADR 0179 (migration 0041, ADR 0187).

Builds --records metadata records (default 100,000), each with its event row, whose
additionalValues are what the collector's MetadataAPI sends (five str → str pairs: model
version, stage, a run URL, a commit, an owner); on --share of them (default 0.01) a sixth
key holds a DSN with its password, as derivation stored it before keys were redacted. Then
runs catalog.services.metadata_keys.redact_stored (what migration 0041 and
``manage.py redact_metadata`` run) and prints:
- its time, the time per 100,000 records, rows written, the spans and the longest span
  (one transaction: how long its written rows were locked);
- a second run's time (nothing left: the scan alone, what a resumed run costs);
- for scale, one UPDATE that writes as many rows again in SQL (new row versions and their
  index entries, no redaction, every row locked until it ends).

  .venv/bin/python -m bench.metadata_keys [--records 100000] [--share 0.01]
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BIN, ROOT

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_metadata_keys"

EVENTS = """
INSERT INTO ingest_event (kind, event_time, payload, digest, derivation_status, received_at)
SELECT 'metadata', now(), jsonb_build_object('n', i), sha256(i::text::bytea), 'derived', now()
FROM generate_series(1, %(records)s) AS i
"""
RECORDS = """
INSERT INTO catalog_metadata_record (event_id, resource, subject, action, timestamp,
    additional_values)
SELECT e.id, 'model-' || (e.id %% 500), 'user-' || (e.id %% 50), 'deploy',
    now() - e.id * interval '1 second',
    jsonb_build_object('model_version', (e.id %% 40)::text, 'stage', 'Production',
        'run_url', 'https://mlflow.example.com/#/experiments/3/runs/' || md5(e.id::text),
        'git_sha', md5(e.id::text), 'owner', 'team-' || (e.id %% 20))
    || CASE WHEN e.id %% %(every)s = 0
       THEN jsonb_build_object('dsn postgres://etl:S3CRET' || e.id || '@db/shop', 'shop')
       ELSE '{}'::jsonb END
FROM ingest_event e
"""


def build(database: str, records: int, share: float) -> None:
    env = {**os.environ, "DATABASE_URL": database}
    name = database.rsplit("/", 1)[1]
    admin = database.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run([BIN / "python", "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    every = max(1, round(1 / share))
    with psycopg.connect(database, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute(EVENTS, {"records": records})
        conn.execute(RECORDS, {"every": every})
        conn.execute("VACUUM ANALYZE ingest_event, catalog_metadata_record")
        size = conn.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('catalog_metadata_record'))"
        ).fetchone()[0]
        print(f"built {records:,} records ({size}) in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--share", type=float, default=0.01, help="share with a secret key")
    parser.add_argument("--span", type=int, default=0, help="ids per step (0: the default)")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    options = parser.parse_args()
    build(options.database, options.records, options.share)

    os.environ["DATABASE_URL"] = options.database
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    import django

    django.setup()
    from catalog.services import metadata_keys

    span = options.span or metadata_keys.SPAN
    longest, last = 0.0, time.perf_counter()

    def progress(done: metadata_keys.Redacted) -> None:
        nonlocal longest, last
        now = time.perf_counter()
        longest, last = max(longest, now - last), now

    print(f"load before: {os.getloadavg()[0]:.1f}")
    started, cpu = time.perf_counter(), time.process_time()
    done = metadata_keys.redact_stored(span=span, progress=progress)
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(
        f"redact: {done.updated:,} of {options.records:,} rows written in {took:.2f} s "
        f"({took * 100_000 / options.records:.2f} s per 100,000 records; this process's "
        f"CPU {cpu:.2f} s), {done.spans} spans of {span:,} ids, longest span "
        f"{longest * 1000:.0f} ms"
    )
    started = time.perf_counter()
    again = metadata_keys.redact_stored(span=span)
    print(f"again (nothing left): {again.updated} written in {time.perf_counter() - started:.2f} s")
    with psycopg.connect(options.database, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute(
            "UPDATE catalog_metadata_record SET additional_values = additional_values || '{}' "
            "WHERE id %% %(every)s = 0",
            {"every": max(1, round(1 / options.share))},
        )
        took = time.perf_counter() - started
        print(f"one UPDATE of as many rows, one transaction, no redaction: {took:.2f} s")
    print(f"load after: {os.getloadavg()[0]:.1f}")
    if not options.keep:
        from django.db import connections

        connections.close_all()
        name = options.database.rsplit("/", 1)[1]
        admin = options.database.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{name}"')


if __name__ == "__main__":
    main()
