"""The raw event log and the API tokens.

``Event`` rows are the source of truth: written once at ingest, never changed afterwards
except for their derivation status, never deleted.
"""

import json

from django.contrib.postgres.indexes import BrinIndex, HashIndex
from django.db import models
from django.db.models.functions import Now

from ingest.derivation_status import DerivationStatus
from ingest.querysets import EventQuerySet, TokenQuerySet


class EventKind(models.TextChoices):
    RUN = "run", "RunEvent"
    DATASET = "dataset", "DatasetEvent"
    JOB = "job", "JobEvent"
    EDGE = "edge", "Lineage edge"
    METADATA = "metadata", "Metadata record"


# The kinds that are OpenLineage events as sent (the others are adapted edges and records).
OPENLINEAGE_KINDS = (EventKind.RUN, EventKind.DATASET, EventKind.JOB)


class Event(models.Model):
    """One accepted event, exactly as received."""

    received_at = models.DateTimeField(db_default=Now(), editable=False)
    kind = models.CharField(max_length=16, choices=EventKind.choices)
    event_type = models.CharField(max_length=16, null=True, blank=True)
    # Parsed from the payload (lenient: zone-less times are UTC, nanoseconds truncated);
    # edges and metadata records use their own timestamp or the receive time.
    event_time = models.DateTimeField(null=True)
    run_id = models.TextField(null=True, blank=True)
    job_namespace = models.TextField(null=True, blank=True)
    job_name = models.TextField(null=True, blank=True)
    producer = models.TextField(null=True, blank=True)
    schema_url = models.TextField(null=True, blank=True)
    # The event as received. Where jsonb cannot hold it exactly (U+0000 in a string, floats
    # with an exponent), this is a close copy (U+0000 → U+FFFD) and ``payload_raw`` holds the
    # exact JSON; ``received_payload`` returns whichever is exact.
    payload = models.JSONField()
    payload_raw = models.BinaryField(null=True, editable=False)
    # sha256 of kind + canonical JSON (sorted keys); the idempotency key of ingest.
    digest = models.BinaryField(max_length=32, editable=False)
    derivation_status = models.CharField(
        max_length=8, choices=DerivationStatus.choices, default=DerivationStatus.PENDING
    )
    derivation_error = models.TextField(null=True, blank=True)
    # What the event's facets (and other non-core fields) get wrong, recorded at ingest:
    # [{"path", "message", "facet", "skipped"}]; NULL when nothing is wrong (ADR 0004).
    facet_problems = models.JSONField(null=True, blank=True, editable=False)
    derived_at = models.DateTimeField(null=True, blank=True)

    objects = EventQuerySet.as_manager()

    class Meta:
        db_table = "ingest_event"
        ordering = ["-id"]
        constraints = [
            # Ingest idempotency: INSERT ... ON CONFLICT (digest) DO NOTHING.
            models.UniqueConstraint(fields=["digest"], name="ingest_event_digest_uniq"),
        ]
        indexes = [
            # The derivation sweep and the backlog gauge: pending events in id order.
            models.Index(
                fields=["id"],
                name="ingest_event_pending_idx",
                condition=models.Q(derivation_status=DerivationStatus.PENDING),
            ),
            # Admin and stats: failed derivations in id order.
            models.Index(
                fields=["id"],
                name="ingest_event_failed_idx",
                condition=models.Q(derivation_status=DerivationStatus.FAILED),
            ),
            # Admin filter "facet problems" and the metric: the few events that have any.
            models.Index(
                fields=["id"],
                name="ingest_event_facet_prob_idx",
                condition=models.Q(facet_problems__isnull=False),
            ),
            # Events list, export and rederive --since: ranges of eventTime.
            models.Index(fields=["event_time", "id"], name="ingest_event_time_idx"),
            # Ingest-rate dashboards and time-range scans on an append-only column: BRIN is
            # tiny and enough because received_at follows the insertion order.
            BrinIndex(fields=["received_at"], name="ingest_event_received_brin"),
            # Events of one run / one job (equality only; hash indexes take names of any size).
            HashIndex(fields=["run_id"], name="ingest_event_run_hash"),
            HashIndex(fields=["job_name"], name="ingest_event_job_hash"),
            # Events from one producer (admin search, API filter).
            HashIndex(fields=["producer"], name="ingest_event_producer_hash"),
        ]

    def __str__(self) -> str:
        label = self.event_type or self.kind
        if self.job_name:  # shown in the admin: an edge's pipeline may hold a token
            from ingest.redaction import redact_text  # here: the stubs' plugin loads models

            return redact_text(f"#{self.id} {label} {self.job_namespace}/{self.job_name}")
        return f"#{self.id} {label}"

    @property
    def received_payload(self) -> object:
        """The event exactly as received (``payload_raw`` when jsonb could not hold it)."""
        if self.payload_raw is not None:
            return json.loads(bytes(self.payload_raw))  # stdlib: keeps big integers exact
        return self.payload


class TokenScope(models.TextChoices):
    INGEST = "ingest", "Ingest (write events)"
    READ = "read", "Read (query the catalog)"


class ApiToken(models.Model):
    """A bearer token. Only a sha256 of the secret is stored; the secret is shown once."""

    name = models.CharField(max_length=200)
    scope = models.CharField(max_length=8, choices=TokenScope.choices)
    # The first characters of the token, to recognise it in lists and logs.
    prefix = models.CharField(max_length=16, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(db_default=Now(), editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = TokenQuerySet.as_manager()

    class Meta:
        db_table = "ingest_api_token"
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"
        constraints = [
            # Authentication looks a token up by the hash of the presented secret.
            models.UniqueConstraint(fields=["key_hash"], name="ingest_api_token_key_hash_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.scope}, {self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
