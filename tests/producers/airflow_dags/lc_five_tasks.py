"""DAG 2 of the Airflow harness (tests/producers/test_airflow.py): five tasks, a fan-out and
a fan-in over PostgreSQL, plus one task with no datasets (a BashOperator), so the DAG's job
has five child jobs of different shapes."""

from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

CONN = "lc_scratch"  # AIRFLOW_CONN_LC_SCRATCH, set by the harness

with DAG(
    dag_id="lc_five_tasks",
    start_date=datetime(2026, 1, 1),
    schedule=None,
    catchup=False,
    tags=["lineage-catalog-harness"],
) as dag:
    load_visits = SQLExecuteQueryOperator(
        task_id="load_visits",
        conn_id=CONN,
        sql=[
            "DROP TABLE IF EXISTS visits_summary, visits_by_day, visits_by_page, visits",
            "CREATE TABLE visits (day date, page text, visitor text)",
            "INSERT INTO visits (day, page, visitor) VALUES"
            " ('2026-01-01', '/', 'a'), ('2026-01-01', '/docs', 'b'), ('2026-01-02', '/', 'a')",
        ],
    )
    by_day = SQLExecuteQueryOperator(
        task_id="by_day",
        conn_id=CONN,
        sql="CREATE TABLE visits_by_day AS SELECT day, count(*) AS visits FROM visits GROUP BY day",
    )
    by_page = SQLExecuteQueryOperator(
        task_id="by_page",
        conn_id=CONN,
        sql="CREATE TABLE visits_by_page AS"
        " SELECT page, count(DISTINCT visitor) AS visitors FROM visits GROUP BY page",
    )
    summary = SQLExecuteQueryOperator(
        task_id="summary",
        conn_id=CONN,
        sql="CREATE TABLE visits_summary AS"
        " SELECT (SELECT sum(visits) FROM visits_by_day) AS visits,"
        " (SELECT max(visitors) FROM visits_by_page) AS top_page_visitors",
    )
    announce = BashOperator(task_id="announce", bash_command="echo summary ready")
    load_visits >> [by_day, by_page] >> summary >> announce
