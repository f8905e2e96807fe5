"""Where a single-event ingest request spends its CPU, profiled in one process.

Calls the shipped WSGI application (config.wsgi: the ingest fast path in front of Django)
with ``POST /api/v1/lineage`` environs built in memory, so the profile holds the server's
work only: no HTTP parsing, no client, no other process. Prints CPU microseconds per
request and the functions with the most cumulative and own time.

Usage: .venv/bin/python -m bench.profile_ingest [--events 2000] [--top 30]
It migrates a scratch database (lineage_bench_profile) first.
"""

import argparse
import cProfile
import io
import os
import pstats
import subprocess
import sys
import time

from bench.common import (
    DEFAULT_CORPUS,
    ROOT,
    bench_env,
    call_wsgi,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    require_stored,
    wsgi_environ,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--save", help="also write the profile here (for pstats/snakeviz)")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_profile"
    )
    args = parser.parse_args()

    env = migrated_database(args.database_url)
    # No broker: the derivation task is published from a background thread, whose CPU the
    # profile would pin on whatever the request thread was doing. Measured on its own
    # below instead (publish_cost).
    env["REDIS_URL"] = env["CELERY_BROKER_URL"] = "redis://127.0.0.1:9/0"
    token = new_token(env, "ingest")
    os.environ.update(env)

    from config.wsgi import application

    templates = load_templates(DEFAULT_CORPUS)
    warmup, bodies = make_events(templates, 200, seed=3), make_events(templates, args.events)
    call_wsgi(application, [wsgi_environ(body, token) for body in warmup])
    environs = [wsgi_environ(body, token) for body in bodies[: args.events // 2]]
    cpu = time.process_time()
    call_wsgi(application, environs)
    plain = (time.process_time() - cpu) / len(environs)
    environs = [wsgi_environ(body, token) for body in bodies[args.events // 2 :]]

    # CPU time, not wall time: other processes on the machine must not show up as ours.
    profile = cProfile.Profile(time.process_time)
    cpu, wall = time.process_time(), time.perf_counter()
    profile.enable()
    statuses = call_wsgi(application, environs)
    profile.disable()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    require_stored(statuses)
    print(
        f"{len(environs)} single-event requests, unprofiled: {plain * 1e6:.0f} µs CPU each; "
        f"{len(environs)} more profiled: {cpu / len(environs) * 1e6:.0f} µs CPU and "
        f"{wall / len(environs) * 1e6:.0f} µs wall each"
    )
    if args.save:
        profile.dump_stats(args.save)
    print(f"one derivation-task publish: {publish_cost(args.database_url):.0f} µs CPU")
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(args.top)
        print(out.getvalue())


def publish_cost(database_url: str, count: int = 300) -> float:
    """CPU microseconds of one ``catalog.derive_events`` publish to a live Redis, in a
    child process (this one was told the broker is away)."""
    env = bench_env(database_url)
    env.pop("CELERY_BROKER_URL", None)  # this process's "broker away" must not leak in
    code = (
        "import time, django; django.setup()\n"
        "from ingest.enqueue import publish\n"
        "[publish([i]) for i in range(20)]\n"
        "started = time.process_time()\n"
        f"[publish([i]) for i in range({count})]\n"
        f"print((time.process_time() - started) / {count} * 1e6)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return float(output.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
