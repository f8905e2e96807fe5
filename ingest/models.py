"""The raw event log and the API tokens.

``Event`` rows are the source of truth: written once at ingest, never changed afterwards
except for their derivation status, never deleted.
"""

import json
from typing import Any

from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models.functions import MD5, Now
from django.db.models.lookups import Exact

from ingest.derivation_status import DerivationStatus
from ingest.kinds import EventKind
from ingest.querysets import EventQuerySet, TokenQuerySet


class DigestIndexedText(models.TextField):
    """Text of any length found by equality through a btree index on ``md5(column)``.

    Hash indexes took values of any length too, but an insert walks its bucket's whole
    overflow chain: with a value shared by many rows (one producer for all events, a job's
    thousand runs, a streaming run's heartbeats) every insert, and every status update,
    cost grew with the log (ADR 0025). A btree on md5 keeps duplicates in O(log n).
    """


class DigestExact(Exact):
    """``column = value`` also as ``md5(column) = md5(value)``, which the index serves."""

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[Any, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        params = (*lhs_params, *rhs_params)
        return f"(md5({lhs}) = md5({rhs}) AND {lhs} = {rhs})", params + params


DigestIndexedText.register_lookup(DigestExact)


class Event(models.Model):
    """One accepted event, exactly as received."""

    received_at = models.DateTimeField(db_default=Now(), editable=False)
    kind = models.CharField(max_length=16, choices=EventKind.choices)
    event_type = models.CharField(max_length=16, null=True, blank=True)
    # Parsed from the payload (lenient: zone-less times are UTC, nanoseconds truncated);
    # edges and metadata records use their own timestamp or the receive time.
    event_time = models.DateTimeField(null=True)
    run_id = DigestIndexedText(null=True, blank=True)
    job_namespace = models.TextField(null=True, blank=True)
    job_name = DigestIndexedText(null=True, blank=True)
    producer = DigestIndexedText(null=True, blank=True)
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
            # Events of one run / one job / one producer (admin search, API filters):
            # equality through md5 (values of any length; see DigestIndexedText). A run's
            # events also in (eventTime, id) order: the run detail's first 200 and a
            # dataset version's newest are a range of it, not a sort of all a streaming
            # run's heartbeats (ADR 0181).
            models.Index(MD5("run_id"), "event_time", "id", name="ingest_event_run_time_idx"),
            models.Index(MD5("job_name"), name="ingest_event_job_md5"),
            models.Index(MD5("producer"), name="ingest_event_producer_md5"),
        ]

    def __str__(self) -> str:
        label = self.event_type or self.kind
        if self.job_name:  # shown in the admin: an edge's pipeline may hold a token
            from core.redaction import redact_text  # here: the stubs' plugin loads models

            return redact_text(f"#{self.id} {label} {self.job_namespace}/{self.job_name}")
        return f"#{self.id} {label}"

    @property
    def schema_url(self) -> str | None:
        """The event's schemaURL, read from the payload: nothing queries it, so it is not
        stored twice (ADR 0103). None when absent or not a string (a warning at ingest)."""
        value = self.payload.get("schemaURL") if isinstance(self.payload, dict) else None
        return value if isinstance(value, str) else None

    @property
    def received_payload(self) -> object:
        """The event exactly as received (``payload_raw`` when jsonb could not hold it)."""
        if self.payload_raw is not None:
            return json.loads(bytes(self.payload_raw))  # stdlib: keeps big integers exact
        return self.payload


class TokenScope(models.TextChoices):
    INGEST = "ingest", "Ingest (write events)"
    READ = "read", "Read (query the catalog)"
    # Retire and restore through the Marquez mount's DELETE calls (ADR 0078).
    CURATE = "curate", "Curate (retire datasets, jobs, namespaces)"


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


# --- Kafka ingest (ingest/kafka/, ADR 0062) -------------------------------------------------


class DeadLetter(models.Model):
    """A Kafka message the consumer could not store (not JSON, too large, too deep, no
    usable core), kept so that it never blocks its partition and can be replayed."""

    topic = models.CharField(max_length=249)  # Kafka's own limit on a topic name
    partition = models.IntegerField()
    offset = models.BigIntegerField()
    kind = models.CharField(max_length=16)  # the topic's kind: openlineage or metadata
    key = models.BinaryField(null=True, editable=False)  # bounded like the value
    # The first DEAD_LETTER_BYTES of the message value; the whole value when it fits.
    value = models.BinaryField(editable=False)
    value_size = models.IntegerField()  # bytes of the whole value
    message_time = models.DateTimeField(null=True)  # the producer's or broker's timestamp
    reason_code = models.CharField(max_length=32)  # the problem's slug: a bounded label
    reason = models.TextField()
    received_at = models.DateTimeField(db_default=Now(), editable=False)
    # Set when a replay stored the message (the steward fixed a rule, the code was upgraded).
    replayed_at = models.DateTimeField(null=True, blank=True)
    replayed_event = models.ForeignKey(
        Event, null=True, blank=True, on_delete=models.PROTECT, db_constraint=False
    )

    class Meta:
        db_table = "ingest_dead_letter"
        ordering = ["-id"]
        constraints = [
            # A redelivered message is recorded once: INSERT ... ON CONFLICT DO NOTHING.
            models.UniqueConstraint(
                fields=["topic", "partition", "offset"], name="ingest_dead_letter_position_uniq"
            ),
        ]
        indexes = [
            # The /metrics gauge and the admin's default view: those not replayed yet.
            models.Index(
                fields=["id"],
                name="ingest_dead_letter_open_idx",
                condition=models.Q(replayed_at__isnull=True),
            ),
            # The admin's letters of one reason, newest first (a rare one among many), and
            # its reason filter's choices, one probe a code (core/admin_scans.py, ADR 0195).
            models.Index(fields=["reason_code", "id"], name="ingest_dead_letter_reason_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}"

    @property
    def complete(self) -> bool:
        """Whether ``value`` holds the whole message (then it can be replayed from here)."""
        return len(bytes(self.value)) == self.value_size


class ConsumerLag(models.Model):
    """What each consumer last reported for a partition it owns, so that every web pod's
    ``/metrics`` and the admin dashboard show the same lag (written every few seconds)."""

    group_id = models.CharField(max_length=255)
    topic = models.CharField(max_length=249)
    partition = models.IntegerField()
    committed_offset = models.BigIntegerField()  # the next offset the group will read
    high_watermark = models.BigIntegerField()
    member = models.CharField(max_length=255)  # host and pid of the reporting consumer
    reported_at = models.DateTimeField()

    class Meta:
        db_table = "ingest_consumer_lag"
        ordering = ["group_id", "topic", "partition"]
        constraints = [
            models.UniqueConstraint(
                fields=["group_id", "topic", "partition"], name="ingest_consumer_lag_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group_id} {self.topic}[{self.partition}]"

    @property
    def lag(self) -> int:
        return max(0, self.high_watermark - self.committed_offset)
