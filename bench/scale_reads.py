"""What each read of the curve costs at a store's size, in units the machine's load does not move.

bench/scale_curve.py prints p95s, which on two shared cores measure the queue for a core as
much as the read (issue 42 item 3). This prints, for the same five reads (graph, search,
detail, diff, as-of; bench/scale_curve.py's ``scenarios``) on a store the curve built:

- CPU per request: the shipped server's (config/server.py; its processes' user + system
  time) and its PostgreSQL backends' (the client backends of the store's database, read from
  /proc: the cluster must be on this machine), over --requests sequential keep-alive GETs
  after five warm-ups. CPU time hardly moves when other processes load the machine.
- Buffers per request: every statement a read sends (captured in this process through
  Django's test client, with the shipped settings) run again under
  ``EXPLAIN (ANALYZE, BUFFERS)``; the shared buffers (hit + read) each relation's plan nodes
  touched, summed over the statements. A read whose answer does not depend on the raw log's
  size must touch the same buffers at 1M and 10M events; the relations that grow with the
  log (``ingest_event`` and its indexes) are printed apart.

  .venv/bin/python -m bench.scale_reads --database postgres://…:5439/lc_scale_curve \
      [--requests 30] [--samples 3] [--out FILE]

Writes nothing to the store but a read token. --out appends a row per run as JSON.
"""

import argparse
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    bench_env,
    cpu_seconds_by_pid,
    new_token,
    percentile,
    running_server,
    server_cpu_seconds,
    timed,
)
from bench.read import add_store_arguments
from bench.scale_curve import READS, scenarios

# The relations whose size follows the raw log's: a read touching them pays for the log.
GROWING = ("ingest_event",)
BACKENDS = """
SELECT pid FROM pg_stat_activity
WHERE datname = current_database() AND backend_type = 'client backend'
  AND pid <> pg_backend_pid()
"""


def backends_cpu(connection: psycopg.Connection) -> dict[int, float]:
    """CPU seconds so far of each client backend of the store's database but this one."""
    return cpu_seconds_by_pid(pid for (pid,) in connection.execute(BACKENDS).fetchall())


def cpu_per_request(url: str, token: str, paths: dict[str, list[str]], database: str) -> dict:
    """Per read: the server's and its backends' CPU ms per request, and the wall p50."""
    import http.client

    host, port = url.removeprefix("http://").split(":")
    client = http.client.HTTPConnection(host, int(port), timeout=120)
    rows = {}
    with psycopg.connect(database, autocommit=True) as connection:
        for name, urls in paths.items():
            for path in urls[:5]:
                timed(client, path, token)
            server_before = server_cpu_seconds(url)
            backends_before = backends_cpu(connection)
            walls = [timed(client, path, token) for path in urls]
            server = server_cpu_seconds(url) - server_before
            after = backends_cpu(connection)
            backend = sum(after[pid] - backends_before.get(pid, 0.0) for pid in after)
            rows[name] = {
                "python_ms": 1000 * server / len(urls),
                "backend_ms": 1000 * backend / len(urls),
                "wall_p50_ms": percentile(walls, 0.5),
            }
    return rows


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(_nodes(child))
    return found


def _blocks(node: dict[str, Any]) -> int:
    return node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0)


def _read_blocks(plan: dict[str, Any]) -> int:
    """Blocks the statement found outside shared_buffers (the OS cache or the disk)."""
    return plan.get("Shared Read Blocks", 0)


def relation_buffers(plan: dict[str, Any]) -> dict[str, int]:
    """Shared buffers each relation's scan nodes touched (a node's own, children's removed),
    keyed by table (an index scan's buffers go to its table: the heap and its index)."""
    spent: dict[str, int] = defaultdict(int)
    for node in _nodes(plan):
        if node["Node Type"] == "CTE Scan":
            continue  # reads its CTE's rows; the CTE's own plan, a sibling, has the buffers
        own = _blocks(node) - sum(_blocks(child) for child in node.get("Plans", []))
        relation = node.get("Relation Name") or _index_table(node.get("Index Name"))
        spent[relation or "(other)"] += max(own, 0)
    return spent


_INDEX_TABLES: dict[str, str] = {}


def _index_table(index: str | None) -> str | None:
    return _INDEX_TABLES.get(index, index) if index else None


# SET LOCALs a read sends in one query before its statement (catalog/reads/search.py).
LEADING_SETS = re.compile(r"\A(\s*SET LOCAL [^;]+;)+")


def explained(
    connection: psycopg.Connection, sql: str, writes: bool = False
) -> dict[str, Any] | None:
    """EXPLAIN (ANALYZE, BUFFERS) of a captured statement, in the caller's transaction (a
    ``set_config(..., true)`` the read sent before it holds, as it did for the read);
    leading SET LOCALs sent in the same query are run first. None for what is not a query
    (SET, savepoints), or a write unless ``writes``."""
    if sets := LEADING_SETS.match(sql):
        connection.execute(sets.group(0))
        sql = sql[sets.end() :]
    verbs = ("SELECT", "WITH", "INSERT", "UPDATE", "DELETE") if writes else ("SELECT", "WITH")
    if not sql.lstrip().upper().startswith(verbs):
        return None
    (document,) = connection.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql).fetchone()
    return document[0]


def buffers_per_request(database: str, token: str, paths: dict[str, list[str]], samples: int):
    """Per read: statements, shared buffers and execution ms per request, by relation."""
    from django.db import connection as django_connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")
    rows = {}
    with psycopg.connect(database, autocommit=True) as connection:
        _INDEX_TABLES.update(
            connection.execute("SELECT indexrelname, relname FROM pg_stat_user_indexes").fetchall()
        )
        for name, urls in paths.items():
            total: dict[str, int] = defaultdict(int)
            statements = 0
            execution = 0.0
            outside = 0
            growing_sql: list[str] = []
            for path in urls[:samples]:
                with CaptureQueriesContext(django_connection) as captured:
                    response = client.get(path)
                if response.status_code != 200:
                    raise SystemExit(f"{path}: {response.status_code} {response.content[:300]!r}")
                with connection.transaction(force_rollback=True):
                    documents = [explained(connection, q["sql"]) for q in captured.captured_queries]
                for query, document in zip(captured.captured_queries, documents, strict=True):
                    if document is None:
                        continue
                    statements += 1
                    execution += document["Execution Time"]
                    outside += _read_blocks(document["Plan"])
                    spent = relation_buffers(document["Plan"])
                    for relation, blocks in spent.items():
                        total[relation] += blocks
                    if any(relation in GROWING for relation in spent):
                        growing_sql.append(query["sql"][:160])
            rows[name] = {
                "statements": statements / samples,
                "buffers": sum(total.values()) / samples,
                "growing_buffers": sum(total[r] for r in GROWING) / samples,
                "execution_ms": execution / samples,
                "read_buffers": outside / samples,
                "by_relation": {r: b / samples for r, b in sorted(total.items())},
                "growing_sql": sorted(set(growing_sql)),
            }
    return rows


# auto_explain in the deriving session only: every statement's real plan, with the buffers
# its execution touched (an UPDATE's include its index insertions), logged as JSON.
AUTO_EXPLAIN = (
    "LOAD 'auto_explain'",
    "SET auto_explain.log_min_duration = 0",
    "SET auto_explain.log_analyze = on",
    "SET auto_explain.log_buffers = on",
    "SET auto_explain.log_timing = off",
    "SET auto_explain.log_format = json",
)
PLAN = re.compile(r"LOG:  duration: [0-9.]+ ms  plan:\n")


def logged_plans(text: str) -> list[dict[str, Any]]:
    """The JSON plans auto_explain wrote into a stretch of the server's log (each on the
    lines after its ``plan:`` line, indented by a tab)."""
    plans = []
    for found in PLAN.finditer(text):
        lines = []
        for line in text[found.end() :].split("\n"):
            if not line.startswith("\t"):
                break
            lines.append(line[1:])
        plans.append(json.loads("\n".join(lines)))
    return plans


def derive_buffers(count: int, seed: int, server_log: Path) -> dict[str, dict[str, float]]:
    """Store ``count`` fresh real events (bench/derive.py's Spark records) through ingest's
    service and derive them with one worker loop, auto_explain on in that session: for each
    statement naming a relation that grows with the log (its first words), calls and shared
    buffers (hit + read, and read alone) per event, from the statements' real executions.
    The events stay in the store, derived, as bench/scale_curve.py's derive rate leaves its
    own."""
    from django.db import connection as django_connection

    import ingest.services
    from bench.derive import _drain, _records

    ingest.services.enqueue_derivation_on_commit = lambda event_ids: None
    records = _records(count, seed=seed)
    with django_connection.cursor() as cursor:
        for statement in AUTO_EXPLAIN:
            cursor.execute(statement)
    found: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for step in ("store", "derive"):
        offset = server_log.stat().st_size
        if step == "store":
            for start in range(0, len(records), 1000):
                ingest.services.record_events(records[start : start + 1000])
            events = len(records)
        else:
            events = _drain(500)
        time.sleep(1)  # the log is written by the backend; let it land
        with server_log.open("rb") as log:
            log.seek(offset)
            text = log.read().decode("utf-8", "replace")
        for plan in logged_plans(text):
            sql = " ".join(plan["Query Text"].split())
            if not any(relation in sql for relation in GROWING):
                continue
            key = f"{step}: {sql[:90]}"
            found[key]["calls"] += 1 / max(events, 1)
            found[key]["buffers"] += _blocks(plan["Plan"]) / max(events, 1)
            found[key]["read"] += _read_blocks(plan["Plan"]) / max(events, 1)
    return {key: dict(values) for key, values in sorted(found.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_store_arguments(parser, events=1_000_000, datasets=100_000)
    parser.add_argument("--database", required=True)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--samples", type=int, default=3, help="requests EXPLAINed per read")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--derive-events", type=int, default=0, help="also store and derive this many events"
    )
    parser.add_argument("--server-log", help="the cluster's log file (for --derive-events)")
    parser.add_argument("--out", help="append this run's row to this JSON file")
    options = parser.parse_args()
    env = bench_env(options.database)
    token = new_token(env, "read", "scale-reads")
    paths = scenarios(options, random.Random(options.seed))
    with psycopg.connect(options.database) as connection:
        (events,) = connection.execute("SELECT coalesce(max(id), 0) FROM ingest_event").fetchone()
    with running_server(env, start_seconds=180) as url:
        cpu = cpu_per_request(url, token, paths, options.database)
    os.environ.update(env)
    import django

    django.setup()
    buffers = buffers_per_request(options.database, token, paths, options.samples)
    derive = (
        derive_buffers(options.derive_events, options.seed + events, Path(options.server_log))
        if options.derive_events
        else {}
    )
    load = os.getloadavg()[0]
    print(f"{events:,} events (load {load:.1f}); per request:")
    for name in READS:
        c, b = cpu[name], buffers[name]
        print(
            f"  {name:>6}: CPU {c['python_ms']:.1f} ms server + {c['backend_ms']:.1f} ms "
            f"PostgreSQL (wall p50 {c['wall_p50_ms']:.1f}); {b['statements']:.0f} statements, "
            f"{b['buffers']:,.0f} buffers ({b['read_buffers']:,.0f} outside shared_buffers, "
            f"{b['growing_buffers']:,.0f} in the raw log), "
            f"{b['execution_ms']:.1f} ms executing"
        )
        for sql in b["growing_sql"]:
            print(f"      reads the log: {sql}")
    for statement, values in derive.items():
        print(
            f"  {statement}: {values['calls']:.3f} calls, {values['buffers']:.1f} buffers "
            f"({values['read']:.1f} outside shared_buffers) per event"
        )
    if options.out:
        out = Path(options.out)
        rows = orjson.loads(out.read_bytes()) if out.exists() else []
        rows.append(
            {
                "events": events,
                "load": load,
                "at": time.time(),
                "cpu": cpu,
                "buffers": buffers,
                "derive": derive,
            }
        )
        out.write_bytes(orjson.dumps(rows, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
