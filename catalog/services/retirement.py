"""Retire and restore datasets, jobs and namespaces (ADR 0078): steward input, kept by a
rederive, undone by a steward or by the next event that names the object. A dataset's retirement
and restore are change records too (ADR 0088), written in the same transaction.

Each function owns its transaction and takes the retirement lock exclusively
(``RETIREMENT_LOCK``); a derivation batch holds it shared for its whole transaction, and
ends by reviving what its events name (catalog.services.derivation.revival). So a
retirement's ``retired_at`` is read after every batch in flight has committed, and a batch
that starts later sees the retirement: an event received after ``retired_at`` revives, one
received before does not, whichever commits first. A namespace is retired and restored in
one statement per table, whatever its size.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from catalog.models import RETIREMENT_LOCK, Dataset, Job, RetiredKind, Retirement
from catalog.names import naming
from catalog.services.audit import log_curation
from catalog.services.derivation.retirement_changes import record_retirements

_LOCK = "SELECT pg_advisory_xact_lock(%s)"

# One row per dataset and job of the namespace, each part of the namespace's row; what is
# retired already keeps its own retirement (and is restored with its own). A dataset's
# namespace is stored normalised, a job's as sent (naming.job_name): ``spellings`` holds
# each spelling the table may store the namespace under.
_RETIRE_MEMBERS = """
INSERT INTO catalog_retirement
    (kind, object_id, namespace, part_of_id, retired_at, retired_by, reason, restored_by)
SELECT %(kind)s, t.id, t.namespace, %(part_of)s, %(at)s, %(by)s, %(reason)s, ''
FROM {table} t
WHERE md5(t.namespace) = ANY(%(digests)s) AND t.namespace = ANY(%(spellings)s)
ON CONFLICT (kind, object_id) WHERE restored_at IS NULL AND object_id IS NOT NULL DO NOTHING
"""

# The namespace's active retirements and every row they wrote that is still active.
_RESTORE_NAMESPACE = """
UPDATE catalog_retirement r SET restored_at = clock_timestamp(), restored_by = %(by)s
WHERE r.restored_at IS NULL AND (r.id = ANY(%(ids)s) OR r.part_of_id = ANY(%(ids)s))
RETURNING r.id
"""


@dataclass(frozen=True)
class Actor:
    """Who retires or restores: a user (a session, the admin, a command) or a token."""

    name: str
    user: Any = None  # a user, for the admin log; None for a token

    @classmethod
    def of(cls, user: Any) -> "Actor":
        """The actor of a request's user: a session's user, or an API token."""
        if getattr(user, "pk", None) is not None:
            return cls(user.get_username(), user)
        return cls(str(user))


@dataclass(frozen=True)
class NamespaceCount:
    datasets: int = 0
    jobs: int = 0


def _kind(obj: Dataset | Job) -> RetiredKind:
    return RetiredKind.DATASET if isinstance(obj, Dataset) else RetiredKind.JOB


def _audit(actor: Actor, obj: Any, message: str, **details: Any) -> None:
    # Django's admin log needs a user; a token's act is in the retirement row alone.
    if actor.user is not None:
        log_curation(actor.user, obj, message, **details)


def _lock_and_now() -> Any:
    """Take the retirement lock, then read the clock (after every batch that held it)."""
    with connection.cursor() as cursor:
        cursor.execute(_LOCK, [RETIREMENT_LOCK])
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


def active_retirement(obj: Dataset | Job) -> Retirement | None:
    return Retirement.objects.active().filter(kind=_kind(obj), object_id=obj.pk).first()


def retire(obj: Dataset | Job, actor: Actor, reason: str = "") -> Retirement | None:
    """Retire a dataset or a job; None when it is retired already (nothing changes)."""
    with transaction.atomic():
        at = _lock_and_now()
        if active_retirement(obj) is not None:  # under the lock: nobody else retires now
            return None
        retirement = Retirement.objects.create(
            kind=_kind(obj),
            object_id=obj.pk,
            namespace=obj.namespace,
            retired_at=at,
            retired_by=actor.name,
            reason=reason,
        )
        record_retirements([retirement.pk])  # the change record (ADR 0088)
        _audit(actor, obj, "retired", reason=reason)
    return retirement


def restore(obj: Dataset | Job, actor: Actor) -> bool:
    """Restore a retired dataset or job; False when it was not retired."""
    with transaction.atomic():
        at = _lock_and_now()
        active = Retirement.objects.active().filter(kind=_kind(obj), object_id=obj.pk)
        ids = list(active.values_list("id", flat=True))  # one at most: the unique index
        restored = Retirement.objects.filter(id__in=ids).update(
            restored_at=at, restored_by=actor.name
        )
        record_retirements(ids)
        if restored:
            _audit(actor, obj, "restored")
    return bool(restored)


def namespace_retirement(namespace: str) -> Retirement | None:
    return (
        Retirement.objects.active()
        .filter(kind=RetiredKind.NAMESPACE, namespace=naming.normalise_namespace(namespace))
        .first()
    )


def _spellings(written: str, namespace: str, model: type[Dataset] | type[Job]) -> list[str]:
    """The namespaces ``model``'s rows of the namespace ``written`` are stored under: a
    dataset's normalised; a job's as sent (credentials removed), which the steward names
    (the admin passes the selected job's), or normalised, as a subscription's scope matches
    a job's namespace (catalog.notify.scope)."""
    if model is Dataset:
        return [namespace]
    return sorted({namespace, naming.job_name(written, "")[0]})


def retire_namespace(namespace: str, actor: Actor, reason: str = "") -> NamespaceCount | None:
    """Retire a namespace and every dataset and job in it (one INSERT per table); None when
    it is retired already. Its jobs are those stored under the namespace as written or
    normalised (a job keeps the namespace its producer sent, ``spark://h/`` or
    ``Spark://H``, where its datasets' is ``spark://h``)."""
    written, namespace = namespace, naming.normalise_namespace(namespace)
    with transaction.atomic():
        at = _lock_and_now()
        if namespace_retirement(namespace) is not None:
            return None
        row = Retirement.objects.create(
            kind=RetiredKind.NAMESPACE,
            namespace=namespace,
            retired_at=at,
            retired_by=actor.name,
            reason=reason,
        )
        counts = {}
        values = {"part_of": row.pk, "at": at, "by": actor.name, "reason": reason}
        with connection.cursor() as cursor:
            for kind, model in ((RetiredKind.DATASET, Dataset), (RetiredKind.JOB, Job)):
                spellings = _spellings(written, namespace, model)
                cursor.execute(
                    _RETIRE_MEMBERS.format(table=model._meta.db_table),
                    {
                        **values,
                        "kind": int(kind),
                        "spellings": spellings,
                        "digests": [hashlib.md5(text.encode()).hexdigest() for text in spellings],
                    },
                )
                counts[kind] = cursor.rowcount
        record_retirements(
            Retirement.objects.filter(part_of=row, kind=RetiredKind.DATASET).values_list(
                "id", flat=True
            )
        )
        count = NamespaceCount(counts[RetiredKind.DATASET], counts[RetiredKind.JOB])
        _audit(
            actor, row, "retired namespace", reason=reason, datasets=count.datasets, jobs=count.jobs
        )
    return count


def restore_namespace(namespace: str, actor: Actor) -> int | None:
    """Restore a namespace and what its retirements retired (also after an event revived
    the namespace itself); how many rows were restored, None when nothing was retired."""
    namespace = naming.normalise_namespace(namespace)
    with transaction.atomic():
        _lock_and_now()
        ids = list(
            Retirement.objects.filter(kind=RetiredKind.NAMESPACE, namespace=namespace)
            .order_by("-id")
            .values_list("id", flat=True)[:100]  # a namespace retired 100 times: the last
        )
        if not ids:
            return None
        with connection.cursor() as cursor:
            cursor.execute(_RESTORE_NAMESPACE, {"ids": ids, "by": actor.name})
            restored = cursor.rowcount
            record_retirements(row[0] for row in cursor.fetchall())
        if restored:
            row = Retirement.objects.get(pk=ids[0])
            _audit(actor, row, "restored namespace", rows=restored)
    return restored
