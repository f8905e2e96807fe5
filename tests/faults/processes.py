"""Real processes for the fault tests: a private Redis, a private PostgreSQL cluster, the
web server and Celery worker and beat, each started and stopped by the test.

Nothing here talks to anything but 127.0.0.1; every process is stopped by its fixture.
"""

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from scripts.run_local import celery_command, web_command

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@dataclass
class Redis:
    port: int
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
        )
        wait_for(lambda: port_open(self.port), 10, "redis")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@contextmanager
def private_redis() -> Iterator[Redis]:
    if shutil.which("redis-server") is None:
        raise RuntimeError("redis-server is not installed")
    redis = Redis(free_port())
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


@dataclass
class Postgres:
    """A throwaway PostgreSQL cluster of our own (restartable without disturbing others)."""

    data_dir: Path
    port: int

    def _run(self, *command: str) -> None:
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*as_postgres, *command], check=True, capture_output=True)

    def initdb(self) -> None:
        self.data_dir.mkdir(parents=True)
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(self.data_dir, account.pw_uid, account.pw_gid)
        self._run(
            str(PG_BIN / "initdb"),
            "-D",
            str(self.data_dir),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        )

    def start(self) -> None:
        self._run(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.data_dir),
            "-w",
            "-l",
            str(self.data_dir / "server.log"),
            "-o",
            f"-p {self.port} -k {self.data_dir} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        )

    def stop(self) -> None:
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data_dir), "-w", "-m", "fast", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"


@contextmanager
def private_postgres() -> Iterator[Postgres]:
    if PG_BIN is None:
        raise RuntimeError("PostgreSQL server binaries are not installed")
    # Not under pytest's tmp_path: its parents are private to root, and the server runs
    # as the postgres account.
    base = Path(tempfile.mkdtemp(prefix="lineage-faults-pg-"))
    cluster = Postgres(base / "data", free_port())
    try:
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(base, account.pw_uid, account.pw_gid)
        cluster.initdb()
        cluster.start()
        yield cluster
    finally:
        with suppress(subprocess.CalledProcessError):
            cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


def create_database(server_url: str, template: str | None = None) -> str:
    """A new database on the server of ``server_url`` (…/postgres); returns its URL."""
    name = f"lc_fault_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as connection:
        suffix = f' TEMPLATE "{template}"' if template else ""
        connection.execute(f'CREATE DATABASE "{name}"{suffix}')
    return server_url.rsplit("/", 1)[0] + f"/{name}"


def copy_database(source_url: str, server_url: str) -> str:
    """A new database on the server of ``server_url`` (…/postgres) holding what the database
    of ``source_url`` holds, schema and rows, through pg_dump and psql; returns its URL. A
    private cluster's migrated database: a copy of a migrated one instead of a
    `manage.py migrate` process (a Django start and every migration: about 6 CPU seconds,
    0.1 for the copy)."""
    assert PG_BIN is not None
    target = create_database(server_url)
    with subprocess.Popen(
        [str(PG_BIN / "pg_dump"), "--no-owner", "--no-privileges", "--dbname", source_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as dump:
        assert dump.stdout is not None and dump.stderr is not None
        restore = subprocess.run(
            [str(PG_BIN / "psql"), "-q", "-X", "-v", "ON_ERROR_STOP=1", "--dbname", target],
            stdin=dump.stdout,
            capture_output=True,
            timeout=120,
        )
        dump_errors = dump.stderr.read()
        dumped = dump.wait(timeout=120)
    if dumped != 0 or restore.returncode != 0:
        raise RuntimeError(f"the copy failed: {dump_errors!r} {restore.stderr!r}")
    return target


def drop_database(database_url: str) -> None:
    base, name = database_url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def current_database_url() -> str:
    """The URL of the database Django is using now (pytest-django's test database), for a
    server process started by a test."""
    from django.db import connection

    settings = connection.settings_dict
    return (
        f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}"
    )


@contextmanager
def shipped_web_server(start_seconds: float = 60) -> Iterator[str]:
    """The shipped web server (granian, ``python -m config.server``) with test settings on
    the test database, one worker of two threads; yields its URL, terminates it after."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": current_database_url(),
        "WEB_WORKERS": "1",
        "WEB_THREADS": "2",
        "HOST": "127.0.0.1",
        "PORT": str(port),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    process = subprocess.Popen(
        web_command(), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: port_open(port), start_seconds, "the web server")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


def service_env(database_url: str, redis_url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.test",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        LOG_LEVEL="INFO",
        PYTHONUNBUFFERED="1",
    )
    return env


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.stdout


@dataclass
class Service:
    """A long-running child process with its output in a log file."""

    command: list[str]
    env: dict[str, str]
    log: Path
    process: subprocess.Popen | None = None
    _handles: list = field(default_factory=list)

    def start(self) -> "Service":
        handle = self.log.open("ab")
        self._handles.append(handle)
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=self.env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        return self

    def kill(self) -> None:
        """SIGKILL the whole process group (a prefork worker's children too)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        self.terminate()
        self.finish()

    def terminate(self) -> None:
        """SIGTERM the process group, without waiting for it to end."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)

    def finish(self) -> None:
        """After ``terminate``: wait 15 s for the process to end, SIGKILL it if it has not;
        close the log. No second SIGTERM: Python may have reset its handler while exiting."""
        if self.process is not None and self.process.poll() is None:
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        for handle in self._handles:
            handle.close()

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def stop_together(*services: Service) -> None:
    """Stop ``services`` as ``Service.stop`` does, all signalled first: each shuts down
    while the others do (a Celery worker's or beat's shutdown took 2-3 s of a loaded
    machine, one after the other)."""
    for service in services:
        with suppress(ProcessLookupError):
            service.terminate()
    for service in services:
        service.finish()


def web(env: dict[str, str], log: Path) -> tuple[Service, str]:
    port = free_port()
    settings = {
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_WORKERS": "2",
        "WEB_THREADS": "4",
        "WEB_GRACEFUL_SECONDS": "5",
        "WEB_ACCESS_LOG": "true",
    }
    service = Service(web_command(), {**env, **settings}, log).start()
    wait_for(lambda: port_open(port), 30, "the web server")
    return service, f"http://127.0.0.1:{port}"


def worker(env: dict[str, str], log: Path, concurrency: int = 2) -> Service:
    command = celery_command(
        "worker", "--concurrency", str(concurrency), "--without-gossip", "--without-mingle"
    )
    return Service(command, env, log).start()


def metrics_worker(directory: Path, port: int) -> Service:
    """A worker of one child on the test database and Redis, its main process serving
    Prometheus' metrics on ``port`` as the chart's does, its files and log in ``directory``."""
    from django.conf import settings

    multiprocess = directory / "prometheus"
    multiprocess.mkdir()
    env = {
        # The test settings' Redis (this xdist worker's db): `make test` sets no REDIS_URL.
        **service_env(current_database_url(), settings.REDIS_URL),
        "LINEAGE_WORKER_METRICS_PORT": str(port),
        "PROMETHEUS_MULTIPROC_DIR": str(multiprocess),
    }
    return worker(env, directory / "worker.log", concurrency=1)


def beat(env: dict[str, str], log: Path, schedule: Path) -> Service:
    return Service(celery_command("beat", "--schedule", str(schedule)), env, log).start()


_DERIVED = re.compile(r"(?:derive_events|drain_pending|sweep_underived) claimed=\d+ derived=(\d+)")


def derived_total(*services: Service) -> int:
    """How many derivations the workers reported (committed batches only)."""
    return sum(int(count) for service in services for count in _DERIVED.findall(service.output()))
