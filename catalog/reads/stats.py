"""The catalog's headline figures, read by ``/api/v1/stats`` and the admin dashboard.

Every figure is bounded whatever the size of the store: table sizes are the planner's
estimate (an exact count, capped, for tables too small for the estimate to be worth
anything), counts of recent or pending events stop at a cap and walk an index (the BRIN
on ``received_at``, the partial pending/failed indexes).
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Model

from catalog.models import (
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    Job,
    JobLineageEdge,
    LineageEdge,
    MetadataRecord,
    Run,
)
from core.counts import estimate_sql
from ingest.authentication import session_may_read
from ingest.models import Event
from ingest.querysets import BACKLOG_COUNT_CAP, DerivationBacklog

COUNT_CAP = BACKLOG_COUNT_CAP
# What a session needs to read these figures (/api/v1/stats, the front page): they are
# figures of the raw log and its derivation.
READ_PERMISSIONS = ("ingest.view_event",)

# The tables whose size is a headline figure, by the name the figures carry.
SIZED: dict[str, type[Model]] = {
    "events": Event,
    "jobs": Job,
    "runs": Run,
    "datasets": Dataset,
    "dataset_aliases": DatasetAlias,
    "lineage_edges": LineageEdge,
    "job_edges": JobLineageEdge,
    "column_lineage_edges": ColumnLineageEdge,
    "metadata_records": MetadataRecord,
}


def _size_sql(table: str) -> str:
    # Above the cap: pg_class.reltuples, an integer clamped to core.counts.MAX_COUNT (the
    # estimate is a float: 1e30 would overflow a plain ::bigint cast). Otherwise (small,
    # or never analysed, when reltuples is -1 or 0): an exact count that stops at the cap.
    # The count is an uncorrelated subquery, which PostgreSQL only runs when the CASE
    # needs it.
    estimate = (
        f"(SELECT {estimate_sql('reltuples')} FROM pg_class "
        f"WHERE relname = '{table}' AND relkind IN ('r', 'p'))"
    )
    quoted = connection.ops.quote_name(table)
    exact = f"(SELECT count(*) FROM (SELECT 1 FROM {quoted} LIMIT %(cap)s) AS c)"
    return f"CASE WHEN coalesce({estimate}, 0) > %(cap)s THEN {estimate} ELSE {exact} END"


def may_read(user: Any) -> bool:
    """Whether ``user``'s session sees these figures: exactly when /api/v1/stats answers
    it (ingest.authentication.session_may_read with READ_PERMISSIONS, the rule of the
    endpoint's HasReadScope), on the front page too."""
    return session_may_read(user, READ_PERMISSIONS)


def table_sizes() -> dict[str, int]:
    """Rows per headline table, estimated for big tables and exact for small (one query)."""
    columns = ", ".join(_size_sql(model._meta.db_table) for model in SIZED.values())
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns}", {"cap": COUNT_CAP})
        row = cursor.fetchone()
    return {label: int(value) for label, value in zip(SIZED, row, strict=True)}


@dataclass(frozen=True)
class IngestRate:
    last_minute: int
    last_hour: int


def ingest_rate(now: datetime) -> IngestRate:
    """Events received in the last minute and hour (capped counts on the BRIN range)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM (SELECT 1 FROM ingest_event "
            "  WHERE received_at >= %(minute)s LIMIT %(cap)s) AS m),"
            " (SELECT count(*) FROM (SELECT 1 FROM ingest_event "
            "  WHERE received_at >= %(hour)s LIMIT %(cap)s) AS h)",
            {
                "cap": COUNT_CAP,
                "minute": now - timedelta(minutes=1),
                "hour": now - timedelta(hours=1),
            },
        )
        last_minute, last_hour = cursor.fetchone()
    return IngestRate(last_minute, last_hour)


def derivation_backlog() -> DerivationBacklog:
    """Pending and failed events (capped) and the oldest pending one (one query)."""
    return Event.objects.derivation_backlog(COUNT_CAP)
