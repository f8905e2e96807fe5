"""The curve to 10M events (issue 42 item 3): reads, derivation and bytes as the log grows.

Builds bench/read.py's generated store (datasets, jobs, runs, edges and the long-history
region: the edges out of datasets 1..--history-datasets carry --runs-per-edge runs each)
with the first checkpoint's events, then grows the raw log to each next checkpoint with
the same generated 1.4 KB events (bench/generated_events.py: INSERT ... SELECT
generate_series in SQL, in transactions of --step events; never through HTTP). At each
checkpoint (default 1M, 3M, 10M), after VACUUM ANALYZE:

- graph, search, detail, diff and as-of p95 (ms): --requests sequential keep-alive GETs each
  against the shipped web server (config/server.py), after ten warm-up requests;
- derive rate: --derive-events real events (bench/derive.py's Spark corpus records, four a
  run, a new seed each checkpoint) stored through ingest's service and derived by one
  worker loop (catalog.services.derivation.batch), in a process of their own;
- bytes per stored event: ingest_event's heap + TOAST + indexes over its rows, against the
  mean compact JSON of a sample of payloads (re-encoded by orjson, as sent).

The curve is meant with autovacuum on: it prints the server's setting and changes no
server setting. Run it on a cluster of its own (docs/benchmarks.md says how), not on a
shared server. Growth resumes from the store's last id: after an interruption, the same
command with --reuse and the same --out continues, skipping the checkpoints --out holds.

Prints a line per checkpoint and, with --out, writes the rows as JSON for --plot:

  .venv/bin/python -m bench.scale_curve --database postgres://…/lc_scale_curve \
      [--checkpoints 1000000,3000000,10000000] [--requests 100] [--reuse] [--out FILE]
  .venv/bin/python -m bench.scale_curve --plot FILE docs/scale-curve.svg
"""

import argparse
import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import orjson
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BIN, ROOT, percentile, running_server, timed
from bench.generated_events import insert_events
from bench.plot_curve import _panel
from bench.read import JOBS, add_store_arguments, built_read_store

BYTES = """
SELECT pg_relation_size('ingest_event'),
       pg_total_relation_size('ingest_event') - pg_relation_size('ingest_event')
         - pg_indexes_size('ingest_event'),
       pg_indexes_size('ingest_event'),
       (SELECT count(*) FROM ingest_event)
"""
# The JSON a producer sent, compact (jsonb's text adds a space after every ':' and ','):
# a sample's payloads re-encoded by orjson, as bench/storage.py measures it.
SAMPLE = "SELECT payload::text FROM ingest_event TABLESAMPLE SYSTEM (%s) LIMIT 2000"
# One worker's derivation of fresh real events, in a process bound to the store (Django
# binds one database per process); prints the rate.
DERIVE = """
import sys, time
from bench.common import migrated_django_without_broker
migrated_django_without_broker(sys.argv[1], fresh=False)
from bench.derive import _drain, _records
from ingest.services import record_events
records = _records(int(sys.argv[2]), seed=int(sys.argv[3]))
for start in range(0, len(records), 1000):
    record_events(records[start : start + 1000])
began = time.perf_counter()
derived = _drain(500)
print(derived / (time.perf_counter() - began))
"""
READS = ("graph", "search", "detail", "diff", "as-of")


def stored(database: str) -> int:
    with psycopg.connect(database) as connection:
        return connection.execute("SELECT coalesce(max(id), 0) FROM ingest_event").fetchone()[0]


def grow(database: str, end: int, step: int) -> float:
    """Generated events from the store's last id up to ``end`` (bench/generated_events.py,
    ``step`` a transaction), then VACUUM ANALYZE; seconds taken. Growth resumes from
    whatever id a store reached, so an interrupted curve continues with --reuse."""
    began = time.monotonic()
    with psycopg.connect(database, autocommit=True) as connection:
        insert_events(connection, stored(database), end, JOBS, step)
        connection.execute("VACUUM ANALYZE")
    return time.monotonic() - began


def json_bytes(connection: psycopg.Connection, rows: int) -> float:
    """Mean compact JSON bytes of a sample of about 2,000 payloads."""
    percent = min(100.0, 100.0 * 4000 / max(rows, 1))
    sample = connection.execute(SAMPLE, [percent]).fetchall()
    sizes = [len(orjson.dumps(orjson.loads(text))) for (text,) in sample]
    return sum(sizes) / max(len(sizes), 1)


def _ago(hours: int) -> str:
    return quote((datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="seconds"))


def scenarios(options: argparse.Namespace, rng: random.Random) -> dict[str, list[str]]:
    n, region, hours = options.requests, options.history_datasets, options.runs_per_edge
    graph = "/api/v1/lineage/graph?direction=both&depth=5&max_nodes=500&node=dataset:"
    return {
        "graph": [f"{graph}{rng.randint(1, options.datasets)}" for _ in range(n)],
        "search": [
            f"/api/v1/search?q={'table' if i % 2 else 'tabel'}_{rng.randint(1, options.datasets)}"
            for i in range(n)
        ],
        "detail": [f"/api/v1/datasets/{rng.randint(1, options.datasets)}" for _ in range(n)],
        "diff": [
            "/api/v1/lineage/diff?direction=both&depth=5&max_nodes=500"
            f"&node=dataset:{rng.randint(1, region)}&from={_ago(rng.randint(hours // 2, hours))}"
            f"&to={_ago(rng.randint(1, hours // 2))}"
            for _ in range(n)
        ],
        "as-of": [
            f"{graph}{rng.randint(1, region)}&as_of={_ago(rng.randint(1, hours))}" for _ in range(n)
        ],
    }


def read_p95(url: str, token: str, paths: dict[str, list[str]]) -> dict[str, float]:
    import http.client

    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=120)
    p95 = {}
    for name, urls in paths.items():
        for path in urls[:10]:
            timed(connection, path, token)
        p95[name] = percentile([timed(connection, path, token) for path in urls], 0.95)
    return p95


def derive_rate(env: dict[str, str], database: str, count: int, seed: int) -> float:
    output = subprocess.run(
        [str(BIN / "python"), "-c", DERIVE, database, str(count), str(seed)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(output.strip().splitlines()[-1])


def checkpoint(options: argparse.Namespace, env: dict, token: str, seed: int) -> dict:
    with running_server(env, start_seconds=180) as url:
        p95 = read_p95(url, token, scenarios(options, random.Random(seed)))
    rate = derive_rate(env, options.database, options.derive_events, seed)
    with psycopg.connect(options.database) as connection:
        heap, toast, indexes, rows = connection.execute(BYTES).fetchone()
        json_size = json_bytes(connection, rows)
    return {
        "events": rows,
        **{f"{name}_p95": value for name, value in p95.items()},
        "rate": rate,
        "heap": heap,
        "toast": toast,
        "indexes": indexes,
        "bytes_per_event": (heap + toast + indexes) / rows,
        "json_bytes": float(json_size),
        "load": os.getloadavg()[0],
    }


def report(row: dict) -> str:
    reads = ", ".join(f"{name} {row[f'{name}_p95']:.1f}" for name in READS)
    return (
        f"{row['events']:>11,} events: p95 ms {reads}; derive {row['rate']:,.0f} events/s; "
        f"{row['bytes_per_event']:,.0f} bytes/event stored (heap {row['heap'] / 2**20:,.0f} MB, "
        f"TOAST {row['toast'] / 2**20:,.0f} MB, indexes {row['indexes'] / 2**20:,.0f} MB) "
        f"against {row['json_bytes']:,.0f} bytes of JSON: "
        f"{row['bytes_per_event'] / row['json_bytes']:.2f}x; load {row['load']:.1f}"
    )


def plot(rows: list[dict], svg: Path) -> None:
    """Two panels as bench/plot_curve.py draws them: the read p95s, then bytes per event."""
    from bench.plot_curve import HEIGHT, LEFT, WIDTH

    reads = {name: [{"events": r["events"], "v": r[f"{name}_p95"]} for r in rows] for name in READS}
    size = {
        "stored": [{"events": r["events"], "v": r["bytes_per_event"]} for r in rows],
        "JSON": [{"events": r["events"], "v": r["json_bytes"]} for r in rows],
    }
    rates = {"derive": [{"events": r["events"], "v": r["rate"]} for r in rows]}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{3 * HEIGHT + 40}" '
        'font-family="sans-serif">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{LEFT}" y="18" font-size="14" font-weight="bold">'
        "The curve to 10M events (bench/scale_curve.py)</text>",
        *_panel(reads, "v", "read p95 (ms)", 20),
        *_panel(rates, "v", "derive rate (events/s, one worker)", 30 + HEIGHT),
        *_panel(
            size, "v", "bytes per stored event (heap + TOAST + indexes) and JSON", 40 + 2 * HEIGHT
        ),
        "</svg>",
    ]
    svg.write_text("\n".join(parts) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_store_arguments(parser, events=1_000_000, datasets=100_000)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/lc_scale_curve")
    parser.add_argument("--checkpoints", default="1000000,3000000,10000000")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--derive-events", type=int, default=4000)
    parser.add_argument("--step", type=int, default=500_000, help="generated events a transaction")
    parser.add_argument("--reuse", action="store_true", help="grow the store already built")
    parser.add_argument("--out", help="append each checkpoint's row to this JSON file")
    parser.add_argument("--plot", nargs=2, metavar=("ROWS", "SVG"), help="only draw ROWS")
    options = parser.parse_args()
    if options.plot:
        plot(orjson.loads(Path(options.plot[0]).read_bytes()), Path(options.plot[1]))
        return
    checkpoints = [int(value) for value in options.checkpoints.split(",")]
    options.events = checkpoints[0]
    out = Path(options.out) if options.out else None
    rows = orjson.loads(out.read_bytes()) if options.reuse and out and out.exists() else []
    env, token = built_read_store(options.database, options, "the first checkpoint")
    with psycopg.connect(options.database) as connection:
        autovacuum = connection.execute("SHOW autovacuum").fetchone()[0]
    print(f"autovacuum {autovacuum}", flush=True)  # the curve is meant with it on
    for end in checkpoints:
        if any(row["events"] >= end for row in rows):
            continue  # measured by the run this one resumes
        at = stored(options.database)
        grown = grow(options.database, end, options.step)
        rate = f"{grown / (end - at) * 1e6:.0f}s a million; " if end > at else ""
        print(
            f"grown from {at:,} to {end:,} events in {grown:.0f}s "
            f"({rate}load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        # The derive measurement's events must be new to the store: seeded by what it
        # holds now (each measurement adds its events), not by the checkpoint's index,
        # which a resumed run or a second run at the same size would repeat (0 events/s).
        rows.append(checkpoint(options, env, token, seed=stored(options.database)))
        print(report(rows[-1]), flush=True)
        if out:
            out.write_bytes(orjson.dumps(rows, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
