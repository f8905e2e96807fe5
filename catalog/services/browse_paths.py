"""Fill ``Dataset.browse_path`` on rows derived before the catalog read the hierarchy
facet (ADR 0093), without a rederive: the facet was kept as sent, merged into the
dataset's facets, so the path is a projection of what the row already holds.

An operator's store may hold millions of datasets while the previous release keeps
serving (docs/deploy.md): the fill walks the table by id in spans of ``SPAN`` ids, each
span one short transaction (its rows that need a path locked ``FOR UPDATE`` in id order,
as derivation locks them, so a batch deriving the same row waits or is waited for and the
path written is the one of the facets under the lock). A row is picked by
``facet_versions`` (small, stored inline) naming ``hierarchy``, so the scan does not
de-TOAST the facets of the rows without one. Rows with a path are skipped: the fill is
idempotent, and resumable from any id (``after``). Used by migration 0032 (run by
``migrate``) and ``manage.py fill_browse_paths``.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections, transaction

from catalog.facets import hierarchy
from catalog.names.naming import producer_text

SPAN = 2_000

_PICK = """
SELECT id, facets -> 'hierarchy' FROM catalog_dataset
WHERE id > %(low)s AND id <= %(high)s AND browse_path = '' AND facet_versions ? 'hierarchy'
ORDER BY id FOR UPDATE
"""
_WRITE = """
UPDATE catalog_dataset d SET browse_path = v.path
FROM unnest(%(ids)s::bigint[], %(paths)s::text[]) AS v(id, path) WHERE d.id = v.id
"""


@dataclass
class Filled:
    scanned_to: int = 0  # every id up to this one was looked at
    filled: int = 0
    spans: int = 0


def path_of(facet: Any) -> str:
    """The browse path derivation stores for a dataset whose hierarchy facet is ``facet``
    (the same functions: ``hierarchy.browse_key``, redacted and cut, ADR 0056)."""
    if isinstance(facet, str):  # jsonb as text, when the driver does not load it
        facet = json.loads(facet)
    return producer_text(hierarchy.browse_key({hierarchy.NAME: facet}), hierarchy.KEY_LIMIT)


def fill(
    span: int = SPAN,
    after: int = 0,
    progress: Callable[[Filled], None] | None = None,
    using: str = "default",
) -> Filled:
    """Fill the empty browse paths of datasets with a hierarchy facet and an id past
    ``after``, a span of ids per transaction, up to the largest id when it started (rows
    derived since have theirs from derivation)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM catalog_dataset")
        top = cursor.fetchone()[0]
    done = Filled(scanned_to=after)
    while done.scanned_to < top:
        high = min(done.scanned_to + span, top)
        with transaction.atomic(using=using), connection.cursor() as cursor:
            cursor.execute(_PICK, {"low": done.scanned_to, "high": high})
            pairs = [(row[0], path_of(row[1])) for row in cursor.fetchall()]
            pairs = [(dataset_id, path) for dataset_id, path in pairs if path]
            if pairs:
                ids, paths = zip(*pairs, strict=True)
                cursor.execute(_WRITE, {"ids": list(ids), "paths": list(paths)})
        done.scanned_to, done.filled, done.spans = high, done.filled + len(pairs), done.spans + 1
        if progress is not None:
            progress(done)
    return done
