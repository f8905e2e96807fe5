"""Admin page times on the big store that bench/read.py builds (1,000,000 events,
100,000 datasets, 300,000 edges): every registered model's changelist and a change page,
plus the stewards' usual filters, as a logged-in superuser over HTTP.

Also the lineage picture (dataset and job pages at depth 2 and 5, column mode, as of, the
Lineage explorer) on random nodes, and the ranked search boxes (substring, typo, runId).

With ``--shapes``, the worst graph shapes instead (bench/admin_shapes.py: a dense graph, a
wide fan-in and fan-out, a long chain, the picture's full budget) planted in a scratch
database, the picture pages requested in this process: seconds and bytes per page; with
``--rules`` too, derivation time of names under overlapping-repeat alias rules.

Usage: .venv/bin/python bench/read.py --requests 20   # builds lineage_bench_read
       .venv/bin/python bench/admin.py [--repeat 5] [--lineage-only]
       .venv/bin/python bench/admin.py --build --database postgres://.../my_bench
           (builds the same store as bench/read.py into a database of its own first)
       .venv/bin/python bench/admin.py --shapes [--rules] [--database postgres://.../scratch]
       .venv/bin/python bench/admin.py --rules   (the alias rules alone, in a scratch store)
Prints median and max milliseconds per page and flags any page over one second.
"""

import argparse
import random
import re
import secrets
import sys
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_env, manage, percentile, recreate_database, running_server
from bench.read import add_store_arguments, build

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_read"
LIST_MODELS = """
from django.contrib import admin
for model in admin.site._registry:
    first = model.objects.order_by("pk").values_list("pk", flat=True).first()
    print(model._meta.app_label, model._meta.model_name, first or "")
"""
FILTERS = [
    "/admin/ingest/event/?derivation_status__exact=failed",
    "/admin/ingest/event/?kind__exact=run&event_type=COMPLETE",
    "/admin/ingest/event/?received_within=24h",
    "/admin/ingest/event/?q=%23500000",
    "/admin/catalog/run/?state=FAIL",
    "/admin/catalog/dataset/?aliases=several",
    "/admin/catalog/dataset/?q=table_4242",
    "/admin/catalog/lineageedge/?o=-1",
    "/admin/",
]


def login(base: str, username: str, password: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base}/admin/login/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = session.post(
        f"{base}/admin/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": token,
            "next": "/admin/",
        },
        headers={"Referer": f"{base}/admin/login/"},
        timeout=30,
    )
    if "logout" not in response.text.lower():
        raise SystemExit("could not log in to the admin")
    return session


# Two column edges per lineage edge (id → id, amount → total), so the column-mode picture is
# measured with field lists and column edges to draw (bench/read.py's store has none).
COLUMN_EDGES = """
INSERT INTO catalog_column_lineage_edge (source_id, source_field, target_id, target_field,
    job_id, transformation_type, transformation_subtype, transformation_description, masking,
    key_hash, first_seen, last_seen, last_run_id, run_count)
SELECT e.source_id, f.source_field, e.target_id, f.target_field, e.job_id, 'DIRECT',
       'IDENTITY', '', false, sha256(convert_to(f.source_field || '>' || f.target_field, 'UTF8')),
       e.first_seen, e.last_seen, e.last_run_id, 1
FROM catalog_lineage_edge e
CROSS JOIN (VALUES ('id', 'id'), ('amount', 'total')) AS f(source_field, target_field)
ON CONFLICT DO NOTHING
"""


def add_column_edges(database_url: str) -> None:
    import psycopg

    started = time.monotonic()
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(COLUMN_EDGES)
        connection.execute("ANALYZE catalog_column_lineage_edge")
    print(f"  catalog_column_lineage_edge: {time.monotonic() - started:.1f}s", flush=True)


def lineage_pages(datasets: int, jobs: int, samples: int) -> list[str]:
    """Pictures around random nodes, and the search boxes (docs/adr/0047)."""
    rng = random.Random(47)
    pages = []
    for _ in range(samples):
        dataset, job = rng.randint(1, datasets), rng.randint(1, jobs)
        pages += [
            f"/admin/catalog/dataset/{dataset}/change/",
            f"/admin/catalog/dataset/{dataset}/change/?lineage_depth=5",
            f"/admin/catalog/dataset/{dataset}/change/?lineage_depth=3&lineage_columns=1",
            f"/admin/catalog/job/{job}/change/?lineage_depth=5",
            f"/admin/lineage/?node=dataset:{dataset}&lineage_depth=5&lineage_as_of=2030-01-01",
        ]
    table = rng.randint(1, datasets)
    pages += [
        f"/admin/catalog/dataset/?q=table_{table}",
        f"/admin/catalog/dataset/?q=tabel_{table}",  # a typo
        f"/admin/catalog/dataset/?q=able_{table // 10}",  # any part
        "/admin/catalog/dataset/?q=table",  # matches every dataset: capped
        f"/admin/catalog/job/?q=task_{rng.randint(1, jobs)}",
        "/admin/catalog/job/?q=dag_7",
        "/admin/catalog/run/?q=c4ca4238",  # a runId prefix
        "/admin/catalog/run/?q=task_42",  # runs of the matching jobs
        f"/admin/lineage/?q=table_{table}",
    ]
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--build", action="store_true", help="Build the store first.")
    add_store_arguments(parser, events=1_000_000, datasets=100_000)
    parser.add_argument(
        "--add-column-edges", action="store_true", help="Add column edges to a built store."
    )
    parser.add_argument("--samples", type=int, default=4, help="Random nodes to draw.")
    parser.add_argument(
        "--lineage-only", action="store_true", help="Only the picture and search pages."
    )
    parser.add_argument("--shapes", action="store_true", help="The worst graph shapes instead.")
    parser.add_argument("--rules", action="store_true", help="Alias rule costs (scratch store).")
    options = parser.parse_args()
    if options.shapes or options.rules:
        from bench import admin_shapes

        database = admin_shapes.DATABASE if options.database == DATABASE else options.database
        admin_shapes.main(database, options.repeat, options.shapes, options.rules)
        return
    env = bench_env(options.database)
    if options.build:
        started = time.monotonic()
        recreate_database(options.database)
        manage(env, "migrate", "--verbosity", "0")
        build(options.database, options)
        add_column_edges(options.database)
        print(f"built in {time.monotonic() - started:.0f}s", flush=True)
    if options.add_column_edges and not options.build:
        add_column_edges(options.database)
    password = secrets.token_urlsafe(16)
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model\n"
        "user, _ = get_user_model().objects.get_or_create(username='bench-admin')\n"
        "user.is_staff = user.is_superuser = True\n"
        f"user.set_password({password!r})\nuser.save()\n",
    )
    counts = manage(
        env,
        "shell",
        "--verbosity",
        "0",
        "-c",
        "from ingest.models import Event; "
        "from catalog.models import Dataset; "
        "from catalog.models import Job; "
        "print(Event.objects.order_by().count(), Dataset.objects.count(), Job.objects.count())",
    ).split()
    print(f"store: {int(counts[0]):,} events, {int(counts[1]):,} datasets")
    pages = lineage_pages(int(counts[1]), int(counts[2]), options.samples)
    lines = "" if options.lineage_only else manage(env, "shell", "-v", "0", "-c", LIST_MODELS)
    for line in lines.splitlines():
        app, model, first = ([*line.split(), ""])[:3]
        pages.append(f"/admin/{app}/{model}/")
        if first:
            pages.append(f"/admin/{app}/{model}/{first}/change/")
    pages += [] if options.lineage_only else FILTERS
    with running_server(env) as base:  # the shipped web server and layout
        session = login(base, "bench-admin", password)
        print(f"{'page':80} {'median ms':>10} {'max ms':>8}")
        slow = 0
        for page in pages:
            times = []
            for _ in range(options.repeat):
                started = time.perf_counter()
                response = session.get(base + page, timeout=60)
                times.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"{page}: HTTP {response.status_code}")
                # The admin answers a filter it does not know with a redirect to ?e=1: the
                # time of that page is not the filter's.
                if response.history:
                    raise SystemExit(f"{page}: redirected to {response.url}")
            median = percentile(times, 0.5)
            flag = "  OVER 1 s" if median > 1000 else ""
            slow += bool(flag)
            print(f"{page[:80]:80} {median:10.0f} {max(times):8.0f}{flag}", flush=True)
        print(f"{len(pages)} pages, {slow} over one second (median of {options.repeat})")


if __name__ == "__main__":
    main()
