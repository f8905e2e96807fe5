"""The outbox: the one call derivation makes for notifications (ADR 0086).

``enqueue(changes)`` runs inside the transaction that wrote ``changes`` (any change rows,
new or not). It records their natural keys in the ledger (``NotifiedChange``); the keys it
had never seen are the new changes, and each gets a delivery for every active subscription
it matches, its payload built (and redacted) once, here. The deliveries commit or roll back
with the changes; one task for them is sent by name after commit (a lost one is found by the
sweep). A rederive, a batch derived twice or a task run twice brings no key that is new,
so nothing is enqueued twice; the deliveries' (subscription, change key) is unique besides.
"""

import copy
import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from celery import current_app
from django.db import connection, transaction
from django.utils import timezone

from catalog.lineage import breaking
from catalog.models import (
    BREAKING_KINDS,
    Dataset,
    DatasetAlias,
    DatasetChange,
    DeliveryStatus,
    Job,
    WebhookDelivery,
    WebhookSubscription,
)
from catalog.notify import scope
from core.redaction import redact

logger = logging.getLogger(__name__)

# One task per derive commit, with its deliveries' ids (catalog.tasks.deliver_webhooks).
DELIVER_TASK = "catalog.deliver_webhooks"
CHANGE_TYPE = "dataset.change"

_FIRST_SEEN = """
INSERT INTO catalog_notified_change (change_key, first_seen)
SELECT k, now() FROM unnest(%(keys)s::bytea[]) AS k ORDER BY k
ON CONFLICT (change_key) DO NOTHING
RETURNING change_key
"""


def change_key(alias_key: bytes, change: DatasetChange) -> bytes:
    """A change's natural key, stable across rederives: its alias's name key (alias ids are
    not kept by a rederive), then the unique constraint's hashes."""
    return hashlib.sha256(
        alias_key + bytes(change.before_hash) + bytes(change.after_hash) + bytes(change.key_hash)
    ).digest()


def enqueue(changes: Sequence[DatasetChange]) -> int:
    """Outbox rows for the changes of ``changes`` never seen before, one per matching active
    subscription; how many. Call inside the transaction that wrote the changes."""
    if not changes:
        return 0
    aliases = DatasetAlias.objects.only("id", "namespace", "name", "key_hash", "dataset_id")
    by_id = {alias.id: alias for alias in aliases.filter(id__in={c.alias_id for c in changes})}
    keyed: dict[bytes, DatasetChange] = {}
    for change in changes:
        alias = by_id.get(change.alias_id or 0)
        keyed.setdefault(change_key(bytes(alias.key_hash) if alias else b"", change), change)
    with connection.cursor() as cursor:
        cursor.execute(_FIRST_SEEN, {"keys": sorted(keyed)})
        new_keys = sorted(bytes(row[0]) for row in cursor.fetchall())
    if not new_keys:
        return 0
    subscriptions = list(WebhookSubscription.objects.filter(active=True))
    if not subscriptions:
        return 0
    # Copies with stand-in ids: breaking.breaks keys its answer by id, and rows written with
    # bulk_create(ignore_conflicts=True) have none.
    # The kinds without an alias (ADR 0088) name their dataset, upstream and job directly:
    # read in two queries, set on the copies, so building the messages queries nothing.
    picked = [keyed[key] for key in new_keys]
    datasets = Dataset.objects.only("id", "namespace", "name").in_bulk(
        {c.dataset_id for c in picked if c.dataset_id}
        | {c.source_id for c in picked if c.source_id}
    )
    jobs = Job.objects.only("id", "namespace", "name").in_bulk(
        {c.job_id for c in picked if c.job_id}
    )
    new: list[tuple[bytes, DatasetChange]] = []
    for number, key in enumerate(new_keys, start=1):
        change = copy.copy(keyed[key])
        change.pk = -number
        change.alias = by_id.get(change.alias_id or 0)  # type: ignore[assignment]
        change.dataset = datasets.get(change.dataset_id or 0)  # type: ignore[assignment]
        change.source = datasets.get(change.source_id or 0)  # type: ignore[assignment]
        change.job = jobs.get(change.job_id or 0)  # type: ignore[assignment]
        new.append((key, change))
    breaks = breaking.breaks([change for _, change in new if change.alias is not None])
    scopes = scope.resolve(subscriptions)
    now = timezone.now()
    deliveries = []
    for key, change in new:
        found = breaks.get(change.pk)
        for subscription in subscriptions:
            if not _wanted(subscription, change, found is not None, scopes):
                continue
            delivery = WebhookDelivery(
                subscription=subscription,
                change_key=key,
                kind=change.kind,
                status=DeliveryStatus.PENDING,
                next_attempt_at=now,
            )
            delivery.payload = redact(message(delivery, change_data(key, change, found), now))
            deliveries.append(delivery)
    WebhookDelivery.objects.bulk_create(deliveries, ignore_conflicts=True)
    publish_on_commit([str(delivery.id) for delivery in deliveries])
    return len(deliveries)


def _wanted(
    subscription: WebhookSubscription,
    change: DatasetChange,
    is_breaking: bool,
    scopes: dict[int, scope.Scope],
) -> bool:
    if subscription.kinds and change.kind not in subscription.kinds:
        return False
    if subscription.breaking_only and not (change.kind in BREAKING_KINDS and is_breaking):
        return False
    dataset_id, namespace, _ = subject(change)
    return scopes[subscription.pk].covers(namespace, dataset_id)


def subject(change: DatasetChange) -> tuple[int | None, str | None, str | None]:
    """What a change is about, as (dataset id, namespace, name): a schema change's alias
    (the name it was sent under), else the dataset it names, else its job (a failed run)."""
    if change.alias_id and change.alias is not None:
        return change.alias.dataset_id, change.alias.namespace, change.alias.name
    if change.dataset_id and change.dataset is not None:
        return change.dataset.pk, change.dataset.namespace, change.dataset.name
    if change.job_id and change.job is not None:
        return None, change.job.namespace, change.job.name
    return None, None, None


def message(delivery: WebhookDelivery, data: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The body every try of ``delivery`` sends (docs/notifications.md)."""
    return {
        "id": str(delivery.id),
        "type": CHANGE_TYPE if delivery.kind != "ping" else "ping",
        "created_at": now.isoformat(),
        "subscription": delivery.subscription.name,
        "data": data,
    }


def change_data(key: bytes, change: DatasetChange, found: breaking.Breaks | None) -> dict[str, Any]:
    """A change as /api/v1/changes shows it, keyed by its natural key (its row id is not
    stable: derivation re-creates an alias's change rows)."""
    dataset_id, namespace, name = subject(change)
    return {
        "change": key.hex(),
        "kind": change.kind,
        "dataset": f"dataset:{dataset_id}" if dataset_id else None,
        "namespace": namespace,
        "name": name,
        "job": f"job:{change.job_id}" if change.job_id else None,
        # An edge's upstream dataset (edge_added, edge_stopped), the run before (ADR 0088).
        "upstream": f"dataset:{change.source_id}" if change.source_id else None,
        "previous_run_id": change.previous_run_id,
        "detail": change.detail,
        "column": change.column,
        "old_type": change.old_type,
        "new_type": change.new_type,
        "changed_at": change.changed_at.isoformat(),
        "event_id": change.event_id,
        "run_id": change.run_id,
        "breaking": found is not None,
        "breaks": found.readers if found else [],
        "breaks_truncated": bool(found and found.left_out),
    }


def publish_on_commit(delivery_ids: list[str]) -> None:
    if delivery_ids:
        transaction.on_commit(lambda: publish(delivery_ids))


def publish(delivery_ids: list[str], countdown: float | None = None) -> None:
    """Send one delivery task for these ids (a commit's, or a retry's), by name; it goes to
    the ``webhooks`` queue (CELERY_TASK_ROUTES). The broker may be away: what is not sent
    here the sweep sends (the deliveries are committed)."""
    try:
        current_app.send_task(DELIVER_TASK, args=[delivery_ids], countdown=countdown)
    except Exception as error:  # never fail the derivation that committed them
        logger.warning(
            "webhook_publish_failed deliveries=%d error=%s", len(delivery_ids), type(error).__name__
        )
