"""Single-event ingest under several gunicorn layouts, in interleaved rounds.

Each round starts the shipped configuration (config/gunicorn.conf.py) once per layout,
sends single POSTs with wrk for --seconds, and measures the INSERT+COMMIT ceiling once
(the same one bench/ingest.py prints), so every layout of a round is compared under the
same load on the machine. Prints events/s and the ratio to the ceiling per layout and
round, then the median per layout.

Usage: .venv/bin/python -m bench.layouts [--rounds 3] [--seconds 6]
       [--layout gthread:2x4 --layout sync:4x1 --layout gthread:2x4,NAME=value ...]
It migrates a scratch database (lineage_bench) first. Needs wrk.
"""

import argparse
import shutil
import statistics
from pathlib import Path

from bench.common import (
    DEFAULT_CORPUS,
    bench_env,
    load_templates,
    make_events,
    manage,
    recreate_database,
    running_server,
    server_cpu_seconds,
)
from bench.ingest import ceiling_rows, ceiling_single, post_all, reset_ceiling_table, wrk_single

# worker class:processes x threads. The first is what config/gunicorn.conf.py ships.
DEFAULT_LAYOUTS = ["gthread:2x4", "gthread:2x2", "gthread:3x2", "sync:2x1", "sync:4x1"]


def parse_layout(text: str) -> tuple[str, int, int, dict[str, str]]:
    """``class:WxT`` and optional ``,NAME=value`` environment for the server (to compare a
    setting in the same rounds, e.g. ``gthread:2x4,LINEAGE_ENQUEUE_INTERVAL_MS=0``)."""
    layout, *settings = text.split(",")
    worker_class, _, shape = layout.partition(":")
    workers, _, threads = shape.partition("x")
    extra = dict(setting.split("=", 1) for setting in settings)
    return worker_class, int(workers), int(threads), extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layout", action="append", help="class:WxT, e.g. gthread:2x4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed (apt-get install wrk)")
    layouts = args.layout or DEFAULT_LAYOUTS

    recreate_database(args.database_url)
    env = bench_env(args.database_url)
    manage(env, "migrate", "--no-input")
    token = manage(env, "create_token", "--scope", "ingest", "--name", "bench", "--quiet").strip()
    templates = load_templates(args.corpus)
    ceiling = ceiling_rows(make_events(templates, 4000, seed=1))
    results: dict[str, list[float]] = {layout: [] for layout in layouts}
    cpu_us: dict[str, list[float]] = {layout: [] for layout in layouts}
    seed = 10
    for round_number in range(1, args.rounds + 1):
        limit = ceiling_single(args.database_url, ceiling)
        print(f"round {round_number}: INSERT+COMMIT x4 ceiling {limit:.0f} events/s")
        for layout in layouts:
            worker_class, workers, threads, extra = parse_layout(layout)
            with running_server({**env, **extra}, workers, threads, worker_class) as url:
                warmup = make_events(templates, 200, seed=seed)
                post_all(url, token, "/api/v1/lineage", warmup, args.clients)
                bodies = make_events(templates, int(args.seconds * 4000), seed=seed + 1)
                seed += 2
                cpu = server_cpu_seconds(url)
                rate, p50, p95 = wrk_single(url, token, bodies, args.clients, args.seconds)
                cpu = server_cpu_seconds(url) - cpu
            served = rate * max(1, round(args.seconds))
            results[layout].append(rate / limit)
            cpu_us[layout].append(cpu / served * 1e6)
            print(
                f"  {layout:20} {rate:6.0f} events/s (p50 {p50:.1f} ms, p95 {p95:.1f} ms)"
                f"  ratio {rate / limit:.2f}  server CPU {cpu / served * 1e6:.0f} µs/event"
            )
    reset_ceiling_table(args.database_url)
    print("median per layout: ratio to its round's ceiling; server CPU per event")
    for layout, ratios in results.items():
        each = ", ".join(f"{ratio:.2f}" for ratio in ratios)
        print(
            f"  {layout:20} {statistics.median(ratios):.2f} ({each});"
            f"  {statistics.median(cpu_us[layout]):.0f} µs"
        )


if __name__ == "__main__":
    main()
