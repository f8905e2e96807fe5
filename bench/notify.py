"""Webhook latency: from HTTP ingest to the receiver, p95 (issue 40 item 4: under 5 s).

Builds its own database (lineage_bench_notify unless --database), starts the shipped web
server and the workers as the chart runs them (its values.yaml read here: the derive worker
on the ``lineage`` queue with ``worker.concurrency`` processes, the webhook sender on the
``webhooks`` queue with ``webhooks.concurrency`` threads; ``--one-worker`` runs a single
worker on both queues instead, as with the chart's webhooks disabled), the scheduler (the
sweeps), a receiver (an ``http.server`` on 127.0.0.1, so the run allows private receivers
as an operator would for one inside the cluster) and ``--subscriptions`` subscriptions to
every change. It then POSTs ``--events`` OpenLineage events over HTTP at ``--rate`` a
second, each a new schema of one of ``--datasets`` tables (one column more), so every
event after a table's first makes one change and one delivery per subscription. Prints,
for the deliveries received, the p50/p95/max of:
  - accepted → delivery: the receiver's clock at arrival minus when ingest answered the
    event's POST (2xx): the wait a user feels;
  - derivation → delivery: arrival minus the payload's ``created_at`` (written in the
    derive transaction that recorded the change);
  - and the same run's baseline, accepted → derivation (``created_at`` minus the answer),
with the load average before and after, and how many deliveries arrived more than once.
Usage:
  .venv/bin/python bench/notify.py [--events 300] [--rate 20] [--datasets 10]
      [--subscriptions 1] [--one-worker] [--database URL]
"""

import argparse
import http.client
import os
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import migrated_database, new_token, percentile, running_server
from scripts.run_local import celery_command

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_notify"
NAMESPACE = "postgres://bench:5432"
ROOT = Path(__file__).resolve().parent.parent
VALUES = ROOT / "charts" / "lineage-catalog" / "values.yaml"


def shipped_workers(one_worker: bool) -> list[list[str]]:
    """The worker commands the chart runs (charts/lineage-catalog/templates/*worker*,
    webhooks-deployment.yaml), with its default values."""
    values = yaml.safe_load(VALUES.read_text())
    common = ["--without-gossip", "--without-mingle"]
    derive = [
        "--concurrency",
        str(values["worker"]["concurrency"]),
        "--max-tasks-per-child",
        str(values["worker"]["maxTasksPerChild"]),
        *common,
    ]
    if one_worker:
        return [celery_command("worker", "--hostname", "both@%h", *derive)]
    return [
        celery_command("worker", "--hostname", "derive@%h", "--queues", "lineage", *derive),
        celery_command(
            "worker",
            "--hostname",
            "webhooks@%h",
            "--queues",
            "webhooks",
            "--pool",
            "threads",
            "--concurrency",
            str(values["webhooks"]["concurrency"]),
            *common,
        ),
    ]


def event(table: int, version: int, run_id: str) -> bytes:
    fields = [{"name": f"c{column}", "type": "text"} for column in range(version + 1)]
    schema = {
        "_producer": "https://example.com/bench",
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
        "fields": fields,
    }
    return orjson.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": datetime.now(UTC).isoformat(),
            "producer": "https://example.com/bench",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id},
            "job": {"namespace": "bench", "name": f"load_{table}"},
            "inputs": [],
            "outputs": [
                {"namespace": NAMESPACE, "name": f"public.t{table}", "facets": {"schema": schema}}
            ],
        }
    )


class Arrivals:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_id: dict[str, tuple[float, dict]] = {}  # first arrival only
        self.again = 0  # arrivals of an id already received

    def handler(self) -> type[BaseHTTPRequestHandler]:
        arrivals = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                now = time.time()
                body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with arrivals.lock:
                    arrivals.again += body["id"] in arrivals.by_id
                    arrivals.by_id.setdefault(body["id"], (now, body))
                self.send_response(204)
                self.end_headers()

        return Handler


def _figures(name: str, values: list[float]) -> str:
    return (
        f"{name}: p50 {percentile(values, 0.5):.2f} s, p95 {percentile(values, 0.95):.2f} s, "
        f"max {max(values):.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0, help="events a second")
    parser.add_argument("--datasets", type=int, default=10)
    parser.add_argument("--subscriptions", type=int, default=1)
    parser.add_argument(
        "--one-worker", action="store_true", help="one worker on both queues (no sender)"
    )
    parser.add_argument("--database", default=DATABASE)
    options = parser.parse_args()
    print(f"load average before: {os.getloadavg()}", flush=True)
    env = migrated_database(options.database)
    env["LINEAGE_WEBHOOK_ALLOW_PRIVATE"] = "true"
    token = new_token(env, "ingest")
    arrivals = Arrivals()
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), arrivals.handler())
    threading.Thread(target=receiver.serve_forever, daemon=True).start()

    os.environ.update(env)
    import django

    django.setup()
    from catalog.models import WebhookSubscription

    for number in range(options.subscriptions):
        WebhookSubscription.objects.create(
            name=f"bench {number}", url=f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        )
    schedule = Path(tempfile.mkdtemp(prefix="bench-notify-")) / "beat"
    beat = celery_command("beat", "--schedule", str(schedule))
    import subprocess

    logs = Path(schedule.parent)
    processes = [
        subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(logs / f"{number}.log").open("wb"),
        )
        for number, command in enumerate((*shipped_workers(options.one_worker), beat))
    ]
    workers = len(processes) - 1
    accepted_at: dict[str, float] = {}
    expected = (options.events - options.datasets) * options.subscriptions
    try:
        with running_server(env, workers=1, start_seconds=600) as url:
            # Every worker ready (connected, consuming) before the first event: a worker
            # still starting would be measured as delivery latency.
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and not all(
                " ready." in (logs / f"{number}.log").read_text(errors="replace")
                for number in range(workers)
            ):
                time.sleep(0.5)
            port = int(url.rsplit(":", 1)[1])
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            started = time.monotonic()
            for number in range(options.events):
                table, version = number % options.datasets, number // options.datasets
                run_id = str(uuid.uuid4())
                wait = started + number / options.rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                connection.request(
                    "POST", "/api/v1/lineage", event(table, version, run_id), headers
                )
                answer = connection.getresponse()
                answer.read()
                accepted_at[run_id] = time.time()  # the event is the catalog's from here
                if answer.status >= 300:
                    raise SystemExit(f"ingest answered {answer.status}")
            deadline = time.monotonic() + 120
            while len(arrivals.by_id) < expected and time.monotonic() < deadline:
                time.sleep(0.5)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
        receiver.shutdown()
    with arrivals.lock:
        received = list(arrivals.by_id.values())

    def created(body: dict) -> float:
        return datetime.fromisoformat(body["created_at"]).timestamp()

    known = [(at, body) for at, body in received if body["data"]["run_id"] in accepted_at]
    derived = [at - created(body) for at, body in received]
    accepted = [at - accepted_at[body["data"]["run_id"]] for at, body in known]
    # The same run's baseline: how far derivation itself lagged behind ingest.
    lag = [created(body) - accepted_at[body["data"]["run_id"]] for _, body in known]
    layout = "one worker, both queues" if options.one_worker else "derive worker + sender"
    print(
        f"{options.events} events at {options.rate:g}/s over {options.datasets} tables, "
        f"{options.subscriptions} subscription(s), {layout}: {len(received)} of "
        f"{expected} deliveries received, {arrivals.again} received again"
    )
    print(_figures("accepted -> delivery", accepted))
    print(_figures("derivation -> delivery", derived))
    print(_figures("accepted -> derivation (baseline: the derivation lag)", lag))
    print(f"load average after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
