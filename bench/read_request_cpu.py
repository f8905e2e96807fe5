"""CPU per read request, in process, beside its bare SQL's: a figure the machine's load
does not move much (issue 42, ADR 0105).

On a shared machine a wall-time p95 measures the neighbours as much as the code. This calls
the shipped WSGI application (production settings, as bench.common.bench_env gives the
server; config.wsgi.application, as the server imports it, closed as the server closes it)
in this process for each of bench/read.py's reads beside their bare SQL
(``bench.read.against_bare``: the same paths and the same bare statements), and prints per
request the Python CPU of this process (``time.process_time``), the CPU of its PostgreSQL
backend (``/proc/<backend pid>/stat``, the server runs on this machine), the statements
sent, and the same two CPU figures for the bare statement on its own psycopg connection.
``--profile NAME`` prints cProfile's heaviest functions for that read instead.

Usage: .venv/bin/python bench/read_request_cpu.py --database URL [--datasets 480]
       [--requests 40] [--only NAME ...] [--profile NAME]
The database is a store bench/read.py built (``--small`` keeps it under the name given to
its ``--database``); nothing is written but a read token.
"""

import argparse
import cProfile
import io
import os
import pstats
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bare_reads
from bench.common import bench_env, new_token
from bench.read import against_bare

_TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def backend_cpu_ms(pid: int) -> float:
    """User plus system CPU of process ``pid`` so far, in ms (clock-tick resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * _TICK_MS


def print_profile(call: Callable[[str], bytes], paths: list[str]) -> None:
    """cProfile of ``call`` over ``paths``: the heaviest functions, cumulative and own time."""
    profile = cProfile.Profile()
    profile.enable()
    for path in paths:
        call(path)
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)
    print(out.getvalue())


def environ(path: str, token: str) -> dict[str, object]:
    parts = urlsplit(path)
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": parts.path,
        "QUERY_STRING": parts.query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def in_process_reader(database: str, token_name: str) -> Callable[[str], bytes]:
    """Django set up in this process on ``database`` with the settings the bench's server
    gets (``bench_env``), a new read token, and a function that GETs a path from the
    shipped WSGI application with it and returns the body (anything but a 200 stops the
    bench)."""
    env = bench_env(database)
    token = new_token(env, "read", token_name)
    os.environ.update(env)
    # The application as config/wsgi.py serves it (what config/server.py's granian imports):
    # the reads' front path (config/read_front.py, ADR 0144) in front of Django's handler.
    from config.wsgi import application

    return caller(application, token)


def captured_and_timed(
    call: Callable[[str], bytes], path: str, requests: int
) -> tuple[bytes, list[str], list[float]]:
    """One request's body and statements (after a warm-up request: prepared statements,
    caches), then the milliseconds of ``requests`` more."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    call(path)
    with CaptureQueriesContext(connection) as captured:
        body = call(path)
    statements = [query["sql"] for query in captured.captured_queries]
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        call(path)
        times.append((time.perf_counter() - started) * 1000)
    return body, statements, times


def caller(
    application: Any, token: str, answers: tuple[str, ...] = ("200",)
) -> Callable[[str], bytes]:
    """A function that GETs a path from the WSGI ``application`` with ``token``, reads and
    closes the answer as the server does, and returns its body; a status not in ``answers``
    stops the bench."""

    def call(path: str) -> bytes:
        status: list[str] = []
        answer = application(environ(path, token), lambda s, h: status.append(s))
        body = b"".join(answer)
        if hasattr(answer, "close"):
            answer.close()  # as the server does: Django's request_finished runs here
        if status[0][:3] not in answers:
            raise SystemExit(f"{path}: {status[0]} {body[:300]!r}")
        return body

    return call


def tallied(function: Callable[..., Any], label: str, spent: dict[str, int]) -> Callable[..., Any]:
    """``function``, adding the thread CPU nanoseconds of each call to ``spent[label]``."""

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time_ns()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0) + time.thread_time_ns() - started

    return timed


def warm_then_time(
    call: Callable[[str], None],
    path: Callable[[], str],
    requests: int,
    warm: int,
    spent: dict[str, int],
) -> int:
    """Thread CPU nanoseconds of ``requests`` calls of ``call`` on ``path()``'s paths, after
    ``warm`` calls (connection, caches, kept statements); ``spent``, the caller's per-piece
    tally, is emptied when the timing starts."""
    for _ in range(warm):
        call(path())
    paths = [path() for _ in range(requests)]
    spent.clear()
    started = time.thread_time_ns()
    for each in paths:
        call(each)
    return time.thread_time_ns() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--datasets", type=int, default=480, help="the store's datasets")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=15)
    parser.add_argument("--only", nargs="*", help="reads to measure (bench/read.py's names)")
    parser.add_argument("--profile", help="print cProfile's heaviest functions for this read")
    options = parser.parse_args()
    call = in_process_reader(options.database, "read-request-cpu")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    pick = argparse.Namespace(
        requests=options.warmup + options.requests,
        datasets=options.datasets,
        database=options.database,
    )
    scenarios = against_bare(pick, random.Random(11))
    wanted = [options.profile] if options.profile else options.only or list(scenarios)

    print(
        f"{'read':30} {'python':>7} {'backend':>8} {'stmts':>6} {'bytes':>8}"
        f" {'bare py':>8} {'bare be':>8} {'cpu/bare':>9}  load"
    )
    with psycopg.connect(options.database, autocommit=True) as bare:
        bare_pid = bare.info.backend_pid
        for name in wanted:
            pairs = scenarios[name]
            for pair in pairs[: options.warmup]:
                call(pair.path)
                bare_reads.run(bare, pair)
            measured = pairs[options.warmup :]
            with CaptureQueriesContext(connection) as queries:
                size = len(call(measured[0].path))
            statements = len(queries)
            pid = connection.connection.info.backend_pid
            if options.profile:
                print_profile(call, [pair.path for pair in measured])
                return
            python = backend = bare_python = bare_backend = 0.0
            for pair in measured:
                started, backend_started = time.process_time(), backend_cpu_ms(pid)
                call(pair.path)
                python += time.process_time() - started
                backend += backend_cpu_ms(pid) - backend_started
                started, backend_started = time.process_time(), backend_cpu_ms(bare_pid)
                bare_reads.run(bare, pair)
                bare_python += time.process_time() - started
                bare_backend += backend_cpu_ms(bare_pid) - backend_started
            n = len(measured)
            mean: list[Any] = [
                python * 1000 / n,
                backend / n,
                bare_python * 1000 / n,
                bare_backend / n,
            ]
            print(
                f"{name:30} {mean[0]:7.1f} {mean[1]:8.1f} {statements:6} {size:8}"
                f" {mean[2]:8.1f} {mean[3]:8.1f} {(mean[0] + mean[1]) / (mean[2] + mean[3]):8.1f}x"
                f"  {bare_reads.load()}",
                flush=True,
            )


if __name__ == "__main__":
    main()
