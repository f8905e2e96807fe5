"""parse_sql and dataset naming: what the collector reports for a statement and a connection."""

import time

import pytest
from lineage_collector import DatasetName, Table, dataset_name, parse_sql
from lineage_collector.sql import SqlParser


def tables(items) -> set[str]:
    return {str(item) for item in items}


@pytest.mark.parametrize(
    ("sql", "dialect", "inputs", "outputs"),
    [
        (
            "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id",
            "postgres",
            {"orders", "customers"},
            set(),
        ),
        (
            "INSERT INTO daily SELECT day, sum(total) FROM orders GROUP BY day",
            "postgres",
            {"orders"},
            {"daily"},
        ),
        (
            "UPDATE stock SET qty = (SELECT sum(q) FROM moves) WHERE id = %s",
            "postgres",
            {"moves"},
            {"stock"},
        ),
        (
            "DELETE FROM sessions WHERE user_id IN (SELECT id FROM banned)",
            "postgres",
            {"banned"},
            {"sessions"},
        ),
        (
            "MERGE INTO dim USING staging s ON dim.id = s.id "
            "WHEN MATCHED THEN UPDATE SET name = s.name",
            "postgres",
            {"staging"},
            {"dim"},
        ),
        (
            "CREATE TABLE sales.summary AS SELECT * FROM sales.orders",
            "postgres",
            {"sales.orders"},
            {"sales.summary"},
        ),
        (
            "CREATE OR REPLACE VIEW v_orders AS SELECT * FROM orders",
            "postgres",
            {"orders"},
            {"v_orders"},
        ),
        ("SELECT * INTO archive FROM orders", "tsql", {"orders"}, {"archive"}),
        ("INSERT OVERWRITE TABLE t SELECT * FROM s", "hive", {"s"}, {"t"}),
        (
            "WITH recent AS (SELECT * FROM orders), big AS (SELECT * FROM recent) "
            "INSERT INTO report SELECT * FROM big JOIN (SELECT * FROM refunds) r ON true",
            "postgres",
            {"orders", "refunds"},
            {"report"},
        ),
        ('SELECT * FROM "MixedCase".Orders', "postgres", {"MixedCase.orders"}, set()),
        ("select * from db.orders", "snowflake", {"DB.ORDERS"}, set()),
        (
            "/* report */ SELECT a FROM t -- trailing\n WHERE b = :b AND c = %(c)s",
            "postgres",
            {"t"},
            set(),
        ),
        (
            "UNLOAD (SELECT * FROM db.t) TO 's3://bucket/exports/t/' WITH (format = 'PARQUET')",
            "athena",
            {"db.t"},
            set(),
        ),
        ("SELECT * FROM pg_catalog.pg_class", "postgres", set(), set()),
    ],
)
def test_parse_sql_reports_real_tables_and_never_cte_names(sql, dialect, inputs, outputs):
    lineage = parse_sql(sql, dialect=dialect)
    assert tables(lineage.inputs) == inputs
    assert tables(lineage.outputs) == outputs


@pytest.mark.parametrize("sql", ["BEGIN", "SET search_path TO x", "SHOW ALL", "COMMIT", "select 1"])
def test_statements_without_lineage_are_skipped(sql):
    assert not parse_sql(sql)


def test_unload_and_copy_are_peeled_to_their_query_and_location():
    unload = parse_sql(
        "UNLOAD ('select * from s.t where a = ''x''') TO 's3://b/out/' IAM_ROLE 'r'", "redshift"
    )
    assert unload.inputs == (Table(None, "s", "t"),)
    assert unload.output_locations == ("s3://b/out/",)
    copy = parse_sql("COPY s.events FROM 's3://raw/events/' IAM_ROLE 'r' JSON 'auto'", "redshift")
    assert copy.outputs == (Table(None, "s", "events"),)
    assert copy.input_locations == ("s3://raw/events/",)


def test_default_schema_fills_unqualified_tables():
    lineage = parse_sql("SELECT * FROM orders JOIN x.items ON true", default_schema="shop")
    assert tables(lineage.inputs) == {"shop.orders", "x.items"}


def test_parser_caches_by_statement_and_caps_size():
    parser = SqlParser(max_chars=100)
    first = parser.parse("SELECT * FROM orders WHERE id = ?", "postgres")
    assert parser.parse("SELECT * FROM orders WHERE id = ?", "postgres") is first
    assert not parser.parse("SELECT * FROM t WHERE x IN (" + "1," * 100 + "1)", "postgres")


def test_parser_over_its_time_budget_waits_for_the_next_second_instead_of_dropping():
    parser = SqlParser(budget_per_second=0.1)
    parser._window_start = time.perf_counter() - 0.8  # 0.2 s left in a spent window
    parser._window_spent = 0.1
    started = time.perf_counter()
    lineage = parser.parse("SELECT * FROM b", "postgres")
    assert time.perf_counter() - started >= 0.15
    assert tables(lineage.inputs) == {"b"}


def test_unparseable_sql_is_empty_not_an_error():
    assert not SqlParser().parse("SELECT FROM WHERE (((", "postgres")


@pytest.mark.parametrize(
    ("url", "table", "expected"),
    [
        (
            "postgresql+psycopg://u:p@db.internal/shop",
            "orders",
            ("postgres://db.internal:5432", "shop.public.orders"),
        ),
        (
            "postgresql://u@db:6432/shop",
            "Sales.Orders",
            ("postgres://db:6432", "shop.sales.orders"),
        ),
        (
            "mysql+pymysql://u@mysql.local/shop",
            "orders",
            ("mysql://mysql.local:3306", "shop.orders"),
        ),
        (
            "mssql+pyodbc://u@sql.local/shop",
            "orders",
            ("mssql://sql.local:1433", "shop.dbo.orders"),
        ),
        (
            "redshift+redshift_connector://u@analytics.abc123.eu-west-1.redshift.amazonaws.com:5439/dev",
            "public.orders",
            ("redshift://analytics.eu-west-1:5439", "dev.public.orders"),
        ),
        (
            "snowflake://u@myorg-acct/analytics/raw",
            "orders",
            ("snowflake://myorg-acct", "ANALYTICS.RAW.ORDERS"),
        ),
        (
            "bigquery://my-project/dataset",
            "dataset.orders",
            ("bigquery", "my-project.dataset.orders"),
        ),
        (
            "awsathena+rest://@athena.eu-west-1.amazonaws.com:443/sales",
            "orders",
            ("awsathena://athena.eu-west-1.amazonaws.com", "AwsDataCatalog.sales.orders"),
        ),
        ("sqlite:////data/app.db", "orders", ("sqlite:///data/app.db", "orders")),
    ],
)
def test_dataset_name_follows_the_openlineage_naming_spec(url, table, expected):
    assert dataset_name(url, table) == DatasetName(*expected)


@pytest.mark.parametrize(
    ("uri", "name"),
    [
        ("s3://out/orders/2026/11/29/part-0.parquet", "orders"),
        ("s3://out/orders/dt=2026-11-29/hour=03/part-0.parquet", "orders"),
        ("s3://out/warehouse/orders/region=eu/dt=1/x.csv", "warehouse/orders"),
        ("s3://out/report.csv", "report.csv"),
        ("s3://out/2026/11/29/x.csv", "/"),
        ("s3a://out/exports/t/", "exports/t"),
    ],
)
def test_s3_paths_become_prefix_datasets_without_partition_folders(uri, name):
    assert dataset_name(uri) == DatasetName(f"s3://{uri.split('/')[2]}", name)


def test_dataset_name_reads_dataset_uris():
    assert dataset_name("postgres://db:5432/shop.public.orders") == DatasetName(
        "postgres://db:5432", "shop.public.orders"
    )


@pytest.mark.parametrize(
    "sql",
    [
        # Each unterminated "/*" used to rescan the rest of the statement: quadratic.
        "SELECT 1 " + "/* " * 30_000,
        # UNLOAD's "\s*(.*)\s*\)" split runs of spaces every possible way: cubic.
        "UNLOAD (" + " " * 3_000 + "x",
        "COPY (" + "x) " * 30_000,
        "SELECT " + "'a" * 30_000,
    ],
    ids=["unterminated-comments", "unload-spaces", "copy-parens", "lone-quotes"],
)
def test_a_pathological_statement_under_the_size_cap_is_handled_in_linear_time(sql):
    # The worker parses on the host's cores: a statement that regex backtracking turns into
    # minutes of CPU (these took 2 s to hours before) is a hostile input, not an edge case.
    parser = SqlParser()
    parser.parse("SELECT 1", "redshift")  # sqlglot's one-off import is not the statement's
    # This thread's CPU, not the wall clock: on a loaded machine the wall clock counted the
    # other processes' turns (3.4 s at load 10-12 for well under a second of parsing).
    started = time.thread_time()
    parser.parse(sql, "redshift")
    assert time.thread_time() - started < 2.0


def test_a_parse_longer_than_the_budget_window_is_paid_back_before_the_next_one():
    # One statement that costs more than a whole window used to be forgotten when the
    # window rolled over, so a stream of them kept the worker parsing without a pause.
    parser = SqlParser(budget_per_second=0.25)
    parser._window_start = time.perf_counter() - 1.1
    parser._window_spent = 0.5  # 2 s of budget spent in the window that just ended
    started = time.perf_counter()
    parser.parse("SELECT * FROM b", "postgres")
    assert time.perf_counter() - started >= 0.8  # waited until 2 s after the window began


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "postgres://etl:hunter2@db:5432/shop.public.orders",
            ("postgres://db:5432", "shop.public.orders"),
        ),
        ("s3n://AKIAEXAMPLE:hunter2@raw/events/2026/x.json", ("s3://raw", "events")),
        # A "/" in the secret (AWS secrets are base64) or the password ended the user info
        # early: the key and part of the secret became the namespace, the rest the name.
        (
            "s3n://AKIAEXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY@raw/events/2026/x.json",
            ("s3://raw", "events"),
        ),
        (
            "postgres://etl:hun/ter2@db:5432/shop.public.orders",
            ("postgres://db:5432", "shop.public.orders"),
        ),
        # An "@" further on is the object's own, with or without keys before the bucket.
        ("s3://raw/users/a@example.com/x.json", ("s3://raw", "users/a@example.com")),
        (
            "s3n://AKIAEXAMPLE:wJal/K7MD@raw/users/a@example.com/x",
            ("s3://raw", "users/a@example.com"),
        ),
        ("kafka://broker:9092/orders", ("kafka://broker:9092", "orders")),
        (
            "postgres://[::1]:5432/shop.public.orders",
            ("postgres://[::1]:5432", "shop.public.orders"),
        ),
    ],
)
def test_credentials_in_a_dataset_uri_are_not_part_of_its_name(source, expected):
    assert dataset_name(source) == expected


def test_a_uri_that_is_no_dataset_uri_is_refused_without_quoting_it():
    # The refusal is counted and logged (manual.add): quoting the URI logged its password.
    for source in ("etl:hunter2@db/shop", "postgres://etl:hunter2/no-host"):
        with pytest.raises(ValueError) as refused:
            dataset_name(source)
        assert "hunter2" not in str(refused.value)


def test_the_parse_cache_is_bounded_by_the_text_it_keeps():
    # 4,096 entries of statements up to the 100,000-character cap could hold 400 MB for
    # good; the cache also evicts by the characters its keys hold.
    parser = SqlParser()
    for index in range(120):
        parser.parse(f"SELECT * FROM t{index} -- " + "x" * 90_000, "postgres")
    kept = sum(len(sql) for sql, _ in parser._cache)
    assert kept <= 8_000_000
    assert len(parser._cache) >= 80  # the newest are still there
    assert parser.parse(f"SELECT * FROM t119 -- {'x' * 90_000}", "postgres").inputs
