"""DAG 1 of the Airflow harness (tests/producers/test_airflow.py): raw -> clean -> report in
PostgreSQL through SQLExecuteQueryOperator, so the OpenLineage provider's SQL parser names
each task's inputs, outputs and column lineage. ``fail_report`` fails on purpose: its INSERT
divides by zero, so PostgreSQL raises before a row is written (issue 31's failed write)."""

from datetime import datetime

from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

CONN = "lc_scratch"  # AIRFLOW_CONN_LC_SCRATCH, set by the harness

with DAG(
    dag_id="lc_shop_sql",
    start_date=datetime(2026, 1, 1),
    schedule=None,
    catchup=False,
    tags=["lineage-catalog-harness"],
) as dag:
    create_raw = SQLExecuteQueryOperator(
        task_id="create_raw",
        conn_id=CONN,
        sql=[
            "DROP TABLE IF EXISTS report, clean, raw",
            "CREATE TABLE raw (id integer, customer text, amount numeric)",
            "INSERT INTO raw (id, customer, amount) VALUES"
            " (1, 'Ada', 10), (2, 'ada', 5), (3, 'Grace', 7), (4, 'Linus', -1)",
        ],
    )
    build_clean = SQLExecuteQueryOperator(
        task_id="build_clean",
        conn_id=CONN,
        sql="CREATE TABLE clean AS"
        " SELECT id, lower(customer) AS customer, amount FROM raw WHERE amount > 0",
    )
    build_report = SQLExecuteQueryOperator(
        task_id="build_report",
        conn_id=CONN,
        sql=[
            "CREATE TABLE report (customer text, total numeric, orders integer)",
            "INSERT INTO report (customer, total, orders)"
            " SELECT customer, sum(amount) AS amount_sum, count(*) AS order_count"
            " FROM clean GROUP BY customer",
        ],
    )
    # Raises "division by zero" on the first row: nothing reaches report.
    fail_report = SQLExecuteQueryOperator(
        task_id="fail_report",
        conn_id=CONN,
        sql="INSERT INTO report (customer, total, orders)"
        " SELECT customer, amount / 0, 1 FROM clean",
    )
    create_raw >> build_clean >> build_report >> fail_report
