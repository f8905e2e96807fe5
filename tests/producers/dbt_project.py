"""A small dbt project for the dbt-ol harness, written into a temporary folder.

Two seeds (raw_customers, raw_orders), two staging models that rename their columns, one
mart joining them, data tests on the staging models, and one model that fails at run time
(it reads a table that does not exist), so the run's FAIL reaches the catalog.
"""

from pathlib import Path

PROJECT = "lc_shop"
SCHEMA = "analytics"
SEEDS = {
    "raw_customers.csv": "id,first_name,last_name\n1,Ada,Lovelace\n2,Alan,Turing\n3,Grace,Hopper\n",
    "raw_orders.csv": (
        "id,user_id,order_date,amount\n"
        "1,1,2026-11-01,10.50\n2,1,2026-11-02,3.25\n3,2,2026-11-02,7.00\n4,3,2026-11-03,12.00\n"
    ),
}
MODELS = {
    "staging/stg_customers.sql": (
        "select id as customer_id, first_name, last_name from {{ ref('raw_customers') }}\n"
    ),
    "staging/stg_orders.sql": (
        "select id as order_id, user_id as customer_id, order_date, amount\n"
        "from {{ ref('raw_orders') }}\n"
    ),
    "marts/customer_orders.sql": (
        "select c.customer_id, c.first_name, count(o.order_id) as order_count,\n"
        "       sum(o.amount) as total_amount\n"
        "from {{ ref('stg_customers') }} c\n"
        "left join {{ ref('stg_orders') }} o on o.customer_id = c.customer_id\n"
        "group by c.customer_id, c.first_name\n"
    ),
    # Fails at run time: the table does not exist in the scratch database.
    "marts/broken_orders.sql": "select order_id from {{ source('legacy', 'missing_orders') }}\n",
    "schema.yml": (
        "version: 2\n"
        "sources:\n"
        "  - name: legacy\n"
        "    schema: public\n"
        "    tables:\n"
        "      - name: missing_orders\n"
        "models:\n"
        "  - name: stg_customers\n"
        "    columns:\n"
        "      - name: customer_id\n"
        "        data_tests: [unique, not_null]\n"
        "  - name: stg_orders\n"
        "    columns:\n"
        "      - name: order_id\n"
        "        data_tests: [unique, not_null]\n"
    ),
}
STAGING = ("stg_customers", "stg_orders")
MART = "customer_orders"
FAILING = "broken_orders"


def write_project(root: Path, database: str) -> Path:
    """The project in ``root``, with a profiles.yml for ``database`` on the local server."""
    (root / "dbt_project.yml").write_text(
        f"name: {PROJECT}\nversion: '1.0.0'\nprofile: {PROJECT}\n"
        "seed-paths: [seeds]\nmodel-paths: [models]\n"
        f"models:\n  {PROJECT}:\n    +materialized: table\n"
    )
    (root / "profiles.yml").write_text(
        f"{PROJECT}:\n  target: scratch\n  outputs:\n    scratch:\n"
        "      type: postgres\n      host: 127.0.0.1\n      port: 5432\n"
        f"      user: postgres\n      password: ''\n      dbname: {database}\n"
        f"      schema: {SCHEMA}\n      threads: 1\n"
    )
    for name, text in SEEDS.items():
        (root / "seeds").mkdir(exist_ok=True)
        (root / "seeds" / name).write_text(text)
    for name, text in MODELS.items():
        path = root / "models" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
