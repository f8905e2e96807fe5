"""bench/derive.py vacuums the tables derivation reads and writes, in its own database.

Between a curve's chunks (on a server with autovacuum off) it stood in for autovacuum with
a VACUUM that named no table: every table of the database, the shared catalogs among them,
which on a shared server waits on other databases' sessions, and the time it printed was
theirs as much as its own (ADR 0185).
"""

import pytest
from django.db import connection

from bench.derive import vacuum_measured

pytestmark = pytest.mark.django_db(transaction=True)

COUNTS = "SELECT relname, vacuum_count FROM pg_stat_user_tables WHERE schemaname = current_schema()"


def _vacuum_counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(COUNTS)
        return dict(cursor.fetchall())


def test_the_curves_vacuum_takes_the_event_log_and_the_catalog_only() -> None:
    before = _vacuum_counts()
    tables, seconds = vacuum_measured()
    after = _vacuum_counts()
    vacuumed = {name for name, count in after.items() if count > before.get(name, 0)}
    measured = {name for name in after if name.startswith(("ingest_", "catalog_"))}
    assert vacuumed == measured
    assert tables == len(measured) > 40
    assert "ingest_event" in vacuumed and "catalog_lineage_edge_run" in vacuumed
    assert seconds > 0
