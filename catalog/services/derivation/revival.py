"""Revival (ADR 0078): an event received after a retirement that names the retired dataset,
job or namespace brings it back, whatever its eventTime; one received before does not, so
a rederive replaying the log keeps what stewards retired.

Run at the end of a batch's transaction, which holds the retirement lock shared from its
first statement on (``RETIREMENT_LOCK``, taken by batch.derive_claimed; retiring takes it
exclusively), so a retirement either committed before this statement reads it, or reads
its ``retired_at`` after this batch committed: no event is lost between the two.
"""

from collections.abc import Sequence

from django.db import connection

from catalog.models import RetiredKind
from catalog.names import naming
from catalog.services.derivation.records import RawEvent
from catalog.services.derivation.retirement_changes import record_retirements

# What the events name: their own job (by key), the datasets of their aliases (the rows
# store_event_datasets wrote), and both namespaces, normalised as a namespace retirement
# stores its own (a job keeps its namespace as sent: ``spark://h/`` names ``spark://h``).
# Each active retirement of one of them older than the event is restored, with the first
# such event.
_REVIVE = f"""
WITH named(kind, object_id, namespace, event_id) AS MATERIALIZED (
    SELECT {int(RetiredKind.JOB)}, j.id, n.namespace, n.event_id
    FROM unnest(%(events)s::bigint[], %(keys)s::bytea[], %(namespaces)s::text[])
      AS n(event_id, key, namespace)
    JOIN catalog_job j ON j.key_hash = n.key
  UNION ALL
    SELECT {int(RetiredKind.DATASET)}, a.dataset_id, a.namespace, ed.event_id
    FROM catalog_event_dataset ed JOIN catalog_dataset_alias a ON a.id = ed.alias_id
    WHERE ed.event_id = ANY(%(all_events)s) AND a.dataset_id IS NOT NULL
),
received AS MATERIALIZED (
    SELECT n.*, e.received_at FROM named n JOIN ingest_event e ON e.id = n.event_id
),
hit AS (
    SELECT r.id, min(x.event_id) AS event_id FROM received x
    JOIN catalog_retirement r ON r.kind = x.kind AND r.object_id = x.object_id
    WHERE r.restored_at IS NULL AND r.object_id IS NOT NULL AND x.received_at > r.retired_at
    GROUP BY r.id
  UNION ALL
    SELECT r.id, min(x.event_id) FROM received x
    JOIN catalog_retirement r ON md5(r.namespace) = md5(x.namespace)
    WHERE r.kind = {int(RetiredKind.NAMESPACE)} AND r.restored_at IS NULL
      AND r.namespace = x.namespace AND x.received_at > r.retired_at
    GROUP BY r.id
)
UPDATE catalog_retirement r
SET restored_at = clock_timestamp(), restored_by = 'event', revived_by_event_id = hit.event_id
FROM hit WHERE r.id = hit.id
RETURNING r.id
"""


def revive(events: Sequence[RawEvent]) -> int:
    """Restore what ``events`` (derived in this transaction) name and was retired before
    they were received; how many retirements ended."""
    if not events:
        return 0
    jobs = [
        (
            event.id,
            naming.job_key(event.job_namespace or "", event.job_name),
            naming.normalise_namespace(event.job_namespace or ""),
        )
        for event in events
        if event.job_name
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            _REVIVE,
            {
                "events": [event_id for event_id, _, _ in jobs],
                "keys": [key for _, key, _ in jobs],
                "namespaces": [namespace for _, _, namespace in jobs],
                "all_events": [event.id for event in events],
            },
        )
        ended = [row[0] for row in cursor.fetchall()]
    record_retirements(ended)  # the datasets' "restored" change records (ADR 0088)
    return len(ended)
