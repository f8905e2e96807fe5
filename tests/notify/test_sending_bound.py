"""Sending the request counts toward a try's bound, over HTTPS as over HTTP (ADR 0154).

A real receiver on 127.0.0.1 (HTTPS with a certificate the test makes, or plain HTTP) reads
a body larger than the sockets' buffers a few kilobytes at a time, each piece well inside the
per-read timeout: reading all of it would take ten times the answer limit. Each try must end
within the answer limit (and its lease) as a failed try, be recorded, and after the last
attempt the delivery is dead (docs/notifications.md, "Delivery").

Over TLS this rests on CPython's SSL write being one ``SSL_write`` with partial writes off,
bounded as a whole by the socket's timeout: were ``sendall`` given one piece at a time, each
with the timeout again, a receiver that keeps reading would hold the try as long as it
likes. The fast receiver is the control: the certificate, the pinned address and the server
name are right, so the slow case fails on its bound and not on the handshake."""

import time
from pathlib import Path
from typing import Any

import pytest

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.notify.conftest import FAST
from tests.notify.slow_receiver import self_signed, slow_receiver

pytestmark = pytest.mark.django_db

ATTEMPTS = int(FAST["MAX_ATTEMPTS"])
ANSWER_SECONDS = 0.5  # short bounds keep the test cheap: three tries in about 1.5 s
READ_TIMEOUT_SECONDS = 0.25
# What a loaded machine may add to a try: the claim and the record, the handshake.
SLACK = 1.0
# About the largest body a change can have: a column's name is as the producer sent it,
# and one event may be 8 MiB (LINEAGE_MAX_EVENT_BYTES). Twice the 4 MiB a loopback socket's
# send buffer grows to, so the sender must wait on the receiver.
BODY_BYTES = 8 * 1024 * 1024
# 16 KiB every 20 ms: 0.8 MB/s, so the whole body takes about ten s, and no wait for a
# piece comes near the read timeout.
CHUNK, INTERVAL = 16_384, 0.02


@pytest.fixture
def trusted_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    return cert, key


@pytest.fixture
def short_bounds(allow_loopback: None, settings: Any) -> None:
    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        "ANSWER_SECONDS": ANSWER_SECONDS,
        "READ_TIMEOUT_SECONDS": READ_TIMEOUT_SECONDS,
    }


def test_a_delivery_over_tls_goes_to_the_checked_address_with_the_certificate_checked(
    short_bounds: None, trusted_certificate: tuple[Path, Path]
) -> None:
    with slow_receiver(CHUNK, 0.0, tls=trusted_certificate) as receiver:
        subscription = WebhookSubscription.objects.create(name="tls", url=receiver.url)
        sent = delivery.test_send(subscription)
        assert delivery.deliver(str(sent.id)) == DeliveryStatus.DELIVERED
    assert receiver.answered == 1


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_a_receiver_reading_a_large_body_slowly_holds_each_try_at_most_its_bound(
    short_bounds: None, trusted_certificate: tuple[Path, Path], scheme: str
) -> None:
    tls = trusted_certificate if scheme == "https" else None
    with slow_receiver(CHUNK, INTERVAL, tls=tls) as receiver:
        subscription = WebhookSubscription.objects.create(name="slow reader", url=receiver.url)
        sent = delivery.test_send(subscription)
        WebhookDelivery.objects.filter(id=sent.id).update(
            payload={**sent.payload, "data": {"column": "c" * BODY_BYTES}}
        )
        statuses, took = [], []
        for _ in range(ATTEMPTS):
            started = time.monotonic()
            statuses.append(delivery.deliver(str(sent.id)))
            took.append(time.monotonic() - started)
        read, answered = receiver.read, receiver.answered
    # Each try ends within the answer limit (sending counts toward it), well inside its
    # lease: past the lease the sweep would send the same delivery again beside it.
    assert max(took) < ANSWER_SECONDS + SLACK < delivery.lease_seconds(), took
    assert read < BODY_BYTES and answered == 0  # the receiver never had the whole body
    assert statuses == [DeliveryStatus.FAILED] * (ATTEMPTS - 1) + [DeliveryStatus.DEAD]
    sent.refresh_from_db()
    assert sent.claim is None and sent.attempts == ATTEMPTS
    assert sent.last_status_code is None and "timed out" in sent.last_error, sent.last_error
