"""Webhook subscriptions, their outbox of deliveries, and the ledger of changes seen (ADR 0086).

A steward's ``WebhookSubscription`` names what it wants (change kinds, a scope) and where
(a URL, signed with its own secret). When derivation records a change no one has seen
before (``NotifiedChange``, by natural key), every matching subscription gets a
``WebhookDelivery`` in the same transaction: the outbox, which the workers send with
retries. None of it is derived, so a rederive keeps all three: the ledger is what stops a
rederive (which re-creates every change row) from notifying anything twice.
"""

import secrets
import uuid

from django.db import models


def new_secret() -> str:
    """A subscription's signing secret: 32 random bytes, URL-safe text."""
    return "whsec_" + secrets.token_urlsafe(32)


class WebhookSubscription(models.Model):
    """Where to post which changes. Empty lists mean "any": no kinds, every kind; no
    namespaces, datasets or downstream roots, every dataset. A change matches when its kind
    matches and its dataset is in any of the scopes given."""

    kept_by_rederive = True  # steward input, like alias rules

    name = models.CharField(max_length=200, unique=True)
    url = models.URLField(max_length=2000, help_text="http(s) URL the deliveries are POSTed to.")
    secret = models.CharField(max_length=100, default=new_secret, editable=False)
    kinds = models.JSONField(default=list, blank=True)  # ChangeKind values
    breaking_only = models.BooleanField(
        default=False,
        help_text="Only removed or retyped columns that downstream column lineage reads.",
    )
    namespaces = models.JSONField(default=list, blank=True)  # ["postgres://db:5432", ...]
    datasets = models.JSONField(default=list, blank=True)  # [[namespace, name], ...]
    downstream_of = models.JSONField(default=list, blank=True)  # [[namespace, name], ...]
    downstream_depth = models.PositiveSmallIntegerField(
        default=5, help_text="How many hops below each downstream root count (1-20)."
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "catalog_webhook_subscription"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "pending"  # not tried yet (or replayed), or being tried now
    FAILED = "failed", "failed, will retry"
    DELIVERED = "delivered", "delivered"
    DEAD = "dead", "dead (no more tries)"


# Statuses a worker may still send.
DUE_STATUSES = (DeliveryStatus.PENDING, DeliveryStatus.FAILED)


class WebhookDelivery(models.Model):
    """One message to one subscription: its body is built once, at enqueue (redacted), and
    sent as it is on every try, under the same id, which receivers dedupe by."""

    kept_by_rederive = True  # the outbox and its log, not derived

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    subscription = models.ForeignKey(
        WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    # sha256 of what the message is about (a change's natural key, or a test send's id):
    # unique per subscription, so enqueueing twice writes one row.
    change_key = models.BinaryField(max_length=32, editable=False)
    kind = models.CharField(max_length=32)
    payload = models.JSONField()
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    # When it may be tried next; while a worker tries it, the end of that worker's lease.
    next_attempt_at = models.DateTimeField()
    # The token of the try in flight: only the worker holding it records the outcome.
    claim = models.UUIDField(null=True, editable=False)
    last_status_code = models.PositiveSmallIntegerField(null=True)
    last_error = models.TextField(blank=True, default="")
    response_excerpt = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_attempt_at = models.DateTimeField(null=True)
    delivered_at = models.DateTimeField(null=True)

    class Meta:
        db_table = "catalog_webhook_delivery"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "change_key"], name="catalog_webhook_delivery_uniq"
            ),
        ]
        indexes = [
            # The sweep's "due" scan touches only deliveries that may still be sent.
            models.Index(
                fields=["next_attempt_at"],
                name="catalog_webhook_due_idx",
                condition=models.Q(status__in=["pending", "failed"]),
            ),
            # The delivery log, newest first, per subscription.
            models.Index(fields=["subscription", "-created_at"], name="catalog_webhook_log_idx"),
            # The admin's delivery log, newest first, whole or by status (a few dead among
            # many delivered) or kind: each a range of its index in the list's order, where
            # the page and its count read the log until they had found enough (ADR 0195).
            models.Index(fields=["created_at", "id"], name="catalog_webhook_time_idx"),
            # Only the deliveries not delivered (a few): a delivery is written once more, here,
            # while pending, and not when it is delivered; "delivered" is found at once along
            # the time index.
            models.Index(
                fields=["status", "created_at", "id"],
                name="catalog_webhook_status_idx",
                condition=~models.Q(status="delivered"),
            ),
            models.Index(fields=["kind", "created_at", "id"], name="catalog_webhook_kind_idx"),
        ]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return str(self.id)


class NotifiedChange(models.Model):
    """A change's natural key, the first time derivation recorded it: a change is new (and
    notified) only when its key is not here yet. Never emptied by a rederive."""

    kept_by_rederive = True

    change_key = models.BinaryField(max_length=32, editable=False, unique=True)
    first_seen = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "catalog_notified_change"

    def __str__(self) -> str:
        return bytes(self.change_key).hex()
