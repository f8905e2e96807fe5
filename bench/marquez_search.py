"""The Marquez mount's search filtered before its page (ADR 0175) against the page filtered.

On bench/search_scale.py's store of names (100,000 datasets in 20 namespaces of 5,000, one
alias and three columns each, 10,000 jobs in one namespace; no Spark jobs), each case is
read both ways, the median of --runs after one warm-up:

- "page": what the mount did until ADR 0175: ``search_catalog``'s ten best, the last-seen
  times of their datasets and jobs (two more statements), then the namespace or the days
  kept in Python;
- "found": ``search_found``, one statement: the filters inside each candidate branch, the
  order, the count and the page.

It prints how many hits each answers (and of how many, for "found"): the page's count is
what the defect lost. Usage:

  .venv/bin/python -m bench.marquez_search --database postgres://…/lc_search_100k \
      [--datasets 100000] [--runs 9] [--reuse]
"""

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_env
from bench.search_scale import build

TOMORROW = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(1)
# (label, query, search_found's filters)
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("customer_17, no filter, by name", "customer_17", {}),
    ("table, namespace db3, by name", "table", {"namespace": "postgres://db3:5432"}),
    ("table_4217, namespace db17", "table_4217", {"namespace": "postgres://db17:5432"}),
    ("schema_7, namespace db7", "schema_7", {"namespace": "postgres://db7:5432"}),
    ("table, a namespace with none", "table", {"namespace": "nowhere"}),
    ("customer_17, a namespace with none", "customer_17", {"namespace": "nowhere"}),
    ("task, namespace airflow, by update", "task", {"namespace": "airflow", "order": "last_seen"}),
    ("table, after tomorrow", "table", {"seen_after": TOMORROW}),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--datasets", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--reuse", action="store_true", help="keep the store already built")
    options = parser.parse_args()
    env = (
        bench_env(options.database)
        if options.reuse
        else build(options.database, options.datasets, 0)
    )
    os.environ.update(env)
    import django

    django.setup()
    from django.db import connection

    from catalog.models import Dataset, Job
    from catalog.reads.search import search_catalog, search_found

    def page(query: str, namespace: str | None = None, seen_after: Any = None, **_: Any) -> list:
        hits = search_catalog(query, 10, 0, None)
        seen = {}
        for kind, model in (("dataset", Dataset), ("job", Job)):
            ids = [hit.id for hit in hits if hit.type == kind]
            for row_id, last in model.objects.filter(id__any=ids).values_list("id", "last_seen"):
                seen[(kind, row_id)] = last
        return [
            hit
            for hit in hits
            if (namespace is None or hit.namespace == namespace)
            and (
                seen_after is None
                or ((last := seen[(hit.type, hit.id)]) is not None and last > seen_after)
            )
        ]

    def median_ms(call: Callable[[], Any]) -> tuple[float, Any]:
        call()
        times, answer = [], None
        for _ in range(options.runs):
            started = time.perf_counter()
            answer = call()
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times), answer

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM catalog_dataset_alias), (SELECT count(*) FROM "
            "catalog_job), (SELECT count(*) FROM catalog_dataset_field)"
        )
        aliases, jobs, columns = cursor.fetchone()
    print(f"{aliases:,} aliases, {jobs:,} jobs, {columns:,} columns; load {os.getloadavg()[0]:.1f}")
    for label, query, filters in CASES:
        page_ms, kept = median_ms(partial(page, query, **filters))
        found_ms, found = median_ms(partial(search_found, query, 10, 0, None, **filters))
        print(
            f"  {label:36} page {page_ms:6.1f} ms, {len(kept):2} hits; "
            f"found {found_ms:6.1f} ms, {len(found.hits):2} hits of {found.total}"
        )


if __name__ == "__main__":
    main()
