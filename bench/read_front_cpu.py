"""The reads' front path against Django's handler, in one process, alternating in blocks:
CPU per read request that the machine's load hardly moves (issue 42 item 1, ADR 0144).

Both variants are what config/wsgi.py builds, in this process, with production settings
(``bench.common.bench_env``): ``front`` is ``config.wsgi.application`` (what the server
serves: the reads' front path, config/read_front.py), ``django`` is
``config.wsgi.django_application`` (Django's handler and its middleware chain: what every
read went through before, since the ingest fast path hands a GET to it untouched). Each
request's body is read and closed as the server does (Django's ``request_finished`` runs
in ``close()``). The variants alternate every ``--block`` requests so both see the same
minutes, and each block starts with the other variant every other time. Printed per read
and variant: the thread's CPU per request (mean and median of the blocks' means, µs), and
the saving.

Reads: ``404`` (an authenticated GET of a dataset that does not exist) and bench/read.py's
reads beside their bare SQL (``bench.read.against_bare``'s paths).

Usage: .venv/bin/python bench/read_front_cpu.py --database URL [--datasets 480]
       [--blocks 20] [--block 25] [--only NAME ...]
"""

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bare_reads import load
from bench.common import bench_env, new_token
from bench.read import against_bare
from bench.read_request_cpu import caller

MISSING = "/api/v1/datasets/999999999"
ANSWERS = ("200", "404")  # the reads, and the missing dataset's


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--datasets", type=int, default=480, help="the store's datasets")
    parser.add_argument("--blocks", type=int, default=20, help="blocks per variant")
    parser.add_argument("--block", type=int, default=25, help="requests per block")
    parser.add_argument("--only", nargs="*", help="reads to measure (404, bench/read.py's)")
    options = parser.parse_args()
    env = bench_env(options.database)
    token = new_token(env, "read", "read-front-cpu")
    os.environ.update(env)
    import logging

    import config.wsgi

    logging.disable(logging.WARNING)  # a 404's "Not Found" line is not the read's cost
    variants = {
        "front": caller(config.wsgi.application, token, ANSWERS),
        "django": caller(config.wsgi.django_application, token, ANSWERS),
    }
    pick = argparse.Namespace(
        requests=options.blocks * options.block * 2 + 50,
        datasets=options.datasets,
        database=options.database,
    )
    paths = {"404": [MISSING] * pick.requests}
    paths |= {
        name: [pair.path for pair in pairs]
        for name, pairs in against_bare(pick, random.Random(11)).items()
    }
    wanted = options.only or list(paths)
    print(f"{'read':28} {'front µs':>9} {'django µs':>10} {'saved µs':>9} {'median':>7}  load")
    for name in wanted:
        queue = iter(paths[name])
        for call in variants.values():  # warm both: connection, kept statements, caches
            for _ in range(20):
                call(next(queue))
        spent: dict[str, list[float]] = {label: [] for label in variants}
        for block in range(options.blocks * 2):
            # pairs of blocks, each pair's first variant alternating: front django django front
            order = list(variants) if block // 2 % 2 == 0 else list(reversed(variants))
            label = order[block % 2]
            batch = [next(queue, paths[name][0]) for _ in range(options.block)]
            started = time.thread_time_ns()
            for path in batch:
                variants[label](path)
            spent[label].append((time.thread_time_ns() - started) / options.block / 1000)
        front, django = statistics.mean(spent["front"]), statistics.mean(spent["django"])
        front_m, django_m = statistics.median(spent["front"]), statistics.median(spent["django"])
        print(
            f"{name:28} {front:9.1f} {django:10.1f} {django - front:9.1f} {django_m - front_m:7.1f}"
            f"  {load()}",
            flush=True,
        )


if __name__ == "__main__":
    main()
