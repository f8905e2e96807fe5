"""Sending the outbox: claim a due delivery, POST it, record the answer (ADR 0086).

A try is claimed in a short transaction (``SELECT ... FOR UPDATE SKIP LOCKED``): the row
gets a fresh claim token, one more attempt, and a lease (its ``next_attempt_at`` moves to
when the try must be over), and commits. The POST runs outside any transaction. The
outcome is written only where the row still holds that token, so a worker whose lease ran
out (it hung, or was killed and its delivery swept) cannot record anything over the try
that replaced it, and a delivery is recorded delivered at most once. A delivery whose
worker died mid-try is due again when its lease ends; the sweep (every few seconds, from
the scheduler) sends it. Receivers may see an id more than once: at least once, by design.

A derive commit's deliveries go out together (``deliver_many``, one task per commit): each
in a thread of a bounded pool, at most ``PER_HOST`` of them to one receiver at once, so a
change that fans out to many subscriptions is not sent one POST after the other, and a
slow receiver holds only its own share of the pool (ADR 0086, its 2026-12-03 amendment).
"""

import hashlib
import logging
import random
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import orjson
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.models import DUE_STATUSES, DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import outbox, pool, sender, signing

logger = logging.getLogger(__name__)

SWEEP_BUDGET_SECONDS = 20.0  # one sweep's sending time; the next sweep goes on
SWEEP_BATCH = 100


@dataclass
class Claimed:
    delivery: WebhookDelivery
    token: uuid.UUID


def lease_seconds() -> float:
    """How long one try may take at most, with a margin: the name's lookup, the connection
    and the TLS handshake, each bounded by the connect limit, then the whole answer."""
    options = settings.WEBHOOKS
    return 3 * options["CONNECT_TIMEOUT_SECONDS"] + options["ANSWER_SECONDS"] + 5.0


def backoff_seconds(attempts: int) -> float:
    """The wait after the ``attempts``-th failed try: doubling, capped, half of it random
    (so receivers that failed together are not retried together)."""
    options = settings.WEBHOOKS
    delay = min(
        options["BACKOFF_MAX_SECONDS"], options["BACKOFF_SECONDS"] * 2 ** max(0, attempts - 1)
    )
    return delay / 2 + random.uniform(0, delay / 2)


def body(delivery: WebhookDelivery) -> bytes:
    """The bytes signed and sent: the stored payload, keys sorted (the same on every try)."""
    return orjson.dumps(delivery.payload, option=orjson.OPT_SORT_KEYS)


def _claim(due_before: datetime, delivery_id: str | None = None) -> Claimed | None:
    """Claim one delivery due at ``due_before`` (``delivery_id``, or the oldest due), if no
    other worker holds it: a fresh token, one more attempt, a lease; committed at once."""
    now = timezone.now()
    due = WebhookDelivery.objects.filter(
        status__in=DUE_STATUSES, next_attempt_at__lte=due_before, subscription__active=True
    )
    if delivery_id is not None:
        due = due.filter(id=delivery_id)
    with transaction.atomic():
        delivery = (
            due.select_for_update(skip_locked=True, of=("self",))
            .select_related("subscription")
            .order_by("next_attempt_at")
            .first()
        )
        if delivery is None:
            return None
        token = uuid.uuid4()
        delivery.claim = token
        delivery.attempts += 1
        delivery.last_attempt_at = now
        delivery.next_attempt_at = now + timedelta(seconds=lease_seconds())
        delivery.save(update_fields=["claim", "attempts", "last_attempt_at", "next_attempt_at"])
    return Claimed(delivery, token)


def deliver(delivery_id: str) -> str | None:
    """Try ``delivery_id`` if it is due; its status after, or None when it was not due
    (delivered, dead, not yet due, being tried by another worker, or its subscription is
    no longer active)."""
    claimed = _claim(timezone.now(), delivery_id)
    return None if claimed is None else _send(claimed)


def deliver_many(delivery_ids: list[str]) -> dict[str, str | None]:
    """Try each of ``delivery_ids`` (one derive commit's) if it is due, concurrently: at most
    ``POOL_SIZE`` at once, at most ``PER_HOST`` to one receiver host; each id's status after
    (None: not due). Each try is ``deliver``'s: claimed, leased and fenced on its own, so a
    second task for the same ids, or the sweep, sends none of them twice. A transient
    database error of one try is raised after the others finished (the task retries all:
    those done are no longer due)."""
    ids = list(dict.fromkeys(delivery_ids))
    if len(ids) <= 1:
        return {delivery_id: deliver(delivery_id) for delivery_id in ids}
    by_host: dict[str, list[str]] = {}
    for delivery_id, host in _hosts(ids).items():
        by_host.setdefault(host, []).append(delivery_id)
    options = settings.WEBHOOKS
    answers, errors = pool.run(by_host, deliver, options["POOL_SIZE"], options["PER_HOST"])
    if errors:
        raise errors[0]
    return {delivery_id: answers.get(delivery_id) for delivery_id in ids}


def _hosts(delivery_ids: list[str]) -> dict[str, str]:
    """Each delivery's receiver, as host:port of its subscription's URL (one query); a URL
    without a port has its scheme's default, so ``http://h/`` and ``http://h:80/`` are one
    receiver, bounded together."""
    rows = WebhookDelivery.objects.filter(id__in=delivery_ids).values_list(
        "id", "subscription__url"
    )
    answer = {}
    for delivery_id, url in rows:
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = None
        default = {"http": 80, "https": 443}.get(parts.scheme)
        answer[str(delivery_id)] = f"{(parts.hostname or '').lower()}:{port or default}"
    return answer


def _send(claimed: Claimed) -> str:
    delivery = claimed.delivery
    payload = body(delivery)
    headers = signing.headers(
        str(delivery.id), delivery.subscription.secret, int(time.time()), payload
    )
    answer = sender.post(delivery.subscription.url, payload, headers)
    return _record(claimed, answer)


def _record(claimed: Claimed, answer: sender.Answer) -> str:
    delivery = claimed.delivery
    now = timezone.now()
    fields: dict[str, object] = {
        "claim": None,
        "last_status_code": answer.status,
        "last_error": answer.error[:2000],
        "response_excerpt": answer.excerpt,
    }
    retry_in = None
    if answer.ok:
        fields.update(status=DeliveryStatus.DELIVERED, delivered_at=now, next_attempt_at=now)
    elif delivery.attempts >= settings.WEBHOOKS["MAX_ATTEMPTS"]:
        fields.update(status=DeliveryStatus.DEAD, next_attempt_at=now)
    else:
        retry_in = backoff_seconds(delivery.attempts)
        fields.update(
            status=DeliveryStatus.FAILED, next_attempt_at=now + timedelta(seconds=retry_in)
        )
    with transaction.atomic():
        updated = WebhookDelivery.objects.filter(
            id=delivery.id, claim=claimed.token, status__in=DUE_STATUSES
        ).update(**fields)
        if updated and retry_in is not None:
            transaction.on_commit(lambda: outbox.publish([str(delivery.id)], countdown=retry_in))
    status = str(fields["status"])
    logger.info(
        "webhook_delivery id=%s attempt=%d status=%s code=%s recorded=%s",
        delivery.id,
        delivery.attempts,
        status,
        answer.status,
        bool(updated),
    )
    return status if updated else "superseded"


def sweep(older_than_seconds: float | None = None, budget: float = SWEEP_BUDGET_SECONDS) -> int:
    """Try deliveries due for longer than ``older_than_seconds`` (their task lost: broker
    down, worker killed, lease run out), oldest first, one claim at a time, at most
    ``SWEEP_BATCH`` of them, none started after ``budget`` seconds (the last one started
    ends within its lease); how many were tried. Two sweeps at once claim different rows."""
    if older_than_seconds is None:
        older_than_seconds = settings.WEBHOOKS["SWEEP_AFTER_SECONDS"]
    deadline = time.monotonic() + budget
    tried = 0
    while tried < SWEEP_BATCH and time.monotonic() < deadline:
        due_before = timezone.now() - timedelta(seconds=older_than_seconds)
        claimed = _claim(due_before)
        if claimed is None:
            break
        _send(claimed)
        tried += 1
    return tried


def replay(delivery_ids: list[str]) -> int:
    """Send these deliveries again (a steward's replay): same id and body, attempts from
    zero; one being tried now is left to its try. How many were replayed.

    The rows are locked as they are read: a claim committing meanwhile is waited for and then
    seen (PostgreSQL checks the condition again on the row it waited for), and a claim that
    has not begun skips them. Read without the lock, a try claimed between the read and the
    update was reset under it: sent again beside it, and its own outcome dropped."""
    with transaction.atomic():
        replayed = list(
            WebhookDelivery.objects.select_for_update(of=("self",))
            .filter(id__in=delivery_ids)
            .exclude(claim__isnull=False, next_attempt_at__gt=timezone.now())
            .order_by("id")  # one lock order for two replays of overlapping selections
            .values_list("id", flat=True)
        )
        WebhookDelivery.objects.filter(id__in=replayed).update(
            status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=timezone.now(), claim=None
        )
        outbox.publish_on_commit([str(delivery_id) for delivery_id in replayed])
    return len(replayed)


def test_send(subscription: WebhookSubscription) -> WebhookDelivery:
    """A "ping" delivery to ``subscription``, sent like any other (and logged with them)."""
    now = timezone.now()
    with transaction.atomic():
        delivery = WebhookDelivery(
            subscription=subscription,
            change_key=hashlib.sha256(uuid.uuid4().bytes).digest(),
            kind="ping",
            status=DeliveryStatus.PENDING,
            next_attempt_at=now,
        )
        delivery.payload = outbox.message(
            delivery, {"message": "A test delivery from the Lineage Catalog."}, now
        )
        delivery.save()
        outbox.publish_on_commit([str(delivery.id)])
    return delivery
