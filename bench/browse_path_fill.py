"""The browse-path fill on a store derived before the hierarchy facet was read (ADR 0093).

Builds --datasets dataset rows (default 1,000,000: bench/read.py's ratio of one dataset per
ten events, for a 10M-event store) with the facets derivation merges: a schema facet of
--fields columns each, and on --share of them a hierarchy facet of three levels, every
browse path empty (as migration 0030 left them). Then runs catalog.services.browse_paths
.fill (what migration 0032 and ``manage.py fill_browse_paths`` run) and prints:
- its time, rows filled per second, the spans and the longest span (one transaction: how
  long its row locks were held);
- a second run's time (nothing left to fill: the scan alone, what a resumed run costs);
- the time one UPDATE of the whole table took on the same rows, for scale (what a
  single-transaction data migration would hold its locks for).

  .venv/bin/python -m bench.browse_path_fill [--datasets 1000000] [--share 0.5] [--reuse]
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

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_browse"

BUILD = """
INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
    lifecycle_state, is_dropped, updated_at, display_rank, owners, tags, browse_path,
    first_seen, last_seen)
SELECT 'postgres://warehouse:5432',
    'db_' || (i %% 50) || '.schema_' || (i %% 400) || '.table_' || i,
    jsonb_build_object('schema', jsonb_build_object(
        '_producer', 'https://github.com/OpenLineage/OpenLineage/tree/1.23.0/client/python',
        '_schemaURL', 'https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json',
        'fields', (SELECT jsonb_agg(jsonb_build_object('name', 'column_' || f || '_' || i,
            'type', 'VARCHAR(255)', 'description', 'column ' || f || ' of table ' || i))
            FROM generate_series(1, %(fields)s) AS f)))
    || CASE WHEN i %% %(every)s = 0 THEN jsonb_build_object('hierarchy', jsonb_build_object(
        '_producer', 'https://github.com/OpenLineage/OpenLineage/tree/1.40.0/client/python',
        '_schemaURL', 'https://openlineage.io/spec/facets/1-0-0/HierarchyDatasetFacet.json',
        'hierarchy', jsonb_build_array(
            jsonb_build_object('type', 'DATABASE', 'name', 'db_' || (i %% 50)),
            jsonb_build_object('type', 'SCHEMA', 'name', 'schema_' || (i %% 400)),
            jsonb_build_object('type', 'TABLE', 'name', 'table_' || i))))
      ELSE '{}'::jsonb END,
    jsonb_build_object('schema', jsonb_build_array('2026-01-01T00:00:00Z', 1))
    || CASE WHEN i %% %(every)s = 0
       THEN jsonb_build_object('hierarchy', jsonb_build_array('2026-01-01T00:00:00Z', 1))
       ELSE '{}'::jsonb END,
    '', '', false, now(), 3, '[]', '[]', '', now(), now()
FROM generate_series(1, %(datasets)s) AS i
"""


def build(database: str, datasets: int, share: float, fields: int, reuse: bool) -> None:
    env = {**os.environ, "DATABASE_URL": database}
    name = database.rsplit("/", 1)[1]
    admin = database.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and not reuse:
            conn.execute(f'DROP DATABASE "{name}"')
        if not exists or not reuse:
            conn.execute(f'CREATE DATABASE "{name}"')
    if reuse and exists:
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("UPDATE catalog_dataset SET browse_path = '' WHERE browse_path <> ''")
        return
    subprocess.run([BIN / "python", "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    every = max(1, round(1 / share))
    with psycopg.connect(database, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute(BUILD, {"datasets": datasets, "fields": fields, "every": every})
        conn.execute("VACUUM ANALYZE catalog_dataset")
        size = conn.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('catalog_dataset'))"
        ).fetchone()[0]
        print(f"built {datasets:,} datasets ({size}) in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--datasets", type=int, default=1_000_000)
    parser.add_argument("--share", type=float, default=0.5, help="share with a hierarchy")
    parser.add_argument("--fields", type=int, default=12, help="schema columns per dataset")
    parser.add_argument("--span", type=int, default=0, help="ids per step (0: the default)")
    parser.add_argument("--reuse", action="store_true", help="keep the built rows")
    options = parser.parse_args()
    build(options.database, options.datasets, options.share, options.fields, options.reuse)

    os.environ["DATABASE_URL"] = options.database
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    import django

    django.setup()
    from catalog.services import browse_paths

    span = options.span or browse_paths.SPAN
    longest, last = 0.0, time.perf_counter()

    def progress(done: browse_paths.Filled) -> None:
        nonlocal longest, last
        now = time.perf_counter()
        longest, last = max(longest, now - last), now

    print(f"load before: {os.getloadavg()[0]:.1f}")
    started = time.perf_counter()
    done = browse_paths.fill(span=span, progress=progress)
    took = time.perf_counter() - started
    print(
        f"fill: {done.filled:,} filled in {took:.1f} s ({done.filled / took:,.0f} rows/s), "
        f"{done.spans} spans of {span:,} ids, longest span {longest * 1000:.0f} ms"
    )
    started = time.perf_counter()
    again = browse_paths.fill(span=span)
    print(f"again (nothing left): {again.filled} filled in {time.perf_counter() - started:.1f} s")
    with psycopg.connect(options.database, autocommit=True) as conn:
        started = time.perf_counter()
        conn.execute(
            "UPDATE catalog_dataset SET browse_path = browse_path || '' "
            "WHERE facet_versions ? 'hierarchy'"
        )
        took = time.perf_counter() - started
        print(f"one UPDATE of the same rows, one transaction: {took:.1f} s")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
