"""SQLAlchemy capture: every engine, every kind of statement, pandas, SQLite and PostgreSQL."""

import gc
import os
import uuid
import weakref

import lineage_collector as lc
import pytest
from lineage_collector.runtime import RUNTIME

sa = pytest.importorskip("sqlalchemy")

POSTGRES_URL = os.environ.get(
    "LINEAGE_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432"
)


@pytest.fixture
def sqlite_engine(tmp_path):
    # Created before the collector is installed (the fixture order below) on purpose.
    engine = sa.create_engine(f"sqlite:///{tmp_path}/shop.db")
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE orders (id INTEGER, customer_id INTEGER, total INTEGER)"
        )
        connection.exec_driver_sql("CREATE TABLE customers (id INTEGER, name TEXT)")
        connection.exec_driver_sql("INSERT INTO orders VALUES (1, 1, 10), (2, 1, 20)")
        connection.exec_driver_sql("INSERT INTO customers VALUES (1, 'ada')")
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_engine():
    psycopg = pytest.importorskip("psycopg")
    name = f"lc_collector_{uuid.uuid4().hex[:8]}"
    admin_dsn = POSTGRES_URL.replace("postgresql+psycopg", "postgresql") + "/postgres"
    try:
        admin = psycopg.connect(admin_dsn, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError:
        pytest.skip("PostgreSQL is not reachable at 127.0.0.1:5432")
    admin.execute(f'CREATE DATABASE "{name}"')
    engine = sa.create_engine(f"{POSTGRES_URL}/{name}")
    yield engine
    engine.dispose()
    admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    admin.close()


def namespace_of(engine) -> str:
    return lc.dataset_name(engine, "x").namespace


def test_selects_and_joins_are_inputs_on_engines_created_before_install(sqlite_engine, captured):
    namespace = namespace_of(sqlite_engine)
    with lc.job("read"), sqlite_engine.connect() as connection:
        connection.execute(sa.text("SELECT * FROM orders WHERE id = :id"), {"id": 1}).all()
        connection.execute(
            sa.text("SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id")
        ).all()
    inputs, outputs = captured.io("read")
    assert inputs == {(namespace, "orders"), (namespace, "customers")}
    assert outputs == set()


def test_writes_are_outputs_with_their_sources_as_inputs(sqlite_engine, captured):
    namespace = namespace_of(sqlite_engine)
    with lc.job("write"), sqlite_engine.begin() as connection:
        connection.exec_driver_sql(
            "CREATE TABLE summary AS SELECT customer_id, sum(total) t FROM orders GROUP BY 1"
        )
        connection.exec_driver_sql("INSERT INTO summary SELECT id, 0 FROM customers")
        connection.exec_driver_sql(
            "UPDATE orders SET total = 0 WHERE customer_id IN (SELECT id FROM customers)"
        )
        connection.exec_driver_sql("DELETE FROM customers WHERE id = 99")
        connection.exec_driver_sql(
            "CREATE VIEW v_big AS "
            "WITH big AS (SELECT * FROM orders WHERE total > 5) SELECT * FROM big"
        )
    inputs, outputs = captured.io("write")
    assert outputs == {(namespace, name) for name in ("summary", "orders", "customers", "v_big")}
    assert (namespace, "big") not in inputs | outputs
    assert inputs == {(namespace, "orders"), (namespace, "customers")}


def test_failed_statements_and_statements_outside_a_job_are_not_lineage(sqlite_engine, captured):
    with sqlite_engine.connect() as connection:
        connection.exec_driver_sql("SELECT * FROM orders").all()  # no job: nothing
    with lc.job("failing"), sqlite_engine.connect() as connection:
        with pytest.raises(sa.exc.OperationalError):
            connection.exec_driver_sql("SELECT * FROM missing_table")
        connection.exec_driver_sql("SELECT * FROM customers").all()
    inputs, _ = captured.io("failing")
    assert {name for _, name in inputs} == {"customers"}
    assert len(captured.events) == 2


def test_pandas_read_sql_and_to_sql_through_an_engine(sqlite_engine, captured):
    pd = pytest.importorskip("pandas")
    namespace = namespace_of(sqlite_engine)
    with lc.job("pandas"):
        frame = pd.read_sql("SELECT * FROM orders", sqlite_engine)
        frame.to_sql("orders_copy", sqlite_engine, index=False)
    inputs, outputs = captured.io("pandas")
    assert inputs == {(namespace, "orders")}
    assert outputs == {(namespace, "orders_copy")}


def test_postgres_tables_are_named_host_port_database_schema_table(postgres_engine, captured):
    database = postgres_engine.url.database
    with postgres_engine.begin() as connection:
        connection.exec_driver_sql("CREATE SCHEMA sales")
        connection.exec_driver_sql("CREATE TABLE sales.orders (id int, total int)")
        connection.exec_driver_sql("CREATE TABLE customers (id int)")
    with lc.job("pg-load", flow="etl"), postgres_engine.begin() as connection:
        connection.execute(
            sa.text("INSERT INTO sales.orders VALUES (:id, :total)"), {"id": 1, "total": 5}
        )
        connection.exec_driver_sql(
            "WITH recent AS (SELECT * FROM sales.orders) "
            "INSERT INTO customers SELECT id FROM recent WHERE total > %s",
            (1,),
        )
        connection.exec_driver_sql("CREATE TABLE report AS SELECT * FROM customers")
    inputs, outputs = captured.io("etl.pg-load")
    namespace = "postgres://127.0.0.1:5432"
    assert outputs == {
        (namespace, f"{database}.sales.orders"),
        (namespace, f"{database}.public.customers"),
        (namespace, f"{database}.public.report"),
    }
    assert inputs == {
        (namespace, f"{database}.sales.orders"),
        (namespace, f"{database}.public.customers"),
    }


def test_a_statement_over_the_size_cap_is_not_kept_in_the_queue(
    sqlite_engine, captured, monkeypatch
):
    # The queue bounds the number of items, not their size: a statement the worker will
    # skip as too large must not wait in it (and hold its memory) until then.
    monkeypatch.setattr(RUNTIME, "start_worker", lambda: None)  # nobody drains the queue
    RUNTIME.needs_start = False
    huge = "SELECT * FROM orders WHERE id IN (" + ",".join(["1"] * 60_000) + ")"
    with lc.job("huge"), sqlite_engine.connect() as connection:
        connection.exec_driver_sql(huge).all()
        connection.exec_driver_sql("SELECT * FROM customers").all()
        assert [item[0] for item in RUNTIME.queue] == ["start", "sql"]
        assert RUNTIME.queue[1][2] == "SELECT * FROM customers"
    assert lc.stats()["sql.skipped_too_large"] == 1


def test_an_engine_the_host_drops_is_not_kept_alive_by_the_collector(tmp_path, captured):
    # Services that make an engine per tenant or per task drop it when done; the worker's
    # cache of platforms held every engine (and the open connections of its pool) forever.
    watched = []
    for index in range(3):
        engine = sa.create_engine(f"sqlite:///{tmp_path}/tenant-{index}.db")
        with lc.job(f"tenant-{index}"), engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1").all()
        assert lc.flush(5)
        watched.append(weakref.ref(engine))
        del engine, connection
    gc.collect()
    assert [ref() for ref in watched] == [None, None, None]
