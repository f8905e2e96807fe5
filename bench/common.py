"""Helpers shared by the benchmarks: a throwaway server, payloads, percentiles.

Benchmarks talk only to 127.0.0.1 and stop by themselves.
"""

import os
import random
import secrets
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_CORPUS = ROOT / "tests" / "fixtures" / "openlineage"
TEMPLATE_DIRS = ("spark/dataproc-bigquery-1.23.0", "spark/dataproc-hive-simple-1.23.0")


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
        # `make run`'s worker (redis db 0) to chew through.
        REDIS_URL="redis://127.0.0.1:6379/8",
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
    result = subprocess.run(
        [BIN / "python", "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout


@contextmanager
def running_server(env: dict[str, str], workers: int, threads: int = 1) -> Iterator[str]:
    """gunicorn serving config.wsgi on a free loopback port, stopped on exit."""
    port = free_port()
    process = subprocess.Popen(
        [
            BIN / "gunicorn",
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError("the benchmark server did not start")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


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


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
