"""An Airflow DAG whose lineage reaches the catalog with no code of its own: copy it into
your DAGs folder (docs/producers.md, "Airflow").

The OpenLineage provider (apache-airflow-providers-openlineage, configured in airflow.cfg's
``[openlineage]`` section) sends a START and a COMPLETE or FAIL for every task and one event
per DAG run. SQLExecuteQueryOperator's SQL is parsed, so each task names the tables it read
and wrote, their schema and column lineage, with no inlets or outlets declared. The
catalog then shows the DAG's job with its three tasks, raw -> build_clean -> clean ->
build_report -> report, and column edges such as ``report.customer <- clean.customer``.

The connection ``shop_postgres`` is any PostgreSQL database, e.g.
``export AIRFLOW_CONN_SHOP_POSTGRES=postgres://user:password@db.internal:5432/shop``.
"""

from datetime import datetime

from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

CONN = "shop_postgres"

with DAG(
    dag_id="shop_orders",
    start_date=datetime(2026, 1, 1),
    schedule="@daily",
    catchup=False,
    tags=["lineage-catalog-example"],
) as dag:
    create_raw = SQLExecuteQueryOperator(
        task_id="create_raw",
        conn_id=CONN,
        sql=[
            "CREATE TABLE IF NOT EXISTS raw (id integer, customer text, amount numeric)",
            "INSERT INTO raw (id, customer, amount) VALUES (1, 'Ada', 10), (2, 'Grace', 7)",
        ],
    )
    build_clean = SQLExecuteQueryOperator(
        task_id="build_clean",
        conn_id=CONN,
        sql=[
            "DROP TABLE IF EXISTS clean",
            "CREATE TABLE clean AS"
            " SELECT id, lower(customer) AS customer, amount FROM raw WHERE amount > 0",
        ],
    )
    build_report = SQLExecuteQueryOperator(
        task_id="build_report",
        conn_id=CONN,
        sql=[
            "DROP TABLE IF EXISTS report",
            "CREATE TABLE report AS"
            " SELECT customer, sum(amount) AS total, count(*) AS orders"
            " FROM clean GROUP BY customer",
        ],
    )
    create_raw >> build_clean >> build_report
