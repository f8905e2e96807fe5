"""Marquez mount list pages with large facets: bytes, time and the web worker's peak RSS.

Issue 38, item 7: 30 completed runs, each writing dataset ``big.table`` with a 6 MB output
facet (highly compressible, ~6 KB gzipped, as a review found), and 11 jobs whose run and
job facets are 3 MB each (a job shows its facets, and its runs' in latestRun and
latestRuns). Then, against the shipped web server (one worker), it asks what Marquez's UI and
client ask:

  /marquez/api/v1/namespaces/bench/datasets/big.table/versions?limit=500
  /marquez/api/v1/namespaces/bench/jobs?limit=500

and prints, for each, the answer's bytes and items, its seconds, and the web worker's
peak RSS (VmHWM, MiB) after it. Pages stop at LINEAGE_MAX_PAGE_BYTES (8 MiB by default):
the rest is read at offset + items. Usage:
  .venv/bin/python bench/marquez_page_bytes.py [--runs 30] [--jobs 11] [--facet-mb 6] [--reuse]
"""

import argparse
import http.client
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    bench_env,
    migrated_django_without_broker,
    new_token,
    running_server,
    server_workers,
)

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_marquez_bytes"
NAMESPACE = "bench"
PRODUCER = "https://example.com/bench"


def _facet(padding: str) -> dict:
    return {"_producer": PRODUCER, "_schemaURL": PRODUCER + "#padding", "padding": padding}


def _event(index: int, job: str, output: str, run: str = "", job_facet: str = "") -> dict:
    """A COMPLETE writing ``big.table`` with ``output`` as its output facet; ``run`` and
    ``job_facet``: the run's and job's facets (none when empty)."""
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-11-02T10:{index // 60:02d}:{index % 60:02d}Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {
            "runId": str(uuid.UUID(int=10**9 + index)),
            "facets": {"padding": _facet(run)} if run else {},
        },
        "job": {
            "namespace": NAMESPACE,
            "name": job,
            "facets": {"padding": _facet(job_facet)} if job_facet else {},
        },
        "inputs": [],
        "outputs": [
            {"namespace": NAMESPACE, "name": "big.table", "facets": {"padding": _facet(output)}}
        ]
        if output
        else [],
    }


def build(runs: int, jobs: int, facet_mb: float) -> None:
    """``runs`` events writing ``big.table`` with a ``facet_mb`` MB output facet (its
    versions), then one run of each of ``jobs`` jobs with run and job facets of half that
    each (an event is at most LINEAGE_MAX_EVENT_BYTES); stored and derived."""
    migrated_django_without_broker(DATABASE)
    from catalog.services.derivation.batch import derive_pending_batch
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    def padding(megabytes: float) -> str:
        # Compressible as real plans and schemas are: a short phrase, repeated.
        size = int(megabytes * 2**20)
        return ("select * from orders where id = 42; " * (size // 36 + 1))[:size]

    big, half = padding(facet_mb), padding(facet_mb / 2)
    for index in range(runs):
        record_events([validate_openlineage(_event(index, "writer", big))])
    for index in range(jobs):
        document = _event(runs + index, f"job_{index}", "", half, half)
        record_events([validate_openlineage(document)])
    while derive_pending_batch(0, 5).claimed:
        pass


def _peak_mib(pid: int) -> str:
    """The worker's peak RSS so far (VmHWM), or why there is none: a worker that went past
    the server's limits is replaced, and its peak is lost with it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return "died"
    return f"{int(status.split('VmHWM:')[1].split()[0]) / 1024:.0f}"


def measure(url: str, token: str, path: str) -> tuple[int, int, int, float]:
    """(bytes, items, totalCount, seconds) of one GET."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    began = time.perf_counter()
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - began
    connection.close()
    if response.status != 200:
        raise SystemExit(f"{path}: {response.status} {body[:300]!r}")
    document = orjson.loads(body)
    items = next(value for key, value in document.items() if isinstance(value, list))
    return len(body), len(items), document["totalCount"], elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=11)
    parser.add_argument("--facet-mb", type=float, default=6.0)
    parser.add_argument("--reuse", action="store_true", help="Keep an already built store.")
    parser.add_argument("--only", choices=("versions", "jobs"), help="One of the two requests.")
    options = parser.parse_args()
    if not options.reuse:
        print(f"building {options.runs} runs with {options.facet_mb} MB facets ...", flush=True)
        started = time.monotonic()
        build(options.runs, options.jobs, options.facet_mb)
        print(f"built in {time.monotonic() - started:.0f}s", flush=True)
    env = bench_env(DATABASE)
    token = new_token(env, "read")
    base = f"/marquez/api/v1/namespaces/{NAMESPACE}"
    with running_server(env, workers=1) as url:
        (worker,) = server_workers(url)
        print(f"worker RSS at start: {_peak_mib(worker)} MiB")
        print(f"{'request':58} {'bytes':>12} {'items':>6} {'total':>6} {'s':>6} {'peak MiB':>9}")
        paths = {
            "versions": f"{base}/datasets/big.table/versions?limit=500",
            "jobs": f"{base}/jobs?limit=500",
        }
        for name, path in paths.items():
            if options.only not in (None, name):
                continue
            size, items, total, seconds = measure(url, token, path)
            print(
                f"{path.removeprefix('/marquez/api/v1'):58} {size:>12,} {items:>6} {total:>6} "
                f"{seconds:>6.1f} {_peak_mib(worker):>9}",
                flush=True,
            )


if __name__ == "__main__":
    main()
