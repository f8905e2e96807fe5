"""Write-side services: storing events and managing tokens. Each owns its transaction."""

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from core import prepared
from core.problems import FieldError, Problem
from ingest.derivation_status import PENDING
from ingest.enqueue import enqueue_derivation_on_commit
from ingest.models import ApiToken, TokenScope
from ingest.validation import EventRecord

_COLUMNS = (
    "kind, event_type, event_time, run_id, job_namespace, job_name, producer, "
    "payload, payload_raw, digest, facet_problems, derivation_status, received_at"
)  # schemaURL only in the payload: nothing queries it (ADR 0103)
# One event: scalar parameters (adapting arrays costs more than the insert itself).
_INSERT_ONE = f"""
INSERT INTO ingest_event ({_COLUMNS})
VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s::jsonb, '{PENDING}', now())
ON CONFLICT (digest) DO NOTHING
RETURNING id, digest
"""
# Many events: one statement over parallel arrays, ids assigned in input order. The arrays
# travel in binary (%b) on a server-binding cursor: quoting 500 JSON payloads into array
# literals on the client cost more than everything else in a batch request. Rows are
# inserted in digest order, their ids drawn before in input order (``nextval`` runs after
# the subquery's sort): two batches holding the same new events in different orders each
# inserted some and then waited for the other's uncommitted copy of its next one, a
# deadlock PostgreSQL settled by failing one (a 503, nothing stored; ADR 0153). In one
# order, a batch only ever waits for one that is past the digest it wants.
_INSERT_MANY = f"""
INSERT INTO ingest_event (id, {_COLUMNS})
SELECT id, k, et, t, r, jns, jn, p, pl::jsonb, raw, d, fp::jsonb, '{PENDING}', now()
FROM (
    SELECT nextval('ingest_event_id_seq') AS id, u.*
    FROM unnest(
        %b::text[], %b::text[], %b::timestamptz[], %b::text[], %b::text[], %b::text[],
        %b::text[], %b::text[], %b::bytea[], %b::bytea[], %b::text[]
    ) WITH ORDINALITY AS u(k, et, t, r, jns, jn, p, pl, raw, d, fp, ord)
    ORDER BY ord
) AS numbered
ORDER BY d
ON CONFLICT (digest) DO NOTHING
RETURNING id, digest
"""
# What jsonb cannot hold exactly: U+0000 (refused) and numbers written with an exponent
# (jsonb's numeric prints 1e+308 as 1 followed by 308 zeros, which reads back as an
# integer).
_NUL_ESCAPE = b"\\u0000"


# ``has_exponent_number``'s first look: digits and signs deleted, "E" read as "e", and what
# may stand before or after a number's parts in compact JSON (":", ",", "[", "]", "}", and the
# decimal point) read as ",". A number with an exponent then reads ",e,"; see there.
_EXPONENT_SHAPE = bytes.maketrans(b"E:[]}.", b"e,,,,,")
_DIGITS_AND_SIGNS = b"0123456789+-"


def has_exponent_number(canonical: bytes) -> bool:
    """Whether the compact JSON ``canonical`` holds a number written with an exponent.

    First a look that cannot miss one. In compact JSON a number starts after ":", "," or
    "[" (or at the start), ends before ",", "]" or "}" (or at the end), and is made of
    digits, signs, a decimal point and its exponent's "e" or "E". With the digits and signs
    deleted and those six bytes read as ",", a number written with an exponent leaves
    ",e," (",,e," with a decimal point): without that anywhere there is none. One
    translate and one search in C; the whole check was 11% of a 500-event batch's GIL-held
    time in the shipped server (ADR 0107). A string that happens to read so (``"i.e.,"``,
    ``"x:1e5,"``) only costs the exact check below.

    Outside its strings, JSON has only punctuation, numbers, true, false and null, so an
    "e" there is a number's exponent. The strings are cut out at their quotes, once the
    escaped backslashes and quotes inside them are gone. Every step is a C-level bytes
    method. The regular expression this replaces scanned every byte in Python's regex
    engine: 238 k of a single-event request's 1.85 M instructions, of which this takes
    back 138 k (``bench.ingest_instructions``, docs/benchmarks.md).
    """
    if b",e," not in (b"," + canonical + b",").translate(_EXPONENT_SHAPE, _DIGITS_AND_SIGNS):
        return False
    if b"\\" in canonical:
        canonical = canonical.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(canonical.split(b'"')[::2])
    outside = outside.replace(b"true", b"").replace(b"false", b"")
    return b"e" in outside or b"E" in outside


@dataclass(frozen=True)
class StoredEvent:
    id: int
    created: bool  # False: the same event was already stored; ``id`` is the first copy's


@dataclass(frozen=True)
class SerialisedEvent:
    """An event in the form it is stored: canonical JSON, its digest and its size."""

    record: EventRecord
    payload_text: str
    payload_raw: bytes | None
    digest: bytes
    size: int  # bytes of canonical JSON (the per-event limit applies to this)


def canonical_json(payload: object) -> bytes:
    """Compact JSON with sorted keys: what is stored, and what the digest is taken over."""
    try:
        return orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        # Integers beyond 64 bits (valid JSON, kept exact by the parser): the stdlib writes them.
        return json.dumps(
            payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()


def serialise(record: EventRecord) -> SerialisedEvent:
    canonical = canonical_json(record.payload)
    size = len(canonical)
    digest = hashlib.sha256(record.kind.encode() + b"\n" + canonical).digest()
    raw = None
    if _NUL_ESCAPE in canonical or has_exponent_number(canonical):
        # Keep the exact JSON aside, and a searchable copy in jsonb (U+0000 → U+FFFD).
        raw = canonical
        canonical = canonical.replace(_NUL_ESCAPE, b"\\ufffd")
    return SerialisedEvent(record, canonical.decode(), raw, digest, size)


def oversized(event: SerialisedEvent) -> bool:
    return event.size > settings.LINEAGE["MAX_EVENT_BYTES"]


def check_sizes(rows: Sequence[SerialisedEvent]) -> None:
    """The per-event limit, on every path that stores events (each endpoint, backfill): a
    60 MB event gzipped to 60 KB passed the request limits, and every read of it was slow."""
    too_big = [index for index, row in enumerate(rows) if oversized(row)]
    if too_big:
        limit = settings.LINEAGE["MAX_EVENT_BYTES"]
        raise Problem(
            status=413,
            slug="payload-too-large",
            title="Payload too large",
            detail=f"An event is larger than the limit of {limit} bytes.",
            errors=[
                FieldError(f"/{index}" if len(rows) > 1 else "/", f"larger than {limit} bytes")
                for index in too_big[:20]
            ],
        )


def _server_binding_cursor() -> Any:
    """A cursor that binds parameters on the server (``core.prepared``), not prepared: the
    single-event INSERT is prepared on a kept connection unless
    ``LINEAGE["PREPARE_INGEST_INSERT"]`` is off (ADRs 0112, 0131), nothing else is."""
    return prepared.server_binding_cursor()


def _text(value: str | None) -> str | None:
    # PostgreSQL text refuses U+0000; the exact value is kept in payload_raw.
    return value.replace("\x00", "\ufffd") if value and "\x00" in value else value


def _values(row: SerialisedEvent) -> tuple[str | bytes | datetime | None, ...]:
    record = row.record
    return (
        record.kind,
        record.event_type,
        record.event_time,
        _text(record.run_id),
        _text(record.job_namespace),
        _text(record.job_name),
        _text(record.producer),
        row.payload_text,
        row.payload_raw,
        row.digest,
        _problems_json(record),
    )


def _problems_json(record: EventRecord) -> str | None:
    if not record.warnings:
        return None
    problems = [problem.as_dict() for problem in record.warnings]
    # The paths quote the producer's facet keys: jsonb refuses U+0000 there too.
    return orjson.dumps(problems).decode().replace("\\u0000", "\\ufffd")


def record_events(events: Sequence[EventRecord | SerialisedEvent]) -> list[StoredEvent]:
    """Store events exactly once each (by digest) and enqueue the new ones for derivation.

    Returns one ``StoredEvent`` per input, in input order; repeats (in this call or from
    earlier ones) get the id of the copy already stored and ``created=False``. Events
    already serialised (to check their size) are not serialised again.
    """
    if not events:
        return []
    rows = _checked(events)
    # No explicit transaction: the INSERT is one statement, atomic on its own, and in
    # autocommit mode it commits at once (one round trip instead of BEGIN/INSERT/COMMIT).
    # Called inside a caller's transaction, it simply joins it.
    if len(rows) == 1 and settings.LINEAGE["PREPARE_INGEST_INSERT"]:
        answer = prepared.kept_cursor_rows(_INSERT_ONE, _values(rows[0]))  # ADR 0131
    else:
        answer = _inserted(rows)
    created_ids = {bytes(digest): event_id for event_id, digest in answer}
    return _stored(rows, created_ids)


def _inserted(rows: Sequence[SerialisedEvent]) -> list[Any]:
    """The rows ``_INSERT_ONE``/``_INSERT_MANY`` answer for ``rows``."""
    with _server_binding_cursor() as cursor:
        cursor.execute(_INSERT_ONE if len(rows) == 1 else _INSERT_MANY, _params(rows))
        return list(cursor.fetchall())


@dataclass
class EventsInFlight:
    """Events whose INSERT has been sent and not yet answered (``send_events``): the
    server stores them while the caller does other work. ``finish_events`` collects."""

    rows: list[SerialisedEvent]
    pipeline_mode: Any  # the connection's ``pipeline()`` context, entered
    pipeline: Any
    cursor: Any

    def answered(self) -> bool:
        """Whether the server has answered the INSERT (never waits)."""
        pgconn = self.pipeline.pgconn
        try:
            pgconn.consume_input()
        except psycopg.Error:
            return True  # the connection broke: ``finish_events`` raises it
        return not pgconn.is_busy()


def send_events(events: Sequence[EventRecord | SerialisedEvent]) -> EventsInFlight:
    """Send the INSERT of ``events`` and return without waiting for it: ``record_events``
    in two halves, for a caller that prepares its next batch meanwhile (the Kafka consumer).

    The connection is put in pipeline mode (libpq's): the statement goes out at once, and
    commits (autocommit: an implicit transaction ended by the pipeline's sync) only when
    ``finish_events`` syncs. Until then the connection belongs to the batch in flight.
    A writer *thread* cannot overlap the two: under the GIL it waited for the preparing
    thread for up to a whole batch's preparation before it could send (measured in
    bench/storage_path.py, ADR 0072).
    """
    rows = _checked(events)
    database = connections[DEFAULT_DB_ALIAS]
    if database.in_atomic_block:
        raise RuntimeError("send_events commits on its own; it cannot join a transaction")
    database.ensure_connection()
    try:
        with database.wrap_database_errors:
            pipeline_mode = database.connection.pipeline()
            pipeline = pipeline_mode.__enter__()
            cursor = _server_binding_cursor()
            cursor.execute(_INSERT_MANY, _columns(rows))
            # Ask the server to send the answer as soon as it has it (not at the sync), so
            # that ``answered`` can see it.
            pipeline.pgconn.send_flush_request()
            pipeline.pgconn.flush()
    except BaseException:
        database.close()  # a half-sent pipeline cannot be used again
        raise
    return EventsInFlight(rows, pipeline_mode, pipeline, cursor)


def finish_events(in_flight: EventsInFlight) -> list[StoredEvent]:
    """Wait for the INSERT ``send_events`` sent, commit it, and answer as ``record_events``
    does. Raises a ``DatabaseError`` when the database did (the connection is closed then,
    and nothing of the batch may be taken as stored)."""
    database = connections[DEFAULT_DB_ALIAS]
    try:
        with database.wrap_database_errors:
            in_flight.pipeline.sync()
            answer = in_flight.cursor.fetchall()
            in_flight.pipeline_mode.__exit__(None, None, None)
    except BaseException:
        database.close()
        raise
    in_flight.cursor.close()
    return _stored(in_flight.rows, {bytes(digest): event_id for event_id, digest in answer})


def _checked(events: Sequence[EventRecord | SerialisedEvent]) -> list[SerialisedEvent]:
    rows = [event if isinstance(event, SerialisedEvent) else serialise(event) for event in events]
    check_sizes(rows)
    return rows


def _params(rows: Sequence[SerialisedEvent]) -> Sequence[Any]:
    """The parameters of ``_INSERT_ONE`` for one row, else of ``_INSERT_MANY``."""
    return _values(rows[0]) if len(rows) == 1 else _columns(rows)


def _columns(rows: Sequence[SerialisedEvent]) -> list[list[Any]]:
    """The rows' values as the parallel arrays ``_INSERT_MANY`` takes."""
    return [list(column) for column in zip(*(_values(row) for row in rows), strict=True)]


# How many times a repeat whose first copy was removed meanwhile is stored again (``_stored``).
_REINSERT_ATTEMPTS = 3


def _ids_of(digests: list[bytes]) -> dict[bytes, int]:
    """The ids of the stored events of ``digests`` (those still stored)."""
    with _server_binding_cursor() as cursor:
        cursor.execute(
            "SELECT digest, id FROM ingest_event WHERE digest = ANY(%s::bytea[])", [digests]
        )
        return {bytes(digest): event_id for digest, event_id in cursor.fetchall()}


def _stored(rows: Sequence[SerialisedEvent], created_ids: dict[bytes, int]) -> list[StoredEvent]:
    """One answer per row, once its INSERT committed (``created_ids``: digest → id of the
    rows it inserted); repeats are looked up, the new events enqueued for derivation."""
    existing_ids: dict[bytes, int] = {}
    missing = {row.digest for row in rows if row.digest not in created_ids}
    for _ in range(_REINSERT_ATTEMPTS):
        if not missing:
            break
        existing_ids.update(_ids_of(list(missing)))
        # A copy the INSERT found and that is gone now: removed by retention in between
        # (catalog/services/retention.py). Stored again, as if it had never been sent;
        # without this its lookup failed (a 500).
        not_found = missing - existing_ids.keys()
        gone = {row.digest: row for row in rows if row.digest in not_found}
        if gone:
            again = _inserted(list(gone.values()))
            created_ids = {**created_ids, **{bytes(digest): id_ for id_, digest in again}}
        missing = gone.keys() - created_ids.keys()
    enqueue_derivation_on_commit(sorted(created_ids.values()))

    results = []
    first_use: set[bytes] = set()
    for row in rows:
        if row.digest in created_ids and row.digest not in first_use:
            first_use.add(row.digest)
            results.append(StoredEvent(created_ids[row.digest], True))
        else:
            event_id = created_ids.get(row.digest) or existing_ids[row.digest]
            results.append(StoredEvent(event_id, False))
    return results


# --- tokens ---------------------------------------------------------------------------------


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_token(name: str, scope: str) -> tuple[ApiToken, str]:
    """Create a token; returns it with its secret, which is not stored and cannot be shown again."""
    if scope not in TokenScope.values:
        raise ValueError(f"scope must be one of {', '.join(TokenScope.values)}")
    secret = f"lc_{scope}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        name=name, scope=scope, prefix=secret[: len(scope) + 8], key_hash=hash_token(secret)
    )
    return token, secret


def revoke_token(token_id: int, when: datetime | None = None) -> bool:
    """Revoke a token; False when it does not exist or was already revoked."""
    updated = ApiToken.objects.filter(id=token_id, revoked_at__isnull=True).update(
        revoked_at=when or timezone.now()
    )
    return updated == 1
