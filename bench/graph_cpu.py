"""CPU per graph request, Python and PostgreSQL backend apart, against the bare walk's.

Wall time on a shared machine mostly measures the wait for a core; CPU does not. This calls
Django's WSGI handler in this process, with production settings, for graph requests on a
store bench/read.py built (``--small``: issue 42's small store), and reads

- the Python CPU of the whole request cycle (``time.process_time``: middleware,
  authentication, the view, the JSON), and
- the CPU of the PostgreSQL backend serving this process's connection
  (``/proc/<backend pid>/stat``, utime + stime; the server must run on this machine),

then does the same for bench/bare_reads.py's bare walk over one psycopg connection, the
baseline of issue 42 item 1. ``--profile`` prints cProfile's top functions of the
graph requests instead.

Usage: .venv/bin/python bench/graph_cpu.py --database URL [--requests 80] [--rounds 2]
       [--profile] [--root dataset|job]
"""

import argparse
import cProfile
import os
import pstats
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TICKS = os.sysconf("SC_CLK_TCK")


def backend_cpu(pid: int) -> float:
    """Seconds of CPU (user + system) the process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--requests", type=int, default=80)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--statements", action="store_true", help="backend CPU and wall time per statement"
    )
    parser.add_argument("--root", choices=("dataset", "job"), default="dataset")
    options = parser.parse_args()

    from bench.common import bench_env

    os.environ.update(bench_env(options.database))
    # One backend for the whole run, so its CPU can be read: the shipped 60 s would reopen
    # the connection mid-round on a loaded machine (a reconnect per minute is not the cost
    # measured here).
    os.environ["DATABASE_CONN_MAX_AGE"] = "3600"
    import django

    django.setup()
    import psycopg
    from django.core.wsgi import get_wsgi_application
    from django.db import connection
    from django.test import RequestFactory

    from bench import bare_reads
    from ingest.services import create_token

    secret = create_token("bench graph cpu", "read")[1]
    application = get_wsgi_application()
    factory = RequestFactory()
    rng = random.Random(11)
    with psycopg.connect(options.database) as bare:
        count = bare.execute("SELECT count(*) FROM catalog_dataset").fetchone()[0]
        roots = [rng.randint(1, count) for _ in range(options.requests)]
        if options.root == "job":
            jobs = bare_reads.jobs_out_of(bare, roots)
            starts = bare_reads.job_starts(options.database, sorted(set(jobs)))
            nodes = [f"job:{job}" for job in jobs]
            walks = [bare_reads.walk_values(starts[job], 5, 500, first=1) for job in jobs]
        else:
            nodes = [f"dataset:{root}" for root in roots]
            walks = [bare_reads.walk_values([root], 5, 500) for root in roots]
    bounds = "direction=both&depth=5&max_nodes=500"
    paths = [f"/api/v1/lineage/graph?node={node}&{bounds}" for node in nodes]
    environs = [
        factory.get(path, HTTP_AUTHORIZATION=f"Bearer {secret}", SERVER_NAME="127.0.0.1").environ
        for path in paths
    ]

    def call(environ: dict) -> int:
        status: list[str] = []
        body = b"".join(application(dict(environ), lambda line, headers: status.append(line)))
        if not status[0].startswith("200"):
            raise SystemExit(f"unexpected answer {status[0]}: {body[:300]!r}")
        return len(body)

    for environ in environs[:10]:  # warm-up: imports, plans, the token cache
        call(environ)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        django_backend = cursor.fetchone()[0]
    if options.statements:
        spent: dict[str, list[float]] = {}

        def timed(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
            cpu, wall = backend_cpu(django_backend), time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                key = " ".join(sql.split())[:90]
                entry = spent.setdefault(key, [0, 0.0, 0.0])
                entry[0] += 1
                entry[1] += backend_cpu(django_backend) - cpu
                entry[2] += time.perf_counter() - wall

        with connection.execute_wrapper(timed):
            for environ in environs:
                call(environ)
        n = len(environs)
        print(f"{'calls/req':>9} {'backend ms':>10} {'wall ms':>8}  statement")
        for key, (calls, cpu, wall) in sorted(spent.items(), key=lambda item: -item[1][1]):
            print(f"{calls / n:9.1f} {cpu * 1000 / n:10.2f} {wall * 1000 / n:8.2f}  {key}")
        return
    if options.profile:
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        for environ in environs:
            call(environ)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return
    with psycopg.connect(options.database, autocommit=True) as bare:
        bare_backend = bare.execute("SELECT pg_backend_pid()").fetchone()[0]
        for values in walks[:10]:
            bare.execute(bare_reads.BARE_WALK, values).fetchall()
        print(f"{options.requests} {options.root}-root graph requests per round, `uptime`:")
        print(os.popen("uptime").read().strip())
        print(f"{'read':12} {'Python ms':>10} {'backend ms':>11} {'bytes':>9}")
        for _ in range(options.rounds):
            python, backend, size = time.process_time(), backend_cpu(django_backend), 0
            for environ in environs:
                size += call(environ)
            python = (time.process_time() - python) * 1000 / len(environs)
            backend = (backend_cpu(django_backend) - backend) * 1000 / len(environs)
            print(f"{'graph':12} {python:10.2f} {backend:11.2f} {size // len(environs):9d}")
            python, backend = time.process_time(), backend_cpu(bare_backend)
            for values in walks:
                bare.execute(bare_reads.BARE_WALK, values).fetchall()
            python = (time.process_time() - python) * 1000 / len(walks)
            backend = (backend_cpu(bare_backend) - backend) * 1000 / len(walks)
            print(f"{'bare walk':12} {python:10.2f} {backend:11.2f}", flush=True)


if __name__ == "__main__":
    main()
