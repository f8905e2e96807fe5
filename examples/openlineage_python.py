"""A job that reports its lineage to the catalog with openlineage-python: a START when it
begins, a COMPLETE naming what it read and wrote when it ends (docs/producers.md).

    pip install openlineage-python
    export OPENLINEAGE_URL=http://localhost:8000
    export OPENLINEAGE_ENDPOINT=api/v1/lineage
    export OPENLINEAGE_API_KEY=lc_ingest_...
    python examples/openlineage_python.py

The client takes its transport from ``openlineage.yml`` (OPENLINEAGE_CONFIG, the working
directory or ~/.openlineage/) or, without one, from those variables. The catalog then shows
the job ``examples/daily_orders`` with one COMPLETE run, and the lineage
``shop.public.orders`` (postgres://db:5432) -> daily_orders -> ``orders_daily`` (s3://lake),
with the output's schema and its columns' lineage.
"""

import sys
import uuid
from datetime import UTC, datetime

import requests
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset, schema_dataset

# Who sent the events: a URI naming your code (the catalog shows it on every event).
PRODUCER = "https://example.com/lineage-catalog/examples/openlineage_python.py"
NAMESPACE = "examples"
JOB = "daily_orders"

ORDERS = InputDataset(
    namespace="postgres://db:5432",
    name="shop.public.orders",
    facets={
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[
                schema_dataset.SchemaDatasetFacetFields(name="ordered_at", type="timestamp"),
                schema_dataset.SchemaDatasetFacetFields(name="amount", type="numeric"),
            ]
        )
    },
)


def daily_totals_output() -> OutputDataset:
    """The table the job writes, with its schema and where each column comes from."""

    def from_orders(field: str, subtype: str) -> column_lineage_dataset.Fields:
        source = column_lineage_dataset.InputField(
            namespace=ORDERS.namespace,
            name=ORDERS.name,
            field=field,
            transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype=subtype)],
        )
        return column_lineage_dataset.Fields(inputFields=[source])

    return OutputDataset(
        namespace="s3://lake",
        name="orders_daily",
        facets={
            "schema": schema_dataset.SchemaDatasetFacet(
                fields=[
                    schema_dataset.SchemaDatasetFacetFields(name="day", type="date"),
                    schema_dataset.SchemaDatasetFacetFields(name="total", type="numeric"),
                ]
            ),
            "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
                fields={
                    "day": from_orders("ordered_at", "TRANSFORMATION"),
                    "total": from_orders("amount", "AGGREGATION"),
                }
            ),
        },
    )


def event(state: RunState, run: Run, outputs: list[OutputDataset]) -> RunEvent:
    return RunEvent(
        eventType=state,
        eventTime=datetime.now(UTC).isoformat(),
        run=run,
        job=Job(namespace=NAMESPACE, name=JOB),
        producer=PRODUCER,
        inputs=[ORDERS],
        outputs=outputs,
    )


def main() -> str:
    """Report one run of the job; returns its run id. An HTTP error raises."""
    client = OpenLineageClient()
    run = Run(runId=str(uuid.uuid4()))
    client.emit(event(RunState.START, run, outputs=[]))
    # ... the job's work: read shop.public.orders, write orders_daily ...
    client.emit(event(RunState.COMPLETE, run, outputs=[daily_totals_output()]))
    print(f"sent START and COMPLETE of run {run.runId} of job {NAMESPACE}/{JOB}")
    return run.runId


def what_went_wrong(error: requests.RequestException) -> str:
    """One line for a person who ran the program by hand: what the catalog (or nothing)
    answered, and the setting that fixes it, instead of the client's traceback."""
    url = error.request.url if error.request is not None else "OPENLINEAGE_URL"
    if isinstance(error, requests.HTTPError) and error.response is not None:
        status = error.response.status_code
        if status in (401, 403):
            return (
                f"the catalog at {url} refused the token ({status}): set OPENLINEAGE_API_KEY "
                "to an ingest token (make run prints one; or manage.py create_token --scope "
                "ingest --name NAME)"
            )
        return f"the catalog at {url} answered {status}: {error.response.text[:300]}"
    return (
        f"nothing answered at {url} ({type(error).__name__}): is the catalog running "
        "(make run), and is OPENLINEAGE_URL the address it prints?"
    )


if __name__ == "__main__":
    try:
        main()
    except requests.RequestException as error:
        sys.exit(f"examples/openlineage_python.py: {what_went_wrong(error)}")
