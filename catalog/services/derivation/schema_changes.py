"""Schema versions and the changes between consecutive ones, derived per alias (ADR 0082).

Order independent: a version is a distinct schema at its earliest sighting (eventTime,
then the event's digest, never the order events arrived in), upserted so an older
sighting moves it earlier; an alias whose versions were added or moved has its changes
recomputed from all its versions, so a late event that lands between two versions splits
the change between them; the changes that no longer hold are deleted and the others
recorded through ``change_log.record`` (a change stored already keeps its row).
Idempotent: the changes' natural key is unique and a re-derived
batch that brings nothing new or older recomputes nothing.
"""

import hashlib
from typing import Any

import orjson
from django.db import connection

from catalog.models import ChangeKind, DatasetChange
from catalog.services.derivation import change_log
from catalog.services.derivation.records import AliasKey, Facts
from core.timestamps import parse_timestamp

# Upsert the batch's versions; RETURNING names the aliases whose versions are new or moved
# earlier (an unchanged row is not updated, so it is not returned).
_UPSERT = """
INSERT INTO catalog_schema_version AS v
    (alias_id, schema_hash, fields, first_seen, first_event_id, first_digest)
SELECT k.alias_id, k.schema_hash, k.fields::jsonb, k.first_seen, k.event_id, k.digest
FROM unnest(%(aliases)s::bigint[], %(hashes)s::bytea[], %(fields)s::text[],
            %(times)s::timestamptz[], %(events)s::bigint[], %(digests)s::bytea[])
     AS k(alias_id, schema_hash, fields, first_seen, event_id, digest)
ORDER BY k.alias_id, k.schema_hash
ON CONFLICT (alias_id, schema_hash) DO UPDATE
SET first_seen = EXCLUDED.first_seen, first_event_id = EXCLUDED.first_event_id,
    first_digest = EXCLUDED.first_digest
WHERE (EXCLUDED.first_seen, EXCLUDED.first_digest) < (v.first_seen, v.first_digest)
RETURNING v.alias_id
"""

_VERSIONS = """
SELECT v.alias_id, v.schema_hash, v.fields, v.first_seen, v.first_event_id, e.run_id
FROM catalog_schema_version v LEFT JOIN ingest_event e ON e.id = v.first_event_id
WHERE v.alias_id = ANY(%(aliases)s)
ORDER BY v.alias_id, v.first_seen, v.first_digest
"""


def record_schema_changes(facts: Facts, alias_ids: dict[AliasKey, int]) -> None:
    """Store the batch's schema versions and recompute the changes of the aliases whose
    versions it added or moved earlier. The caller holds the aliases' locks."""
    if not facts.schemas:
        return
    rows = sorted(
        (alias_ids[key], digest, version, event_id, fields)
        for (key, digest), (version, event_id, fields) in facts.schemas.items()
    )
    with connection.cursor() as cursor:
        cursor.execute(
            _UPSERT,
            {
                "aliases": [row[0] for row in rows],
                "hashes": [row[1] for row in rows],
                "fields": [orjson.dumps(row[4]).decode() for row in rows],
                "times": [parse_timestamp(row[2][0]) for row in rows],
                "events": [row[3] for row in rows],
                "digests": [bytes.fromhex(row[2][1]) for row in rows],
            },
        )
        moved = sorted({row[0] for row in cursor.fetchall()})
    if moved:
        _recompute(moved)


def _recompute(alias_ids: list[int]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_VERSIONS, {"aliases": alias_ids})
        versions = cursor.fetchall()
    changes: list[DatasetChange] = []
    previous: tuple[Any, ...] | None = None
    for version in versions:
        if previous is not None and previous[0] == version[0]:
            changes.extend(_between(previous, version))
        previous = version
    # What no longer lies between two neighbours goes (a late version split it); the rest
    # is recorded, and a change stored already keeps its row (change_log, ADR 0088).
    wanted = {change_log.natural_key(change) for change in changes}
    stored = DatasetChange.objects.filter(alias_id__in=alias_ids).only(
        "id", "alias_id", "before_hash", "after_hash", "key_hash"
    )
    change_log.delete([row for row in stored if change_log.natural_key(row) not in wanted])
    change_log.record(changes)


def _between(before: tuple[Any, ...], after: tuple[Any, ...]) -> list[DatasetChange]:
    """The changes from one version to the next: columns added, removed, retyped."""
    alias_id, before_hash, old_fields = before[0], bytes(before[1]), _fields(before[2])
    after_hash, new_fields, changed_at, event_id, run_id = (
        bytes(after[1]),
        _fields(after[2]),
        after[3],
        after[4],
        after[5] or "",
    )
    found: list[tuple[str, str, str, str]] = []
    for name, old_type in old_fields.items():
        if name not in new_fields:
            found.append((ChangeKind.COLUMN_REMOVED, name, old_type, ""))
        elif new_fields[name] != old_type:
            found.append((ChangeKind.TYPE_CHANGED, name, old_type, new_fields[name]))
    found += [
        (ChangeKind.COLUMN_ADDED, name, "", new_type)
        for name, new_type in new_fields.items()
        if name not in old_fields
    ]
    return [
        DatasetChange(
            alias_id=alias_id,
            kind=kind,
            column=name,
            old_type=old,
            new_type=new,
            changed_at=changed_at,
            event_id=event_id,
            run_id=run_id,
            before_hash=before_hash,
            after_hash=after_hash,
            key_hash=hashlib.sha256(f"{kind}\x00{name}".encode()).digest(),
        )
        for kind, name, old, new in found
    ]


def _fields(value: Any) -> dict[str, str]:
    """[[name, type], ...] (as stored) → {name: type}; a name sent twice keeps its first."""
    fields = orjson.loads(value) if isinstance(value, str) else value
    answer: dict[str, str] = {}
    for name, type_ in fields:
        answer.setdefault(name, type_)
    return answer
