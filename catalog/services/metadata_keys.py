"""Redact again the ``additionalValues`` of metadata records derived before their keys were
redacted (ADR 0179) or their values were (ADR 0056), without a rederive (ADR 0187).

Derivation stores a record's additionalValues through ``core.redaction.redact``, and
``/api/v1/metadata?<key>=<value>`` matches what is stored: a row derived before held its
keys (and, earlier still, its values) as sent, so a filter on a guessed secret key found
it (an oracle), and the secret sat in a derived table. ``redact`` of a stored document is
what derivation stores for its event today: the values beside a key were already judged
by the key as sent, keys that redact alike are numbered from the object as stored (the
keys as sent), and redacting a redacted document changes nothing (ADR 0179), so the walk
is idempotent and equal to a rederive of the row.

A store may hold millions of records while the previous release serves (docs/deploy.md):
the walk goes by id in spans of ``SPAN`` ids. A span is read without locks (most rows
change nothing, and a ``FOR UPDATE`` would write every row it reads); each changed row is
written only if it still holds what was read (compare and set), so a row a rederive or a
purge replaced meanwhile is left to the newer writer. ``updated`` counts the rows written;
a run stopped half way resumes from any id (``after``). Used by migration 0041 (run by
``migrate``) and ``manage.py redact_metadata``.

Documents are read and written by orjson, as derivation reads events and writes these
rows, so a row written again holds what a rederive would write. A document orjson cannot
read (a number past a double's range, which jsonb keeps and derivation never writes) is
left as it is and counted in ``unreadable``, not guessed at: one odd row must not stop an
upgrade, and the operator is told (``manage.py redact_metadata`` prints the count).
"""

from collections.abc import Callable
from dataclasses import dataclass

import orjson
from django.db import connections, transaction

from core.redaction import redact

SPAN = 2_000

# jsonb as text: orjson parses it several times faster than the driver's json.loads.
_READ = """
SELECT id, additional_values::text FROM catalog_metadata_record
WHERE id > %(low)s AND id <= %(high)s ORDER BY id
"""
# Only where the row still holds the document read: jsonb equality, not the text.
_WRITE = """
UPDATE catalog_metadata_record r SET additional_values = v.new::jsonb
FROM unnest(%(ids)s::bigint[], %(old)s::text[], %(new)s::text[]) AS v(id, old, new)
WHERE r.id = v.id AND r.additional_values = v.old::jsonb
"""


@dataclass
class Redacted:
    scanned_to: int = 0  # every id up to this one was looked at
    updated: int = 0
    unreadable: int = 0
    spans: int = 0


def redacted_document(stored: str) -> str | None:
    """The text of what derivation stores today for the additionalValues ``stored`` (jsonb
    as text), or None when it is that already. Raises ``orjson.JSONDecodeError`` when
    orjson cannot read it."""
    document = orjson.loads(stored)
    shown = redact(document)
    return None if shown == document else orjson.dumps(shown).decode()


def redact_stored(
    span: int = SPAN,
    after: int = 0,
    progress: Callable[[Redacted], None] | None = None,
    using: str = "default",
) -> Redacted:
    """Redact the additionalValues of metadata records with an id past ``after`` where
    redaction changes them, a span of ids per transaction, up to the largest id when it
    started (records derived since were stored redacted by derivation)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM catalog_metadata_record")
        top = cursor.fetchone()[0]
    done = Redacted(scanned_to=after)
    while done.scanned_to < top:
        high = min(done.scanned_to + span, top)
        with transaction.atomic(using=using), connection.cursor() as cursor:
            cursor.execute(_READ, {"low": done.scanned_to, "high": high})
            changed: list[tuple[int, str, str]] = []  # (id, as read, redacted)
            for record_id, stored in cursor.fetchall():
                try:
                    redacted = redacted_document(stored)
                except orjson.JSONDecodeError:
                    done.unreadable += 1
                    continue
                if redacted is not None:
                    changed.append((record_id, stored, redacted))
            if changed:
                ids, read, written = (list(column) for column in zip(*changed, strict=True))
                cursor.execute(_WRITE, {"ids": ids, "old": read, "new": written})
                done.updated += cursor.rowcount
        done.scanned_to, done.spans = high, done.spans + 1
        if progress is not None:
            progress(done)
    return done
