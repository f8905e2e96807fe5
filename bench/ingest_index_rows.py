"""What each subset of ``ingest_event``'s secondary indexes costs PostgreSQL for one stored
event: backend CPU, and the WAL and buffers of the shipped INSERT, variant beside variant.

Through the shipped server (``bench.ingest_indexes``) a loaded two-core machine's spread
is larger than one index's share; this measures PostgreSQL's side alone, as ADR 0142's
throwaway loop did, with the figures a load cannot move beside the CPU: each INSERT's WAL
bytes and records and the buffers it touched (``EXPLAIN (ANALYZE, WAL, BUFFERS)`` of the
statement itself), and the index pages each variant's tables end with.

Each variant is a table made like ``ingest_event`` (its columns, storage, compression and
``toast_tuple_target``; ``LIKE ... INCLUDING ALL EXCLUDING INDEXES``) with every index of
``ingest_event`` but the ones the variant drops, filled with the same ``--prefill`` derived
events (a grown log's depth: ``bench.ingest_indexes.PREFILL``). A round stores ``--events``
events into each variant in turn, on one connection each, with the shipped single-event
INSERT (``ingest.services._INSERT_ONE``, prepared) and one COMMIT each, as the server does;
the order rotates every round. The backend's CPU per event is read from /proc around the
loop; a sample of ``--explained`` of the round's events is sent under EXPLAIN instead.

Usage: .venv/bin/python -m bench.ingest_index_rows --database-url postgres://.../scratch
    [--rounds 6] [--events 1500] [--prefill 200000] [--variant name=index,index ...]
"""

import argparse
import os
import re
import statistics
from dataclasses import dataclass, field

import psutil
import psycopg

from bench.common import (
    DEFAULT_CORPUS,
    bench_env,
    load_templates,
    make_events,
    migrated_database,
    round_order,
)
from bench.ingest import ceiling_rows
from bench.ingest_indexes import DEFAULT_VARIANTS, PREFILL, SECONDARY, index_definitions

SINGLE_INDEXES = tuple(f"{name.removeprefix('ingest_event_')}={name}" for name in SECONDARY)


@dataclass
class Tally:
    cpu: list[float] = field(default_factory=list)  # µs per event, one a round
    wal: list[float] = field(default_factory=list)  # bytes per INSERT
    records: list[float] = field(default_factory=list)
    fpi: list[float] = field(default_factory=list)
    hit: list[float] = field(default_factory=list)
    dirtied: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)


def insert_sql(database_url: str, table: str) -> str:
    """The shipped single-event INSERT, into ``table``."""
    import django

    os.environ.update(bench_env(database_url))
    django.setup()
    from ingest.services import _INSERT_ONE

    return _INSERT_ONE.replace("INSERT INTO ingest_event", f"INSERT INTO {table}")


def make_variant(connection: psycopg.Connection, table: str, dropped: set[str]) -> None:
    definitions = index_definitions(connection.info.dsn)
    options = connection.execute(
        "SELECT array_to_string(reloptions, ', ') FROM pg_class WHERE relname = 'ingest_event'"
    ).fetchone()
    connection.execute(f"DROP TABLE IF EXISTS {table}")
    connection.execute(
        f"CREATE TABLE {table} (LIKE ingest_event INCLUDING ALL EXCLUDING INDEXES)"
        + (f" WITH ({options[0]})" if options and options[0] else "")
    )
    connection.execute(f"INSERT INTO {table} SELECT * FROM ingest_event")
    # LIKE ... INCLUDING ALL gives the copy an identity sequence of its own, at 1.
    connection.execute(
        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
    )
    for name, definition in definitions.items():
        if name in dropped:
            continue
        copy = definition.replace(" ON public.ingest_event ", f" ON public.{table} ")
        connection.execute(copy.replace(f"INDEX {name} ", f"INDEX {table}_{name[13:]} ", 1))
    connection.execute(f"VACUUM ANALYZE {table}")


def parameters(row: tuple) -> tuple:
    """The shipped INSERT's parameters for a ceiling row (no raw copy, no facet problems)."""
    kind, event_type, event_time, run_id, namespace, name, producer, canonical, digest, _ = row
    return (
        kind,
        event_type,
        event_time,
        run_id,
        namespace,
        name,
        producer,
        canonical,
        None,
        digest,
        None,
    )


EXPLAIN = "EXPLAIN (ANALYZE, WAL, BUFFERS) "
BUFFERS = re.compile(r"Buffers: shared hit=(\d+)(?: read=\d+)?(?: dirtied=(\d+))?")
WAL = re.compile(r"WAL: records=(\d+)(?: fpi=(\d+))? bytes=(\d+)")


def one_round(
    database_url: str, table: str, sql: str, rows: list[tuple], explained: int, tally: Tally
) -> None:
    with psycopg.connect(database_url) as connection:
        pid = connection.info.backend_pid
        # Warm the prepared statement and the relation cache as a kept connection has them.
        connection.execute("SELECT 1")
        process = psutil.Process(pid)
        plain, sample = rows[explained:], rows[:explained]
        before = sum(process.cpu_times()[:2])
        for row in plain:
            connection.execute(sql, row, prepare=True)
            connection.commit()
        spent = sum(process.cpu_times()[:2]) - before
        tally.cpu.append(spent / len(plain) * 1e6)
        wal = records = fpi = hit = dirtied = 0
        for row in sample:
            plan = [line for (line,) in connection.execute(EXPLAIN + sql, row, prepare=True)]
            connection.commit()
            # The top node's figures come first and include its children's.
            buffers = next(BUFFERS.search(line) for line in plan if BUFFERS.search(line))
            written = next((WAL.search(line) for line in plan if WAL.search(line)), None)
            hit += int(buffers.group(1))
            dirtied += int(buffers.group(2) or 0)
            if written is not None:
                records += int(written.group(1))
                fpi += int(written.group(2) or 0)
                wal += int(written.group(3))
        tally.wal.append(wal / len(sample))
        tally.records.append(records / len(sample))
        tally.fpi.append(fpi / len(sample))
        tally.hit.append(hit / len(sample))
        tally.dirtied.append(dirtied / len(sample))
        tally.loads.append(os.getloadavg()[0])


def build(database_url: str, count: int, body: bytes, variants: dict[str, set[str]]) -> None:
    """A migrated ``database_url`` with ``count`` derived events and a table per variant."""
    migrated_database(database_url)
    with psycopg.connect(database_url, autocommit=True) as connection:
        for start in range(0, count, 100_000):
            end = min(count, start + 100_000) - 1
            connection.execute(PREFILL, (body.decode(), start, end))
        for name, dropped in variants.items():
            make_variant(connection, f"bench_rows_{name}", dropped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--events", type=int, default=1500, help="events per variant a round")
    parser.add_argument("--explained", type=int, default=100, help="of them sent under EXPLAIN")
    parser.add_argument("--prefill", type=int, default=200_000)
    parser.add_argument("--variant", action="append", help="name=index,index (to drop)")
    parser.add_argument("--each", action="store_true", help="also each index alone")
    parser.add_argument(
        "--reuse", action="store_true", help="the variants' tables of an earlier run, kept"
    )
    parser.add_argument("--keep", action="store_true", help="keep the variants' tables")
    parser.add_argument(
        "--seed", type=int, default=100_000, help="another for --reuse: new events, not repeats"
    )
    args = parser.parse_args()
    variants: dict[str, set[str]] = {"main": set()}
    specs = list(args.variant or DEFAULT_VARIANTS) + (list(SINGLE_INDEXES) if args.each else [])
    for spec in specs:
        name, _, indexes = spec.partition("=")
        variants[name.replace("+", "_")] = {index for index in indexes.split(",") if index}

    templates = load_templates(DEFAULT_CORPUS)
    body = make_events(templates, 1, seed=99)[0]
    if not args.reuse:
        build(args.database_url, args.prefill, body, variants)
    sql = {name: insert_sql(args.database_url, f"bench_rows_{name}") for name in variants}
    tallies = {name: Tally() for name in variants}
    names = list(variants)
    print(
        f"variants {', '.join(names)}; {args.rounds} rounds of {args.events} events each "
        f"({args.explained} under EXPLAIN); prefill {args.prefill}; load "
        f"{os.getloadavg()[0]:.2f}",
        flush=True,
    )
    for number in range(args.rounds):
        for name in round_order(names, number):
            seed = args.seed + 1_000 * number + names.index(name)
            bodies = make_events(templates, args.events, seed=seed)
            rows = [parameters(row) for row in ceiling_rows(bodies)]
            one_round(
                args.database_url,
                f"bench_rows_{name}",
                sql[name],
                rows,
                args.explained,
                tallies[name],
            )
            tally = tallies[name]
            print(
                f"round {number + 1} {name:14s} backend {tally.cpu[-1]:5.0f} µs/event, "
                f"WAL {tally.wal[-1]:6.0f} B in {tally.records[-1]:.1f} records "
                f"(fpi {tally.fpi[-1]:.2f}), buffers hit {tally.hit[-1]:.1f} dirtied "
                f"{tally.dirtied[-1]:.2f}, load {tally.loads[-1]:.1f}",
                flush=True,
            )
    with psycopg.connect(args.database_url, autocommit=True) as connection:
        sizes = {
            name: connection.execute(
                "SELECT pg_indexes_size(%s::regclass), pg_relation_size(%s::regclass)",
                (f"bench_rows_{name}", f"bench_rows_{name}"),
            ).fetchone()
            for name in names
        }
        for name in names if not args.keep else ():
            connection.execute(f"DROP TABLE bench_rows_{name}")
    print(
        "variant         backend µs (median, range)  WAL B  records  buffers hit  "
        "dirtied  index MB  load"
    )
    for name, tally in tallies.items():
        indexes, _ = sizes[name]
        print(
            f"{name:15s} {statistics.median(tally.cpu):5.0f} ({min(tally.cpu):.0f}-"
            f"{max(tally.cpu):.0f})         {statistics.median(tally.wal):6.0f}  "
            f"{statistics.median(tally.records):7.1f}  {statistics.median(tally.hit):11.1f}  "
            f"{statistics.median(tally.dirtied):7.2f}  {indexes / 2**20:8.1f}  "
            f"{min(tally.loads):.1f}-{max(tally.loads):.1f}"
        )


if __name__ == "__main__":
    main()
