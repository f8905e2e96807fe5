"""Helpers shared by the benchmarks: a throwaway server, payloads, percentiles.

Benchmarks talk only to 127.0.0.1 and stop by themselves.
"""

import http.client
import io
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from scripts import run_local

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_CORPUS = ROOT / "tests" / "fixtures" / "openlineage"
TEMPLATE_DIRS = ("spark/dataproc-bigquery-1.23.0", "spark/dataproc-hive-simple-1.23.0")


# Prefix a command with this (``python -c PEAK_PROBE script args...``) to have it print its
# own peak RSS as it exits: VmHWM of the child itself, where ru_maxrss of a child would also
# count the pages it shared with the parent between fork and exec.
PEAK_PROBE = (
    "import atexit, runpy, sys\n"
    "def peak():\n"
    "    status = open('/proc/self/status').read()\n"
    "    print('peak-kib', status.split('VmHWM:')[1].split()[0], file=sys.stderr)\n"
    "atexit.register(peak)\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def peak_mib(stderr: str) -> float:
    """The peak RSS (MiB) a command run under ``PEAK_PROBE`` printed last."""
    return int(stderr.rsplit("peak-kib", 1)[1].split()[0]) / 1024


def run_in_threads(target: Callable[[], None], count: int) -> float:
    """Run ``target`` in ``count`` threads at once; the seconds until the last one ends."""
    threads = [threading.Thread(target=target) for _ in range(count)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bench_env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(48),
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_SECURE_COOKIES="false",
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        DATABASE_URL=database_url,
        # Its own Redis database, so a bench run without workers leaves no tasks behind for
        # `make run`'s worker (redis db 0) to chew through; BENCH_REDIS_URL picks another.
        REDIS_URL=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8"),
        LOG_LEVEL="WARNING",
    )
    return env


def recreate_database(database_url: str) -> None:
    import psycopg

    base, _, name = database_url.rpartition("/")
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def manage(env: dict[str, str], *args: str) -> str:
    """``manage.py`` with ``args`` in ``env`` (as ``make run`` runs it); what it printed."""
    return run_local.manage(*args, env=env, capture=True)


def migrated_database(database_url: str) -> dict[str, str]:
    """``database_url`` made anew and migrated; the server environment that reaches it."""
    recreate_database(database_url)
    env = bench_env(database_url)
    manage(env, "migrate", "--verbosity", "0")
    return env


def new_token(env: dict[str, str], scope: str, name: str = "bench") -> str:
    """The secret of a new API token of ``scope`` in ``env``'s database."""
    return manage(env, "create_token", "--scope", scope, "--name", name, "--quiet").strip()


# Jobs job0...job%(jobs)s of namespace "bench", by SQL: the runId benches build their stores.
BENCH_JOBS = """
INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets, facet_versions,
    processing_type, job_type, integration, description, lineage_edges_cut, updated_at, tags,
    owners)
SELECT 'bench', 'job' || i, sha256(convert_to('bench' || i, 'UTF8')), false, '{}', '{}', '',
    '', '', '', false, now(), '[]', '[]'
FROM generate_series(0, %(jobs)s) AS i
"""


def migrated_django_without_broker(database_url: str, fresh: bool = True) -> None:
    """Django set up in this process on ``database_url`` (made anew when ``fresh``) and
    migrated, with nothing enqueued on commit: the benchmark drives derivation itself,
    not through the broker."""
    if fresh:
        recreate_database(database_url)
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import ingest.services

    ingest.services.enqueue_derivation_on_commit = lambda event_ids: None


def built_store(
    database_url: str, build: Callable[[], None], contents: str, reuse: bool
) -> tuple[dict[str, str], str]:
    """A server environment on ``database_url`` and a read token for it.

    Unless ``reuse``, the database is made anew, migrated and filled by ``build`` first
    (``contents`` says what it builds, for the progress line).
    """
    env = bench_env(database_url)
    if not reuse:
        print(f"building {contents} ...", flush=True)
        started = time.monotonic()
        migrated_database(database_url)
        build()
        print(f"built in {time.monotonic() - started:.0f}s", flush=True)
    return env, new_token(env, "read")


def timed(connection: http.client.HTTPConnection, path: str, token: str) -> float:
    """Milliseconds for one authenticated GET of ``path``; anything but 200 stops the run."""
    started = time.perf_counter()
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - started) * 1000
    if response.status != 200:
        raise SystemExit(f"{path}: {response.status} {body[:300]!r}")
    return elapsed


def print_latencies(url: str, token: str, scenarios: dict[str, list[str]], layout: str) -> None:
    """Sequential keep-alive GETs of each scenario's paths against ``url``, after ten
    warm-up requests; prints p50, p95 and max (ms) a scenario."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    count = len(next(iter(scenarios.values()), []))
    print(f"\n{count} sequential keep-alive requests each, web server {layout}")
    print(f"{'request':34} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, paths in scenarios.items():
        for path in paths[:10]:  # warm-up: caches, connections, plans
            timed(connection, path, token)
        latencies = [timed(connection, path, token) for path in paths]
        print(
            f"{name:34} {percentile(latencies, 0.5):8.1f} "
            f"{percentile(latencies, 0.95):8.1f} {max(latencies):8.1f}",
            flush=True,
        )


# What a benchmark may start besides the shipped server, to compare (bench/layouts.py).
# gunicorn is a development dependency for that comparison only; the image does not ship it.
SERVERS = ("granian", "gunicorn-gthread", "gunicorn-sync")


def server_command(server: str, workers: int | None, threads: int | None) -> list[str]:
    """The command line that serves config.wsgi with ``server`` (one of ``SERVERS``); the
    shipped one is ``python -m config.server``, which reads its layout from the environment."""
    if server == "granian":
        return [str(BIN / "python"), "-m", "config.server"]
    worker_class = server.removeprefix("gunicorn-")
    if server not in SERVERS or shutil.which("gunicorn", path=str(BIN)) is None:
        raise SystemExit(f"unknown or missing server {server!r} (one of {', '.join(SERVERS)})")
    return [
        str(BIN / "gunicorn"),
        "config.wsgi",
        f"--worker-class={worker_class}",
        f"--workers={workers or 2}",
        f"--threads={threads or 8}",
        "--preload",
        "--access-logfile=-",
        "--log-level=warning",
    ]


@contextmanager
def running_server(
    env: dict[str, str],
    workers: int | None = None,
    threads: int | None = None,
    server: str = "granian",
    start_seconds: float = 30.0,
    root: Path = ROOT,
) -> Iterator[str]:
    """The web server as shipped (``python -m config.server``: granian, what the image and the
    chart run) serving config.wsgi on a free loopback port, stopped on exit.

    ``workers`` and ``threads`` override WEB_WORKERS and WEB_THREADS the way the chart sets
    them (to compare layouts); left out, the shipped defaults apply. ``server`` picks another
    server of ``SERVERS`` to compare with; ``start_seconds`` how long it may take to start
    (longer on a loaded machine); ``root`` the checkout whose code it serves (another
    tree's, to compare code in the same minutes). Metrics are on as in the chart
    (PROMETHEUS_MULTIPROC_DIR), and so is the access log, which goes to /dev/null.
    """
    port = free_port()
    metrics = tempfile.mkdtemp(prefix="bench-metrics-")
    env = {
        **env,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "PROMETHEUS_MULTIPROC_DIR": metrics,
        "LOG_LEVEL": "WARNING",
    }
    if workers is not None:
        env["WEB_WORKERS"] = str(workers)
    if threads is not None:
        env["WEB_THREADS"] = str(threads)
    command = server_command(server, workers, threads)
    if server != "granian":
        command.append(f"--bind=127.0.0.1:{port}")
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    _SERVER_PIDS[url] = process.pid
    try:
        wait_for_port(port, start_seconds, "the benchmark server")
        yield url
    finally:
        _SERVER_PIDS.pop(url, None)
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(metrics, ignore_errors=True)


def wait_for_port(port: int, seconds: float, what: str) -> None:
    """Until a connection to 127.0.0.1:``port`` is accepted; RuntimeError naming ``what``
    after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not start")


_SERVER_PIDS: dict[str, int] = {}


def server_cpu_seconds(url: str) -> float:
    """CPU seconds (user + system) used so far by the server at ``url``: its main process
    and its workers. Unlike a rate, it hardly moves when other processes load the
    machine, so per-request CPU compares code and layouts fairly."""
    return tree_cpu_seconds(_SERVER_PIDS[url])


def server_workers(url: str) -> list[int]:
    """The process ids of the workers of the server at ``url`` (its child processes)."""
    import psutil

    return [child.pid for child in psutil.Process(_SERVER_PIDS[url]).children()]


def worker_switches(url: str) -> int:
    """Context switches so far (voluntary and not) of every thread of the server's workers
    at ``url``, read from /proc (a process's own figure counts its main thread only); a
    thread that ended meanwhile takes its count with it."""
    total = 0
    for pid in server_workers(url):
        for status in Path(f"/proc/{pid}/task").glob("*/status"):
            try:
                lines = status.read_text().splitlines()
            except OSError:  # the thread ended
                continue
            total += sum(int(line.split()[1]) for line in lines if "ctxt_switches" in line)
    return total


def cpu_seconds_by_pid(pids: Iterable[int]) -> dict[int, float]:
    """User plus system CPU seconds so far of each live process of ``pids`` (one gone
    meanwhile is left out)."""
    import psutil

    spent = {}
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        spent[pid] = times.user + times.system
    return spent


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of process ``pid`` and its descendants so far: the live processes, and
    the children each has reaped (a server that replaces its workers keeps their time in
    its children times). 0 when the process is gone."""
    import psutil

    try:
        root = psutil.Process(pid)
        total = 0.0
        for member in [root, *root.children(recursive=True)]:
            times = member.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
        return total
    except psutil.NoSuchProcess:
        return 0.0


def machine_busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy (not idle, not waiting on I/O)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle, iowait = fields[3], fields[4]
    return (sum(fields[:8]) - idle - iowait) / os.sysconf("SC_CLK_TCK")


def load_templates(corpus: Path) -> list[dict[str, Any]]:
    """Real Spark events of 2-4 KB (compact JSON) to vary."""
    templates = []
    for folder in TEMPLATE_DIRS:
        for path in sorted((corpus / folder).glob("*.json")):
            event = orjson.loads(path.read_bytes())
            if 1500 <= len(orjson.dumps(event)) <= 5000 and "run" in event:
                templates.append(event)
    if not templates:
        raise SystemExit(f"no Spark templates under {corpus}; pass --corpus")
    return templates


def make_events(templates: list[dict[str, Any]], count: int, seed: int = 7) -> list[bytes]:
    """``count`` distinct events: each template with a fresh runId, eventTime and job name."""
    rng = random.Random(seed)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    events = []
    for index in range(count):
        event = orjson.loads(orjson.dumps(templates[index % len(templates)]))
        event["run"]["runId"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        event["eventTime"] = (start + timedelta(seconds=index)).isoformat()
        event["job"]["name"] = f"{event['job']['name']}.{index % 97}"
        events.append(orjson.dumps(event))
    return events


def wsgi_environ(body: bytes, token: str) -> dict[str, object]:
    """A ``POST /api/v1/lineage`` of ``body``, as gunicorn hands it to the application."""
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/api/v1/lineage",
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def call_wsgi(application: Callable[..., Any], environs: list[dict[str, object]]) -> list[str]:
    """Call ``application`` in this process with each environ; the statuses it answered."""
    statuses: list[str] = []

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        statuses.append(status)

    for environ in environs:
        b"".join(application(environ, start_response))
    return statuses


def require_stored(statuses: list[str]) -> None:
    """Stop the benchmark unless every request was answered 201 (a new event stored)."""
    refused = [status for status in statuses if not status.startswith("201")]
    if refused:
        raise SystemExit(f"{len(refused)} requests not stored, e.g. {refused[0]}")


def round_order(names: list[str], number: int) -> list[str]:
    """The order variants ``names`` run in round ``number``: rotated by one a round and
    reversed every other one, so no variant always follows the same one (a drifting
    machine's speed lands on each alike)."""
    shift = number % len(names)
    order = names[shift:] + names[:shift]
    return order[::-1] if number % 2 else order


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
