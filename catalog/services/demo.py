"""``manage.py load_demo``: store ingest's demo events (ingest/demo.py) and derive them now,
so the dashboard, a DAG, column lineage and an alias show at once, with or without a worker.
"""

from dataclasses import dataclass

from catalog.models import Dataset, Job
from catalog.names.naming import key_hash
from catalog.services.derive import derive_events
from ingest import demo

# Where to look once the demo is loaded: names its events give (see ingest/demo.py).
DAG = ("airflow_harness", "lc_shop_sql")
COLUMN_LINEAGE = ("postgres://localhost:5432", "dbt_test.main.customer_analytics")
ALIASED = ("hive://dataproc-producer-test-m:9083", "default.t1")


class CatalogNotEmpty(Exception):
    """The event log holds events that are not the demo's: mixing them needs ``force``."""


@dataclass(frozen=True)
class DemoResult:
    events: int
    stored: int  # new in the log
    derived: int  # derived by this call (the worker may have derived some first)
    failed: int
    dag_id: int | None  # None: not derived yet (a worker holds it), or not there
    column_lineage_dataset_id: int | None
    aliased_dataset_id: int | None


def load_demo(force: bool = False) -> DemoResult:
    """Store the demo's events once each (ingest's digest makes a second load store
    nothing) and derive them. Refuses (``CatalogNotEmpty``) when the log holds any other
    event, unless ``force``: the demo's names would mix with real ones."""
    events = demo.demo_events()
    if not force and demo.other_events_stored(events):
        raise CatalogNotEmpty
    loaded = demo.load(events)
    result = derive_events(loaded.event_ids)
    dag = Job.objects.filter(key_hash=key_hash(*DAG)).values_list("id", flat=True).first()
    return DemoResult(
        events=len(events),
        stored=loaded.stored,
        derived=result.derived,
        failed=result.failed,
        dag_id=dag,
        column_lineage_dataset_id=_dataset_id(*COLUMN_LINEAGE),
        aliased_dataset_id=_dataset_id(*ALIASED),
    )


def _dataset_id(namespace: str, name: str) -> int | None:
    return Dataset.objects.for_alias(namespace, name).values_list("id", flat=True).first()
