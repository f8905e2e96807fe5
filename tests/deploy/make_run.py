"""`make run` as it runs (scripts/run_local.py: migrate, credentials, then web, worker,
scheduler and the Kafka consumer under its supervision), started by a test on the test
database and a Redis of its own; everything it started is ended afterwards."""

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import psutil
from django.db import connection

from ingest.models import Event
from tests.deploy.rendering import ROOT
from tests.faults.processes import (
    current_database_url,
    free_port,
    private_redis,
    service_env,
    wait_for,
)
from tests.ingest.helpers import run_event

# How each supervised process is recognised in its command line.
MARKS = {
    "web": "config.server",
    "worker": " worker ",
    "scheduler": " beat ",
    "consumer": "consume_kafka",
}
KINDS = ("web", "worker", "scheduler")  # what every make run starts


@dataclass
class MakeRun:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    folder: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def children(self) -> dict[str, psutil.Process]:
        """The supervised processes by kind (web, worker, scheduler, consumer), alive ones
        only."""
        found = {}
        for child in psutil.Process(self.process.pid).children():
            with contextlib.suppress(psutil.Error):
                if child.status() == psutil.STATUS_ZOMBIE:
                    continue
                line = f" {' '.join(child.cmdline())} "
                for kind, mark in MARKS.items():
                    if mark in line:
                        found[kind] = child
        return found

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

    def credentials(self) -> dict[str, str]:
        return json.loads((self.folder / "credentials.json").read_text())

    def ingest_token(self) -> str:
        return self.credentials()["ingest_token"]

    def request(self, method: str, path: str, token: str, body: bytes | None = None) -> Any:
        client = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        client.request(method, path, body=body, headers=headers)
        response = client.getresponse()
        data = response.read()
        assert response.status < 300, (response.status, data[:500])
        return orjson.loads(data)

    def post_events(self, count: int) -> list[int]:
        """``count`` events in one batch (committed at once, so derivation starts on all of
        them together); their ids."""
        batch = [run_event() for _ in range(count)]
        self.request("POST", "/api/v1/lineage/batch", self.ingest_token(), orjson.dumps(batch))
        run_ids = [event["run"]["runId"] for event in batch]
        return list(Event.objects.filter(run_id__in=run_ids).values_list("id", flat=True))


@contextlib.contextmanager
def started_make_run(tmp_path: Path, port: int | None = None, **settings: str) -> Iterator[MakeRun]:
    """make run on ``port`` (a free one by default) with ``settings`` added to its
    environment, once it has printed its banner."""
    with private_redis() as redis:
        port = port or free_port()
        folder = tmp_path / "local"
        env = {
            **service_env(current_database_url(), redis.url),
            "DJANGO_SETTINGS_MODULE": "config.settings.development",
            "MAKE_RUN_DIR": str(folder),
            "PORT": str(port),
            **settings,
        }
        log = tmp_path / "make-run.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, str(ROOT / "scripts" / "run_local.py")],
                cwd=ROOT,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # so that the test can end whatever is left
            )
        run = MakeRun(process, port, log, folder)
        try:
            wait_for(lambda: "is running" in run.output(), 180, "make run to start")
            yield run
        finally:
            left = [] if process.poll() is not None else run.descendants()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            for survivor in left:
                with contextlib.suppress(psutil.Error):
                    survivor.kill()
            process.wait(timeout=30)
            connection.close()
