"""The demo events ``manage.py load_demo`` stores: real producers' events, shipped as package
data (ingest/demo_events/) so an installed image needs no test fixture at run time.

They are copies of fixtures the tests read (tests/fixtures/openlineage/SOURCES.md says
where each came from): Apache Airflow 2.10.5's ``lc_shop_sql`` DAG (a DAG and its tasks,
one failing), dbt-ol's seeds → staging → marts in default mode (column lineage), and
openlineage-spark 1.23.0 on Dataproc writing Hive tables (one dataset named both by its
HDFS location and its Hive table: an alias). Storing them is ordinary ingest, deduplicated
by digest, so loading them twice stores nothing twice.
"""

from dataclasses import dataclass
from pathlib import Path

from ingest.backfill import event_files, read_items
from ingest.models import Event
from ingest.services import SerialisedEvent, record_events, serialise
from ingest.validation import validate_openlineage

EVENTS_DIR = Path(__file__).resolve().parent / "demo_events"


@dataclass(frozen=True)
class DemoLoad:
    event_ids: list[int]  # every demo event's id, new or already stored
    stored: int  # stored by this call
    already: int  # stored before (the demo loaded earlier, or the same event sent)


def demo_events() -> list[SerialisedEvent]:
    """The demo's events, validated as the ingest endpoint validates them, in file order."""
    events = []
    for path in event_files([EVENTS_DIR]):
        for item in read_items(path):
            if item.error is not None:  # a broken package, not the user's input
                raise ValueError(f"{item.location}: {item.error}")
            events.append(serialise(validate_openlineage(item.document)))
    return events


def other_events_stored(events: list[SerialisedEvent]) -> bool:
    """Whether the log holds any event that is not one of ``events``."""
    return Event.objects.exclude(digest__in=[event.digest for event in events]).exists()


def load(events: list[SerialisedEvent]) -> DemoLoad:
    """Store ``events`` (``demo_events()``) once each; their derivation is enqueued as
    for any ingest."""
    stored = record_events(events)
    created = sum(1 for event in stored if event.created)
    return DemoLoad([event.id for event in stored], created, len(stored) - created)
