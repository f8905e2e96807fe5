"""Lifecycle change records (ADR 0088): a dataset retired, a dataset restored (ADR 0078).

A retirement is steward input that a rederive keeps (``Retirement``), so its changes are
read off its row, keyed by the row's id: retired (when, by whom, why) and, once restored,
restored (when, by whom, or the event received after the retirement that revived it).
Recorded in the transaction that retires or restores (catalog.services.retirement), that
revives (catalog.services.derivation.revival), and again at the end of a full rederive,
which empties the change table with the other derived tables.
"""

import hashlib
from collections.abc import Iterable

from catalog.models import ChangeKind, Dataset, DatasetChange, RetiredKind, Retirement
from catalog.services.derivation import change_log
from core.redaction import redact_text

_CHUNK = 5000


def _key(kind: ChangeKind, retirement_id: int) -> bytes:
    return hashlib.sha256(f"{kind}\x00{retirement_id}".encode()).digest()


def _rows(retirement: Retirement) -> list[DatasetChange]:
    retired = f"retired by {retirement.retired_by}"
    if retirement.reason:
        retired += f": {retirement.reason}"
    rows = [
        DatasetChange(
            kind=ChangeKind.DATASET_RETIRED,
            dataset_id=retirement.object_id,
            changed_at=retirement.retired_at,
            detail=redact_text(retired),
            before_hash=b"",
            after_hash=b"",
            key_hash=_key(ChangeKind.DATASET_RETIRED, retirement.pk),
        )
    ]
    if retirement.restored_at is not None:
        revived = retirement.revived_by_event_id
        restored = (
            f"revived by event {revived}"
            if revived is not None
            else f"restored by {retirement.restored_by}"
        )
        rows.append(
            DatasetChange(
                kind=ChangeKind.DATASET_RESTORED,
                dataset_id=retirement.object_id,
                changed_at=retirement.restored_at,
                event_id=revived,
                detail=redact_text(restored),
                before_hash=b"",
                after_hash=b"",
                key_hash=_key(ChangeKind.DATASET_RESTORED, retirement.pk),
            )
        )
    return rows


def record_retirements(retirement_ids: Iterable[int]) -> list[DatasetChange]:
    """Record the changes of these retirements (those of datasets that still exist; the
    others are ignored); the new change rows."""
    ids = sorted(set(retirement_ids))
    new: list[DatasetChange] = []
    for start in range(0, len(ids), _CHUNK):
        retirements = list(
            Retirement.objects.filter(
                id__in=ids[start : start + _CHUNK],
                kind=RetiredKind.DATASET,
                object_id__in=Dataset.objects.values("id"),
            ).order_by("id")
        )
        new += change_log.record([row for r in retirements for row in _rows(r)])
    return new


def record_all_retirements() -> None:
    """Every dataset retirement's changes, in chunks (after a full rederive)."""
    last = 0
    while True:
        ids = list(
            Retirement.objects.filter(kind=RetiredKind.DATASET, id__gt=last)
            .order_by("id")
            .values_list("id", flat=True)[:_CHUNK]
        )
        if not ids:
            return
        record_retirements(ids)
        last = ids[-1]
