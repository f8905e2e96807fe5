"""catalog/notify/delivery.py: ``replay`` locks its rows ``order_by("id")``, "one lock order
for two replays of overlapping selections" (ADR 0200 left it untested: without the order a
deadlock depends on the plan's row order; ADR 0203 holds it).

Two replays of overlapping selections run on two connections, one whose planner may only
use an index, one that may only scan the heap (the planner itself takes the heap for a
large selection and the primary key for a few ids). The rows are inserted in descending id
order in one round and ascending in the next, all at one ``created_at`` (a delivery's is
its creation's: rows made together may share it). Without ``order_by("id")`` the statement
would walk the rows unordered (``order_by()``) or by the model's default ordering, newest
first; the test checks first that, in each round, one of those two walks meets the rows in
opposite orders on the two connections, the other connection from the other end.

The test's own transaction holds the row in the middle of both selections until both
replays wait (a barrier made of a PostgreSQL lock): walking from opposite ends, each has
locked its side of that row when it ends, and without one order they deadlock every time.
Neither may fail (a deadlock is PostgreSQL ending one of them), each replays its whole
selection and publishes exactly it.
"""

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery, outbox

ROWS = 64
ROUNDS = 10
# The planner settings that make a connection walk the rows by an index (in its order, no
# sort) or by the heap (the order the rows were inserted in, then sorted).
BY_INDEX = ("enable_seqscan", "enable_bitmapscan", "enable_sort")
BY_HEAP = ("enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan")
# What the replay's statement would be without ``order_by("id")``: no order, or the model's
# default ordering, newest first (every row of a round ties). The index walks the first up
# the primary key and the second down the index (created_at, id); the heap walks both as
# inserted (a sort keeps ties as it met them).
WALKS = {"unordered": "", "newest first": "ORDER BY created_at DESC"}
_INSERT = """
INSERT INTO catalog_webhook_delivery (
    id, subscription_id, change_key, kind, payload, status, attempts, next_attempt_at,
    last_error, response_excerpt, created_at
)
SELECT d, %(subscription)s, sha256(d::text::bytea), 'ping', '{}'::jsonb, %(status)s, 3,
       %(at)s, '', '', %(at)s
FROM unnest(%(ids)s::uuid[]) WITH ORDINALITY AS t(d, n) ORDER BY n
"""
# The replay's statement, by its start, waiting for a row lock.
_WAITING = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'
  AND query LIKE 'SELECT "catalog_webhook_delivery"."id" AS "id" FROM%%'
"""


def _walk_with(off: tuple[str, ...]) -> None:
    with connection.cursor() as cursor:
        for name in off:
            cursor.execute(f"SET {name} = off")


def _walk(ids: list[str], off: tuple[str, ...], order: str) -> list[str]:
    """The rows of ``ids`` in the order a connection walking with ``off`` meets them."""
    with transaction.atomic(), connection.cursor() as cursor:
        for name in off:
            cursor.execute(f"SET LOCAL {name} = off")
        cursor.execute(
            f"SELECT id::text FROM catalog_webhook_delivery WHERE id = ANY(%s::uuid[]) {order}",
            [ids],
        )
        return [row[0] for row in cursor.fetchall()]


def _fresh_rows(subscription: WebhookSubscription, descending: bool) -> list[str]:
    """``ROWS`` failed deliveries inserted in descending or ascending id order; their ids,
    ascending."""
    WebhookDelivery.objects.all().delete()
    ids = sorted(str(uuid.uuid4()) for _ in range(ROWS))
    with connection.cursor() as cursor:
        cursor.execute(
            _INSERT,
            {
                "subscription": subscription.pk,
                "status": DeliveryStatus.FAILED,
                "at": timezone.now() - timedelta(hours=1),
                "ids": ids[::-1] if descending else ids,
            },
        )
    return ids


def _both_waiting() -> bool:
    with connection.cursor() as cursor:
        # Inside the test's transaction the activity view would stay the first read's.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(_WAITING)
        return int(cursor.fetchone()[0]) == 2


def _until(condition: Any, what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _replay(answers: dict[str, Any], name: str, ids: list[str], off: tuple[str, ...]) -> None:
    """``delivery.replay(ids)`` on a connection of its own walking with ``off``; its answer,
    or what it raised, in ``answers[name]``."""
    try:
        _walk_with(off)
        answers[name] = delivery.replay(ids)
    except BaseException as error:  # said by the test's assertion
        answers[name] = error
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_two_replays_of_overlapping_selections_walked_from_opposite_ends_never_deadlock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    published: list[list[str]] = []
    monkeypatch.setattr(outbox, "publish", lambda ids, countdown=None: published.append(ids))
    subscription = WebhookSubscription.objects.create(name="replays", url="http://127.0.0.1:9/")
    opposite = dict.fromkeys(WALKS, 0)
    for round_number in range(ROUNDS):
        descending = round_number % 2 == 0
        ids = _fresh_rows(subscription, descending)
        for statement, order in WALKS.items():
            walks = (_walk(ids, BY_INDEX, order), _walk(ids, BY_HEAP, order))
            assert walks[1] in (ids, ids[::-1])  # the heap's order (or the ties kept in it)
            opposite[statement] += walks[0] == walks[1][::-1]
        low, high = ids[: ROWS * 3 // 4], ids[ROWS // 4 :]  # the middle half in both
        answers: dict[str, Any] = {}
        published.clear()

        threads = [
            threading.Thread(target=_replay, args=(answers, "by index", low, BY_INDEX)),
            threading.Thread(target=_replay, args=(answers, "by heap", high, BY_HEAP)),
        ]
        with transaction.atomic(), connection.cursor() as cursor:
            # A row in the middle of both selections: walking from opposite ends, each
            # replay locks its side of it and waits there; walking one way, the second
            # waits for the first at the first row they share.
            cursor.execute(
                "SELECT 1 FROM catalog_webhook_delivery WHERE id = %s FOR UPDATE",
                [ids[ROWS // 2]],
            )
            for thread in threads:
                thread.start()
            _until(_both_waiting, f"the replays never both waited (round {round_number})")
        for thread in threads:
            thread.join(60)
        assert answers == {"by index": len(low), "by heap": len(high)}, (round_number, answers)
        assert sorted(map(sorted, published)) == sorted([low, high])
        rows = WebhookDelivery.objects.values_list("status", "attempts", "claim").distinct()
        assert list(rows) == [(DeliveryStatus.PENDING, 0, None)]
    # Each walk met the rows from opposite ends on the two connections in half the rounds
    # (else the rounds prove nothing of it): the unordered one in the descending rounds,
    # the newest-first one in the ascending ones.
    assert opposite == dict.fromkeys(WALKS, ROUNDS // 2)
