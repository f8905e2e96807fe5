"""Single-event ingest through the shipped server with some of ``ingest_event``'s secondary
indexes dropped, each variant beside the bare INSERT+COMMIT ceiling, in alternating rounds.

ADR 0142 measured the eight secondary indexes together (dropped in a scratch database:
+17-18% events/s) and found no subset that moved the rate out of a loaded machine's spread.
Each candidate design change of ADR 0206 removes a named subset (the md5 indexes of the job
and producer, the pending index, ...): this prints what each subset is worth to the issue's
ratio (issue 42 item 2), measured as ``bench.ingest`` measures it, in the same minutes.

One database and one shipped server (``python -m config.server``) serve every variant: before
a variant's round the indexes it drops are dropped and the others created again from their
own definitions (``pg_indexes``), so the server, its connections and the table are the same;
the server's prepared INSERT is planned again by PostgreSQL when an index changes. The table
grows across the rounds, so the variants' order is rotated every round. Each variant's wrk
run is followed by its own bare INSERT+COMMIT ceiling (``bench.ingest.bare_single``), and its
ratio is the median of its rounds' ratios. ``--prefill`` stores that many derived events by
SQL first, so the indexes have a grown log's depth (their own rows, none pending).

Usage: .venv/bin/python -m bench.ingest_indexes --database-url postgres://.../scratch
    [--rounds 3] [--seconds 3] [--prefill 0]
    [--variant md5s=ingest_event_job_md5,ingest_event_producer_md5 ...]
Each --variant is name=index,index (indexes of ingest_event to drop); "main" (none dropped)
is always measured.
"""

import argparse
import os
import statistics
from dataclasses import dataclass, field

import psycopg

from bench.common import (
    DEFAULT_CORPUS,
    cpu_seconds_by_pid,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    round_order,
    running_server,
    server_cpu_seconds,
    worker_switches,
)
from bench.ingest import bare_single, post_all, wrk_single

# The eight ADR 0142 dropped together; every variant drops a subset of these.
SECONDARY = (
    "ingest_event_pending_idx",
    "ingest_event_failed_idx",
    "ingest_event_facet_prob_idx",
    "ingest_event_time_idx",
    "ingest_event_received_brin",
    "ingest_event_run_time_idx",
    "ingest_event_job_md5",
    "ingest_event_producer_md5",
)
DEFAULT_VARIANTS = (
    "md5s=ingest_event_job_md5,ingest_event_producer_md5",
    "pending=ingest_event_pending_idx",
    "md5s+pending=ingest_event_job_md5,ingest_event_producer_md5,ingest_event_pending_idx",
    "all8=" + ",".join(SECONDARY),
)

# Derived events stored by SQL: ~10 events a run, 5,000 jobs, 4 producers, a day of
# eventTimes, each row its own digest; the payload one real event (compressed alike).
PREFILL = """
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
    producer, payload, digest, derivation_status, derived_at)
SELECT 'run', 'COMPLETE', now() - make_interval(secs => i * 0.0864),
    md5((i / 10)::text), 'bench', 'job' || (i %% 5000),
    'https://example.com/producer/' || (i %% 4), %s::jsonb,
    sha256(int8send(i)), 'derived', now()
FROM generate_series(%s, %s) AS i
"""


@dataclass
class Tally:
    """One variant's rounds: events/s, ceilings, and CPU and switches per event."""

    rates: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    server: list[float] = field(default_factory=list)
    database: list[float] = field(default_factory=list)
    switches: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)


def backend_cpu(database_url: str) -> dict[int, float]:
    """CPU seconds so far of each backend connected to ``database_url``'s database but this
    query's (``bench.ingest._database_cpu``, by process: a backend that ends between two
    readings takes its seconds with it, and a sum would go down)."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        pids = [
            pid
            for (pid,) in connection.execute(
                "SELECT pid FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
    return cpu_seconds_by_pid(pids)


def index_definitions(database_url: str) -> dict[str, str]:
    with psycopg.connect(database_url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'ingest_event'"
        ).fetchall()
    return dict(rows)


def set_indexes(database_url: str, definitions: dict[str, str], dropped: set[str]) -> None:
    """``ingest_event`` with exactly the indexes of ``definitions`` not in ``dropped``."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        present = {
            name
            for (name,) in connection.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'ingest_event'"
            )
        }
        for name in sorted(present & dropped):
            connection.execute(f'DROP INDEX "{name}"')
        for name in sorted(set(definitions) - dropped - present):
            connection.execute(definitions[name])
        connection.execute("VACUUM ANALYZE ingest_event")


def prefill(database_url: str, count: int, body: bytes, chunk: int = 100_000) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        for start in range(0, count, chunk):
            end = min(count, start + chunk) - 1
            connection.execute(PREFILL, (body.decode(), start, end))
        connection.execute("VACUUM ANALYZE ingest_event")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="wrk run length per round")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--events", type=int, default=4000, help="events per ceiling")
    parser.add_argument("--prefill", type=int, default=0, help="derived events stored first")
    parser.add_argument("--variant", action="append", help="name=index,index (to drop)")
    args = parser.parse_args()
    variants: dict[str, set[str]] = {"main": set()}
    for spec in args.variant or DEFAULT_VARIANTS:
        name, _, indexes = spec.partition("=")
        variants[name] = {index for index in indexes.split(",") if index}
    unknown = set().union(*variants.values()) - set(SECONDARY)
    if unknown:
        raise SystemExit(f"not a secondary index of ingest_event: {', '.join(sorted(unknown))}")

    templates = load_templates(DEFAULT_CORPUS)
    env = migrated_database(args.database_url)
    definitions = index_definitions(args.database_url)
    if args.prefill:
        prefill(args.database_url, args.prefill, make_events(templates, 1, seed=99)[0])
    token = new_token(env, "ingest")
    count = max(args.events, int(args.seconds * 4000))
    tallies = {name: Tally() for name in variants}
    print(
        f"variants {', '.join(variants)}; {args.rounds} rounds of {args.seconds:.0f} s, "
        f"{args.clients} wrk clients; prefill {args.prefill}; load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with running_server(env, start_seconds=180) as url:
        post_all(url, token, "/api/v1/lineage", make_events(templates, 200, seed=3), 8)
        names = list(variants)
        for number in range(args.rounds):
            for name in round_order(names, number):
                set_indexes(args.database_url, definitions, variants[name])
                seed = 10_000 * (number + 1) + names.index(name) * 100
                bodies = make_events(templates, count, seed=seed)
                server = server_cpu_seconds(url)
                database = backend_cpu(args.database_url)
                switches = worker_switches(url)
                rate, _, _ = wrk_single(url, token, bodies, args.clients, args.seconds)
                sent = rate * max(1, round(args.seconds))
                tally = tallies[name]
                tally.server.append((server_cpu_seconds(url) - server) / sent * 1e6)
                spent = backend_cpu(args.database_url)
                database_seconds = sum(cpu - database.get(pid, 0.0) for pid, cpu in spent.items())
                tally.database.append(database_seconds / sent * 1e6)
                tally.switches.append((worker_switches(url) - switches) / sent)
                ceiling = bare_single(args.database_url, bodies[: args.events])
                tally.rates.append(rate)
                tally.ratios.append(rate / ceiling)
                tally.loads.append(os.getloadavg()[0])
                print(
                    f"round {number + 1} {name:14s} {rate:6.0f} events/s, ceiling "
                    f"{ceiling:6.0f}, ratio {rate / ceiling:.2f}, server "
                    f"{tally.server[-1]:.0f} µs, PostgreSQL {tally.database[-1]:.0f} µs, "
                    f"switches {tally.switches[-1]:.1f}, load {tally.loads[-1]:.1f}",
                    flush=True,
                )
        set_indexes(args.database_url, definitions, set())
    print("variant        ratio (median, range)   events/s  server µs  PostgreSQL µs  load")
    for name, tally in tallies.items():
        print(
            f"{name:14s} {statistics.median(tally.ratios):.2f} "
            f"({min(tally.ratios):.2f}-{max(tally.ratios):.2f})        "
            f"{statistics.median(tally.rates):6.0f}  {statistics.median(tally.server):9.0f}  "
            f"{statistics.median(tally.database):13.0f}  "
            f"{min(tally.loads):.1f}-{max(tally.loads):.1f}"
        )


if __name__ == "__main__":
    main()
