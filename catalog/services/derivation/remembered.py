"""Ids kept across a full rederive (ADR 0077): same identity, same id.

A full rederive empties the derived tables; before it does, ``remember`` writes each
dataset's, job's and run's id under its natural key into ``catalog_remembered_id``, and
derivation inserts a row it has to create with the id remembered for its key. Fresh ids
come from the tables' sequences, which TRUNCATE does not reset, so they are always past
every remembered id and never collide with one.
"""

import uuid
from typing import Any

from django.db import connection

from catalog.models import RememberedKind

_REMEMBER = """
INSERT INTO catalog_remembered_id (kind, key, object_id)
SELECT %(dataset)s, key_hash, dataset_id FROM catalog_dataset_alias WHERE dataset_id IS NOT NULL
UNION ALL
SELECT %(job)s, key_hash, id FROM catalog_job
UNION ALL
SELECT %(run)s, uuid_send(r.run_uuid) || j.key_hash, r.id
FROM catalog_run r JOIN catalog_job j ON j.id = r.job_id
ON CONFLICT (kind, key) DO NOTHING
"""


def remember(cursor: Any) -> None:
    """Remember every current id (in the caller's transaction, before it empties the tables).

    ``DO NOTHING`` keeps what an unfinished earlier rederive remembered: the half-derived
    catalog it left holds those ids or fresh ones, never better ones.
    """
    cursor.execute(
        _REMEMBER,
        {
            "dataset": RememberedKind.DATASET,
            "job": RememberedKind.JOB,
            "run": RememberedKind.RUN,
        },
    )


def forget(cursor: Any) -> None:
    """Drop the memory once every event is derived again (each id is in use once more)."""
    cursor.execute("DELETE FROM catalog_remembered_id")


def run_key(run_uuid: uuid.UUID, job_key_hash: bytes) -> bytes:
    return run_uuid.bytes + job_key_hash


def remembered(kind: RememberedKind, keys: list[bytes]) -> dict[bytes, int]:
    """The remembered id of each of ``keys`` that has one (one indexed query)."""
    if not keys:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT key, object_id FROM catalog_remembered_id WHERE kind = %s AND key = ANY(%s)",
            [int(kind), keys],
        )
        return {bytes(key): object_id for key, object_id in cursor.fetchall()}


def remembered_dataset_ids(ids: list[int]) -> set[int]:
    """Which of the dataset ``ids`` are remembered ones (a rederive is under way)."""
    if not ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT object_id FROM catalog_remembered_id"
            " WHERE kind = %s AND object_id = ANY(%s)",
            [int(RememberedKind.DATASET), ids],
        )
        return {row[0] for row in cursor.fetchall()}
