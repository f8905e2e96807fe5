"""Single-event ingest under several web servers and layouts, in interleaved rounds.

Each round starts each layout once: the shipped server (``python -m config.server``,
granian) with its processes x threads, or gunicorn with a worker class to compare with,
sends single POSTs with wrk for --seconds, and measures the INSERT+COMMIT ceiling once
(the same one bench/ingest.py prints), so every layout of a round is compared under the
same load on the machine. Prints events/s and the ratio to the ceiling per layout and
round, then the median per layout.

Usage: .venv/bin/python -m bench.layouts [--rounds 3] [--seconds 6]
       [--layout granian:2x8 --layout gunicorn-gthread:2x8 --layout granian:2x8,NAME=value]
It migrates a scratch database (lineage_bench) first. Needs wrk.
"""

import argparse
import os
import shutil
import statistics
from pathlib import Path

from bench.common import (
    DEFAULT_CORPUS,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    running_server,
    server_cpu_seconds,
    worker_switches,
)
from bench.ingest import ceiling_rows, ceiling_single, post_all, reset_ceiling_table, wrk_single

# server:processes x threads. The first is what config/server.py ships; the gunicorn one is
# what shipped before ADR 0052.
DEFAULT_LAYOUTS = ["granian:2x8", "gunicorn-gthread:2x8", "granian:2x4", "granian:2x16"]


def parse_layout(text: str) -> tuple[str, int, int, dict[str, str]]:
    """``server:WxT`` (a server of bench.common.SERVERS) and optional ``,NAME=value``
    environment for the server (to compare a setting in the same rounds, e.g.
    ``granian:2x8,WEB_ACCESS_LOG=false``)."""
    layout, *settings = text.split(",")
    server, _, shape = layout.partition(":")
    workers, _, threads = shape.partition("x")
    extra = dict(setting.split("=", 1) for setting in settings)
    return server, int(workers), int(threads), extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layout", action="append", help="server:WxT, e.g. granian:2x8")
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

    env = migrated_database(args.database_url)
    token = new_token(env, "ingest")
    templates = load_templates(args.corpus)
    ceiling = ceiling_rows(make_events(templates, 4000, seed=1))
    results: dict[str, list[float]] = {layout: [] for layout in layouts}
    cpu_us: dict[str, list[float]] = {layout: [] for layout in layouts}
    switches: dict[str, list[float]] = {layout: [] for layout in layouts}
    seed = 10
    for round_number in range(1, args.rounds + 1):
        limit = ceiling_single(args.database_url, ceiling)
        print(
            f"round {round_number}: INSERT+COMMIT x4 ceiling {limit:.0f} events/s, "
            f"load {os.getloadavg()[0]:.1f}"
        )
        for layout in layouts:
            server, workers, threads, extra = parse_layout(layout)
            # A loaded shared machine starts the server slowly (35-55 s seen at load 10-14).
            with running_server(
                {**env, **extra}, workers, threads, server, start_seconds=180
            ) as url:
                warmup = make_events(templates, 200, seed=seed)
                post_all(url, token, "/api/v1/lineage", warmup, args.clients)
                bodies = make_events(templates, int(args.seconds * 4000), seed=seed + 1)
                seed += 2
                cpu = server_cpu_seconds(url)
                switched = worker_switches(url)
                rate, p50, p95 = wrk_single(url, token, bodies, args.clients, args.seconds)
                switched = worker_switches(url) - switched
                cpu = server_cpu_seconds(url) - cpu
            served = rate * max(1, round(args.seconds))
            results[layout].append(rate / limit)
            cpu_us[layout].append(cpu / served * 1e6)
            switches[layout].append(switched / served)
            print(
                f"  {layout:20} {rate:6.0f} events/s (p50 {p50:.1f} ms, p95 {p95:.1f} ms)"
                f"  ratio {rate / limit:.2f}  server CPU {cpu / served * 1e6:.0f} µs/event"
                f"  {switched / served:.1f} context switches/event"
            )
    reset_ceiling_table(args.database_url)
    print(
        "median per layout: ratio to its round's ceiling; server CPU and the workers' "
        "context switches per event"
    )
    for layout, ratios in results.items():
        each = ", ".join(f"{ratio:.2f}" for ratio in ratios)
        print(
            f"  {layout:20} {statistics.median(ratios):.2f} ({each});"
            f"  {statistics.median(cpu_us[layout]):.0f} µs;"
            f"  {statistics.median(switches[layout]):.1f} switches"
        )


if __name__ == "__main__":
    main()
