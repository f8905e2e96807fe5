"""A batch request's CPU in one web process: one request at a time, and two at once.

Why: from outside (``bench/ingest.py``) a batch round falls under 0.5x bare COPY when
both clients' connections land on one web worker, whose Python then serves two requests
under one GIL (docs/performance.md, "Ingest"). This measures that case in process, where
the load of a shared machine moves it least: the shipped WSGI application
(``config.wsgi``: production settings, the broker at ``BENCH_REDIS_URL``) is called with
``POST /api/v1/lineage/batch`` environs built in memory, from one thread and then from
two threads at once, alternated --rounds times. Per mode it prints the process's CPU per
event (every thread: requests, the publisher), PostgreSQL's (the backends of the
database), events/s, and with --split where one request's CPU goes, stage by stage, the
stages called as the view calls them (thread CPU, one thread).

Usage: .venv/bin/python -m bench.batch_cpu [--events 4000] [--rounds 3] [--split]
It migrates a scratch database (--database-url, made anew) first.
"""

import argparse
import os
import queue
import resource
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench.common import (
    DEFAULT_CORPUS,
    call_wsgi,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    wsgi_environ,
)
from bench.ingest import _database_cpu

BATCH_PATH = "/api/v1/lineage/batch"


def batch_bodies(templates: list[dict[str, Any]], events: int, size: int, seed: int) -> list[bytes]:
    """``events`` distinct events as JSON arrays of ``size``, as bench/ingest.py posts them."""
    made = make_events(templates, events, seed=seed)
    return [b"[" + b",".join(made[start : start + size]) + b"]" for start in range(0, events, size)]


def batch_environ(body: bytes, token: str) -> dict[str, object]:
    environ = wsgi_environ(body, token)
    environ["PATH_INFO"] = BATCH_PATH
    return environ


class Servers:
    """Threads that call the application with the bodies they are given, kept for the whole
    run as a web worker's threads are: each keeps its database connection (and so its
    PostgreSQL backend, whose CPU is counted) from one measurement to the next."""

    def __init__(self, application: Callable[..., Any], token: str, count: int) -> None:
        self.application = application
        self.token = token
        self.inboxes: list[queue.Queue[list[bytes] | None]] = [queue.Queue() for _ in range(count)]
        self.done: queue.Queue[list[str]] = queue.Queue()
        self.threads = [
            threading.Thread(target=self._serve, args=(inbox,), daemon=True)
            for inbox in self.inboxes
        ]
        for thread in self.threads:
            thread.start()

    def _serve(self, inbox: "queue.Queue[list[bytes] | None]") -> None:
        while (bodies := inbox.get()) is not None:
            statuses = call_wsgi(
                self.application, [batch_environ(body, self.token) for body in bodies]
            )
            self.done.put([status for status in statuses if not status.startswith("200")])

    def run(self, bodies: list[bytes], threads: int) -> float:
        """Post ``bodies`` from the first ``threads`` threads at once, each its share in
        turn; the seconds until the last answered."""
        started = time.perf_counter()
        for number in range(threads):
            self.inboxes[number].put(bodies[number::threads])
        failures = [status for _ in range(threads) for status in self.done.get()]
        seconds = time.perf_counter() - started
        if failures:
            raise SystemExit(f"{len(failures)} batches refused, e.g. {failures[0]}")
        return seconds

    def stop(self) -> None:
        for inbox in self.inboxes:
            inbox.put(None)
        for thread in self.threads:
            thread.join()


@dataclass(frozen=True)
class Figures:
    """Per event: the process's CPU (user, system), its page faults and context switches,
    PostgreSQL's CPU; and events/s."""

    user: float  # µs
    system: float  # µs
    faults: float
    switches: float
    database: float  # µs
    rate: float

    @property
    def process(self) -> float:
        return self.user + self.system


def measure(
    servers: Servers, database_url: str, bodies: list[bytes], events: int, threads: int
) -> Figures:
    database_before = _database_cpu(database_url)
    before = resource.getrusage(resource.RUSAGE_SELF)
    seconds = servers.run(bodies, threads)
    # The publisher thread sends the last batch's task after its commit: let it finish.
    time.sleep(0.2)
    after = resource.getrusage(resource.RUSAGE_SELF)
    database = _database_cpu(database_url) - database_before
    return Figures(
        (after.ru_utime - before.ru_utime) / events * 1e6,
        (after.ru_stime - before.ru_stime) / events * 1e6,
        (after.ru_minflt - before.ru_minflt) / events,
        (after.ru_nvcsw + after.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw) / events,
        database / events * 1e6,
        events / seconds,
    )


def split(bodies: list[bytes], events: int) -> dict[str, float]:
    """Thread CPU µs per event of each stage of the batch view, called in its order."""
    from ingest import services
    from ingest.parsing import parse_json
    from ingest.validation import validate_openlineage

    spent: dict[str, float] = defaultdict(float)

    @contextmanager
    def stage(name: str) -> Iterator[None]:
        started = time.thread_time()
        yield
        spent[name] += time.thread_time() - started

    for body in bodies:
        with stage("parse (orjson, depth, exactness)"):
            documents = parse_json(body)
        with stage("validate"):
            records = [
                validate_openlineage(document, f"/{index}")
                for index, document in enumerate(documents)
            ]
        with stage("serialise (canonical JSON, digest, checks)"):
            rows = [services.serialise(record) for record in records]
        with stage("columns (Python lists)"):
            columns = services._columns(rows)
        with stage("INSERT (dump, send, wait, fetch)"), services._server_binding_cursor() as cursor:
            answer = cursor.execute(services._INSERT_MANY, columns).fetchall()
        created = {bytes(digest): event_id for event_id, digest in answer}
        with stage("answers (ids, enqueue)"):
            services._stored(rows, created)
    return {name: seconds / events * 1e6 for name, seconds in spent.items()}


def _line(figures: Figures) -> str:
    return (
        f"process {figures.process:6.1f} µs/event (user {figures.user:5.1f}, system "
        f"{figures.system:5.1f}), {figures.faults:5.1f} page faults and {figures.switches:4.2f} "
        f"context switches/event, PostgreSQL {figures.database:6.1f} µs/event, "
        f"{figures.rate:6.0f} events/s, load {os.getloadavg()[0]:.2f}"
    )


def _median(figures: list[Figures]) -> Figures:
    names = Figures.__dataclass_fields__
    return Figures(*(statistics.median(getattr(one, name) for one in figures) for name in names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--split", action="store_true", help="also the one-thread stage split")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_batch_cpu"
    )
    args = parser.parse_args()

    env = migrated_database(args.database_url)
    # Connections kept for the whole run, so that their backends' CPU can be read.
    env["DATABASE_CONN_MAX_AGE"] = "3600"
    token = new_token(env, "ingest")
    os.environ.update(env)
    from config.wsgi import application

    templates = load_templates(DEFAULT_CORPUS)
    servers = Servers(application, token, 2)
    servers.run(batch_bodies(templates, 1000, args.batch_size, 1), 2)
    print(
        f"{args.events} events per measurement in batches of {args.batch_size}, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    results: dict[int, list[Figures]] = {1: [], 2: []}
    seed = 100
    for number in range(args.rounds):
        for threads in (1, 2):
            seed += 1
            bodies = batch_bodies(templates, args.events, args.batch_size, seed)
            result = measure(servers, args.database_url, bodies, args.events, threads)
            results[threads].append(result)
            print(f"round {number + 1}, {threads} thread(s): {_line(result)}", flush=True)
    for threads, figures in results.items():
        print(f"{threads} thread(s), median of {args.rounds}: {_line(_median(figures))}")
    servers.stop()
    if args.split:
        seed += 1
        stages = split(batch_bodies(templates, args.events, args.batch_size, seed), args.events)
        print("one thread, stage by stage (thread CPU µs/event):")
        for stage, micros in stages.items():
            print(f"  {stage:45s} {micros:6.1f}")
        print(f"  {'total':45s} {sum(stages.values()):6.1f}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
