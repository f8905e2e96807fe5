"""Copy-paste configuration for each producer, filled with this server's URL.

The front page shows them; docs/producers.md says what each producer then sends and what
the catalog shows (the recipes there were run). The token is a placeholder: a page anyone
can load never carries a secret (`make run` prints a real one).
"""

from dataclasses import dataclass

TOKEN_PLACEHOLDER = "lc_ingest_..."
# A real OpenLineage RunEvent (an Airflow task's COMPLETE) in the repository, so the curl
# command shown runs as it is from the repository's root; `make run` prints the same path.
SAMPLE_EVENT = "examples/event.json"


@dataclass(frozen=True)
class Snippet:
    producer: str
    where: str  # what file or shell the text goes in
    text: str


def snippets(base_url: str, token: str = TOKEN_PLACEHOLDER) -> list[Snippet]:
    """One snippet per producer; ``base_url`` has no trailing slash."""
    ingest = f"{base_url}/api/v1/lineage"
    # The variables openlineage-python reads when it finds no openlineage.yml; dbt-ol and the
    # collector's openlineage extra are built on that client and read the same ones.
    environment = (
        f"export OPENLINEAGE_URL={base_url}\n"
        "export OPENLINEAGE_ENDPOINT=api/v1/lineage\n"
        f"export OPENLINEAGE_API_KEY={token}\n"
    )
    airflow_transport = (
        f'{{"type": "http", "url": "{base_url}", "endpoint": "api/v1/lineage", '
        f'"compression": "gzip", "auth": {{"type": "api_key", "apiKey": "{token}"}}}}'
    )
    return [
        Snippet(
            "openlineage-python",
            "openlineage.yml (or, without one, the environment variables of the next snippet)",
            "transport:\n"
            "  type: http\n"
            f"  url: {base_url}\n"
            "  endpoint: api/v1/lineage\n"
            "  compression: gzip\n"
            "  auth:\n"
            "    type: api_key\n"
            f"    apiKey: {token}\n",
        ),
        Snippet(
            "openlineage-python, by environment",
            "the shell that runs the program, when no openlineage.yml is found",
            environment,
        ),
        Snippet(
            "dbt-ol (openlineage-dbt)",
            "the shell that runs dbt",
            environment + "export OPENLINEAGE_NAMESPACE=dbt_prod\n"
            "dbt-ol seed && dbt-ol run && dbt-ol test\n",
        ),
        Snippet(
            "Airflow (apache-airflow-providers-openlineage)",
            "airflow.cfg (or AIRFLOW__OPENLINEAGE__TRANSPORT)",
            f"[openlineage]\nnamespace = airflow_prod\ntransport = {airflow_transport}\n",
        ),
        Snippet(
            "Spark (openlineage-spark)",
            "spark-submit",
            "spark-submit \\\n"
            "  --conf spark.extraListeners=io.openlineage.spark.agent.OpenLineageSparkListener \\\n"
            "  --conf spark.openlineage.transport.type=http \\\n"
            f"  --conf spark.openlineage.transport.url={base_url} \\\n"
            "  --conf spark.openlineage.transport.endpoint=/api/v1/lineage \\\n"
            "  --conf spark.openlineage.transport.compression=gzip \\\n"
            "  --conf spark.openlineage.transport.auth.type=api_key \\\n"
            f"  --conf spark.openlineage.transport.auth.apiKey={token} \\\n"
            "  --conf spark.openlineage.namespace=spark_prod \\\n"
            "  job.py\n",
        ),
        Snippet(
            "Flink (openlineage-flink)",
            "Flink's config.yaml, with the job listener registered in the job",
            "execution.attached: true\n"
            "openlineage.transport.type: http\n"
            f"openlineage.transport.url: {base_url}\n"
            "openlineage.transport.endpoint: /api/v1/lineage\n"
            "openlineage.transport.auth.type: api_key\n"
            f"openlineage.transport.auth.apiKey: {token}\n",
        ),
        Snippet(
            "Anything else (curl)",
            "a shell",
            f"curl -H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' \\\n"
            f"  -d @{SAMPLE_EVENT} {ingest}\n",
        ),
    ]
