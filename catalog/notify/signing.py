"""How a delivery is signed: HMAC-SHA256 over "<timestamp>.<body>" with the subscription's
secret, sent as ``Webhook-Signature: v1=<hex>`` beside ``Webhook-Id`` and
``Webhook-Timestamp`` (docs/notifications.md; the scheme GitHub and Stripe use)."""

import hashlib
import hmac

SCHEME = "v1"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"{SCHEME}={digest.hexdigest()}"


def headers(delivery_id: str, secret: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": "lineage-catalog-webhooks/1",
        "Webhook-Id": delivery_id,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": signature(secret, timestamp, body),
    }
