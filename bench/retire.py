"""Retire and restore a namespace of 10,000 datasets: the time each takes (ADR 0078).

Builds, in its own scratch database (lineage_bench_retire unless --database), a namespace
with ``--datasets`` datasets and ``--jobs`` jobs (generate_series SQL, no events), starts
the shipped web server on 127.0.0.1, and prints the wall time of:
  - ``DELETE /marquez/api/v1/namespaces/{ns}`` over HTTP with a curate token (the retire);
  - the restore (catalog.services.retirement.restore_namespace, in this process: Marquez
    has no undelete call, the admin's restore action calls the same function);
  - the same DELETE again after the restore,
and that every dataset was hidden, then shown. Usage:
  .venv/bin/python bench/retire.py [--datasets 10000] [--jobs 500] [--database URL]
"""

import argparse
import http.client
import os
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_env, migrated_database, new_token, running_server

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_retire"
NAMESPACE = "postgres://warehouse:5432"

_BUILD = """
INSERT INTO catalog_dataset (namespace, name, display_rank, facets, facet_versions,
    description, lifecycle_state, is_dropped, first_seen, last_seen, updated_at, tags, owners,
    browse_path)
SELECT %(ns)s, 'schema_' || (i %% 50) || '.table_' || i, 3, '{}', '{}', '', '', false,
    now() - interval '30 days', now(), now(), '[]', '[]', ''
FROM generate_series(1, %(datasets)s) AS i
"""
_BUILD_JOBS = """
INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets, facet_versions,
    processing_type, job_type, integration, description, first_seen, last_seen, updated_at,
    tags, owners)
SELECT %(ns)s, 'job_' || i, sha256(convert_to(%(ns)s || chr(1) || 'job_' || i, 'UTF8')),
    false, '{}', '{}', '', '', '', '', now() - interval '30 days', now(), now(), '[]', '[]'
FROM generate_series(1, %(jobs)s) AS i
"""


def _delete(url: str, token: str, path: str) -> tuple[float, int]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    started = time.perf_counter()
    connection.request("DELETE", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    response.read()
    return time.perf_counter() - started, response.status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--database", default=DATABASE)
    options = parser.parse_args()
    print(f"building {options.datasets:,} datasets and {options.jobs:,} jobs ...", flush=True)
    env = migrated_database(options.database)
    import psycopg

    with psycopg.connect(options.database, autocommit=True) as connection:
        values = {"ns": NAMESPACE, "datasets": options.datasets, "jobs": options.jobs}
        connection.execute(_BUILD, values)
        connection.execute(_BUILD_JOBS, values)
        connection.execute("ANALYZE")
    token = new_token(env, "curate")
    path = f"/marquez/api/v1/namespaces/{quote(NAMESPACE, safe='')}"

    os.environ.update(bench_env(options.database))
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    import django

    django.setup()
    from catalog.models import Dataset
    from catalog.services.retirement import Actor, restore_namespace

    with running_server(env, workers=1, start_seconds=120) as url:  # a loaded machine
        seconds, status = _delete(url, token, path)
        hidden = Dataset.objects.retired().count()
        print(
            f"retire (DELETE over HTTP): {seconds * 1000:.0f} ms, status {status}, "
            f"{hidden:,} dataset(s) retired"
        )
        started = time.perf_counter()
        restored = restore_namespace(NAMESPACE, Actor("bench"))
        seconds = time.perf_counter() - started
        shown = Dataset.objects.current().count()
        print(
            f"restore (service): {seconds * 1000:.0f} ms, {restored:,} row(s) restored, "
            f"{shown:,} dataset(s) current"
        )
        seconds, status = _delete(url, token, path)
        print(f"retire again (DELETE over HTTP): {seconds * 1000:.0f} ms, status {status}")


if __name__ == "__main__":
    main()
