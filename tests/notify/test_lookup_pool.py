"""The webhook sender's lookup pool (catalog/notify/addresses.py, ADR 0154): at most
LOOKUP_THREADS names are looked up at once in a process. When names that do not answer hold
every thread, a try whose lookup waits behind them fails at its connect limit (never
later), is recorded as a failed try saying the lookup never started, and the pool takes
lookups again once those threads are free. Names that do not answer are a getaddrinfo that
blocks on an Event for one hostname (the real resolver for every other name); the receiver
is a real HTTP server and the deliveries real rows."""

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from catalog.models import DeliveryStatus, WebhookSubscription
from catalog.notify import addresses, delivery
from tests.notify.conftest import FAST
from tests.notify.receivers import receiver

pytestmark = pytest.mark.django_db

LIMIT = FAST["CONNECT_TIMEOUT_SECONDS"]


class StuckNames:
    """``stuck.example`` blocks its lookup until ``release``; counts lookups in it."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.inside = 0
        self.changed = threading.Condition()

    def wait_until(self, inside: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.inside == inside, timeout=10), self.inside


@pytest.fixture
def stuck(monkeypatch: pytest.MonkeyPatch, allow_loopback: None) -> Iterator[StuckNames]:
    names = StuckNames()
    real = socket.getaddrinfo

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> Any:
        if host != "stuck.example":
            return real(host, *args, **kwargs)
        with names.changed:
            names.inside += 1
            names.changed.notify_all()
        try:
            names.release.wait(10)  # bounded: a broken test must not hang the suite
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        finally:
            with names.changed:
                names.inside -= 1
                names.changed.notify_all()

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    # A pool of this test's own: a thread an earlier test left in a slow lookup would
    # otherwise count as one of the busy ones (monkeypatch puts the process's pool back).
    monkeypatch.setattr(addresses, "_lookups", None)
    yield names
    names.release.set()


def test_a_try_behind_a_full_lookup_pool_fails_at_its_limit_and_the_pool_recovers(
    stuck: StuckNames,
) -> None:
    refusals: list[str] = []

    def look_up_stuck() -> None:
        try:
            addresses.resolve("http://stuck.example/hook")
        except addresses.RefusedAddress as error:
            refusals.append(str(error))

    holders = [threading.Thread(target=look_up_stuck) for _ in range(addresses.LOOKUP_THREADS)]
    for holder in holders:
        holder.start()
    stuck.wait_until(addresses.LOOKUP_THREADS)  # every thread of the pool is held
    with receiver() as healthy:
        subscription = WebhookSubscription.objects.create(name="healthy", url=healthy.url)
        sent = delivery.test_send(subscription)
        started = time.monotonic()
        status = delivery.deliver(str(sent.id))
        took = time.monotonic() - started
        assert status == DeliveryStatus.FAILED
        assert LIMIT * 0.9 <= took < LIMIT + 1.0, took  # at its limit, not the resolver's
        sent.refresh_from_db()
        assert sent.attempts == 1 and sent.claim is None
        assert sent.last_error == (
            f"refused: 127.0.0.1 was not looked up within {LIMIT:g} s: all "
            f"{addresses.LOOKUP_THREADS} lookups were busy with names that do not answer"
        )
        assert healthy.received == []

        for holder in holders:
            holder.join(10)
        assert refusals == [f"stuck.example does not resolve within {LIMIT:g} s"] * len(holders)
        stuck.release.set()  # the resolver gives up on the stuck names: threads come back
        stuck.wait_until(0)
        assert delivery.deliver(str(sent.id)) == DeliveryStatus.DELIVERED
        assert len(healthy.received) == 1
        sent.refresh_from_db()
        assert sent.attempts == 2
