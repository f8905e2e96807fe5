"""Collector overhead: µs added per SQLAlchemy statement on the calling thread, and parser speed.

Runs the same point-query loop on SQLite and on PostgreSQL (127.0.0.1:5432, user postgres)
three ways in one process: uninstrumented, instrumented outside any job (the listener's
early exit), and instrumented inside a job (a tuple queued per statement). The worker is
kept from draining during the timed loop so the figure is the calling thread's cost only,
then the queue is discarded. Prints µs per statement and the ratio to the bare loop, then
the parser's throughput on a mixed statement set (cold: every statement new; warm: cached).

    .venv/bin/python bench/collector.py [--statements 20000]
"""

import argparse
import statistics
import time
import uuid
from collections.abc import Callable

import lineage_collector as lc
import psycopg
import sqlalchemy as sa
from lineage_collector.hooks.sqlalchemy import install_sqlalchemy, uninstall_sqlalchemy
from lineage_collector.runtime import RUNTIME
from lineage_collector.sql import SqlParser, parse_sql
from lineage_collector.transport import MemoryTransport

MIXED = [
    "SELECT * FROM orders WHERE id = %(id)s",
    "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.day = ?",
    "INSERT INTO daily (day, total) SELECT day, sum(total) FROM orders GROUP BY day",
    "UPDATE stock SET qty = qty - 1 WHERE sku IN (SELECT sku FROM order_lines WHERE id = :id)",
    "DELETE FROM sessions WHERE expires < now()",
    "WITH r AS (SELECT * FROM orders WHERE day > '2026-01-01') "
    "INSERT INTO recent SELECT * FROM r JOIN refunds f ON f.order_id = r.id",
    "MERGE INTO dim_customer d USING staging s ON d.id = s.id "
    "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.name)",
    "CREATE TABLE report AS SELECT customer_id, count(*) FROM orders GROUP BY customer_id",
    "BEGIN",
    "SET search_path TO sales",
]


def timed(loop: Callable[[int], None], count: int) -> float:
    """µs per statement of one run of ``loop(count)``."""
    started = time.perf_counter()
    loop(count)
    return (time.perf_counter() - started) / count * 1e6


def point_query_loop(engine: sa.Engine) -> Callable[[int], None]:
    query = sa.text("SELECT total FROM orders WHERE id = :id")

    def loop(count: int) -> None:
        with engine.connect() as connection:
            for index in range(count):
                connection.execute(query, {"id": index % 100}).scalar()
        RUNTIME.queue.clear()  # drop the queued tuples: this bench measures the caller only

    return loop


def measure(label: str, engine: sa.Engine, count: int, repeats: int = 7) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE IF EXISTS orders")
        connection.exec_driver_sql("CREATE TABLE orders (id integer primary key, total integer)")
        connection.exec_driver_sql(
            "INSERT INTO orders SELECT i, i * 10 FROM ("
            + " UNION ALL ".join(f"SELECT {i} AS i" for i in range(100))
            + ") AS numbers"
        )
    loop = point_query_loop(engine)
    loop(500)  # warm up the connection pool and the statement caches
    samples: dict[str, list[float]] = {"bare": [], "outside": [], "inside": []}
    # Interleaved rounds so that drift on a shared machine hits every mode alike.
    for _ in range(repeats):
        uninstall_sqlalchemy()
        samples["bare"].append(timed(loop, count))
        install_sqlalchemy()
        samples["outside"].append(timed(loop, count))
        with lc.job("bench"):
            samples["inside"].append(timed(loop, count))
    uninstall_sqlalchemy()
    bare, outside, inside = (statistics.median(samples[mode]) for mode in samples)
    print(
        f"{label:<11} bare {bare:7.2f} µs | outside a job +{outside - bare:5.2f} µs "
        f"(x{outside / bare:.3f}) | inside a job +{inside - bare:5.2f} µs (x{inside / bare:.3f})"
    )


def parser_throughput(rounds: int) -> None:
    dialect = "postgres"
    started = time.perf_counter()
    for round_number in range(rounds):
        for sql in MIXED:
            parse_sql(f"{sql} /* {round_number} */", dialect)  # a new statement every time
    cold = rounds * len(MIXED) / (time.perf_counter() - started)
    parser = SqlParser(budget_per_second=1e9)
    for sql in MIXED:
        parser.parse(sql, dialect)
    started = time.perf_counter()
    for _ in range(rounds * 20):
        for sql in MIXED:
            parser.parse(sql, dialect)
    warm = rounds * 20 * len(MIXED) / (time.perf_counter() - started)
    print(
        f"parser      cold {cold:9.0f} statements/s ({1e6 / cold:6.0f} µs each) | "
        f"cached {warm:9.0f} statements/s ({len(MIXED)} statement kinds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=20_000)
    parser.add_argument("--parser-rounds", type=int, default=50)
    arguments = parser.parse_args()

    import sqlglot

    print(
        f"lineage-collector {lc.__version__}, SQLAlchemy {sa.__version__}, "
        f"sqlglot {sqlglot.__version__}, median of interleaved rounds"
    )
    lc.install(transport=MemoryTransport(), sqlalchemy=False, boto3=False)
    # Keep the worker from draining: the figure is the calling thread's cost alone.
    RUNTIME.start_worker = lambda: None  # type: ignore[method-assign]
    RUNTIME.needs_start = False
    measure("SQLite", sa.create_engine("sqlite:///:memory:"), arguments.statements)
    name = f"lc_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}")
        try:
            measure("PostgreSQL", engine, arguments.statements // 4)
        finally:
            engine.dispose()
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    del RUNTIME.start_worker
    lc.uninstall()
    parser_throughput(arguments.parser_rounds)


if __name__ == "__main__":
    main()
