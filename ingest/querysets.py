"""Read-side query helpers for the raw event log and tokens."""

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from django.db import connections, models
from django.db.models import Q
from django.db.models.functions import Cast, Coalesce

from ingest import derivation_status
from ingest.kinds import OPENLINEAGE_KINDS, EventKind

# Backlog counts stop here: counting a million pending rows is itself a full scan, and past
# this "very large" is all a reader needs.
BACKLOG_COUNT_CAP = 100_000

QuerySetT = TypeVar("QuerySetT", bound=models.QuerySet)


@dataclass(frozen=True)
class DerivationBacklog:
    """What is still to derive: counts capped at ``cap``, and the oldest pending event."""

    pending: int
    failed: int
    oldest_pending_id: int | None
    oldest_pending_received_at: datetime | None
    cap: int = BACKLOG_COUNT_CAP

    def lag_seconds(self, now: datetime) -> float | None:
        """How long the oldest pending event has waited; None when nothing is pending."""
        oldest = self.oldest_pending_received_at
        return None if oldest is None else max((now - oldest).total_seconds(), 0.0)


def _octet_length(expression: models.Expression | str) -> models.Func:
    return models.Func(expression, function="octet_length", output_field=models.BigIntegerField())


# What an event's JSON weighs when fetched: the exact bytes of ``payload_raw`` (octet_length
# of a bytea reads its length from the TOAST pointer, without fetching it), else the text of
# the jsonb. Not pg_column_size: that is the *compressed* size, and 8 MiB of one repeated
# character compresses to a few kilobytes.
PAYLOAD_BYTES = Coalesce(
    _octet_length("payload_raw"), _octet_length(Cast("payload", models.TextField()))
)


@dataclass(frozen=True)
class SizedEvent:
    id: int
    event_time: datetime | None
    payload_bytes: int


def leading_within(sizes: Sequence[int], budget: int) -> int:
    """How many of ``sizes``, from the first, fit in ``budget`` bytes (at least one, so
    that an event larger than the budget is still served, alone)."""
    total = 0
    for count, size in enumerate(sizes):
        total += size
        if count and total > budget:
            return count
    return len(sizes)


def filter_given(queryset: QuerySetT, **lookups: object) -> QuerySetT:
    """``queryset`` filtered by each of ``lookups`` whose value is given (not None): the
    optional conditions of a search or an export."""
    given = {lookup: value for lookup, value in lookups.items() if value is not None}
    return queryset.filter(**given) if given else queryset


# A run's events newest eventTime first, then id: ingest_event_run_time_idx (md5(run_id),
# event_time, id) read backwards, so a page of them stops after the page. In id order
# PostgreSQL walked the primary key back from the log's newest event, or read and sorted all
# a streaming run's heartbeats (ADR 0183). Every event that carries a runId carries an
# eventTime (validation refuses one without), so DESC's NULLs first places none.
RUN_EVENTS_ORDER = ("-event_time", "-id")


class EventQuerySet(models.QuerySet):
    def of_run(self, run_id: str) -> "EventQuerySet":
        """The events carrying ``run_id`` in ``RUN_EVENTS_ORDER``: a page is a range."""
        return self.filter(run_id=run_id).order_by(*RUN_EVENTS_ORDER)

    def columns_holding(self, term: str, columns: Mapping[str, Sequence[str]]) -> set[str]:
        """Which of ``columns`` (``DigestIndexedText``: each found through its md5 index) hold
        ``term`` in some event of the log. One statement: per column, its index's first
        entry for ``term``, in the order ``columns`` gives for it (the columns its index
        holds after the md5): unordered, PostgreSQL took a value its statistics call common
        for a sequential scan until one turned up. A search that ORs the columns makes
        PostgreSQL read every match of each and sort them; knowing which can match, it
        searches those alone."""
        manager = self.model._default_manager
        probes = [
            manager.filter(**{column: term})
            .order_by(*order)
            .annotate(column=models.Value(column))
            .values_list("column", flat=True)[:1]
            for column, order in columns.items()
        ]
        return set(probes[0].union(*probes[1:], all=True))

    def openlineage_export(
        self, since: datetime | None = None, until: datetime | None = None, namespace: str = ""
    ) -> "EventQuerySet":
        """OpenLineage events (run, dataset and job events) with eventTime in [since, until),
        of one namespace when given: the job's, or a DatasetEvent's dataset's."""

        queryset = filter_given(
            self.filter(kind__in=OPENLINEAGE_KINDS, event_time__isnull=False),
            event_time__gte=since,
            event_time__lt=until,
        )
        if namespace:
            queryset = queryset.filter(
                Q(job_namespace=namespace)
                | Q(kind=EventKind.DATASET, payload__dataset__namespace=namespace)
            )
        return queryset

    def payload_sizes(self, ordering: Sequence[str], offset: int, limit: int) -> list[SizedEvent]:
        """The events at ``[offset, offset + limit)`` of this queryset in ``ordering``, with
        their payloads' size, and no payload: a reader decides how many to fetch first.

        Two queries: the page's ids, then their sizes by primary key. Sizing in the page's
        own query would size every row an OFFSET skips or a sort reads (PostgreSQL computes
        the select list below Limit and Sort), and an ``IN (subquery)`` is planned as a
        hash join over a sequential scan of the whole log.
        """
        ids = list(self.order_by(*ordering).values_list("id", flat=True)[offset : offset + limit])
        rows = (
            self.model._default_manager.filter(id__in=ids)
            .order_by()
            .annotate(payload_bytes=PAYLOAD_BYTES)
            .values_list("id", "event_time", "payload_bytes")
        )
        sized = {row[0]: SizedEvent(*row) for row in rows}
        return [sized[event_id] for event_id in ids if event_id in sized]

    def received_payloads(self, ids: Sequence[int]) -> Iterator[object]:
        """The events ``ids``, in that order, exactly as received (``Event.received_payload``),
        parsed one at a time: the fetched text of the others is all that is held meanwhile.

        One query. The stdlib parser keeps integers beyond 64 bits exact (orjson would make
        them floats).
        """
        exact_text = models.Case(
            models.When(payload_raw__isnull=True, then=Cast("payload", models.TextField())),
            default=None,
        )
        texts: dict[int, str | bytes] = {}
        rows = (
            self.model._default_manager.filter(id__in=list(ids))
            .order_by()
            .annotate(payload_text=exact_text)
            .values_list("id", "payload_text", "payload_raw")
        )
        for event_id, text, raw in rows:
            texts[event_id] = bytes(raw) if raw is not None else text
        for event_id in ids:
            text = texts.pop(event_id, None)
            if text is not None:
                yield json.loads(text)

    def derivation_backlog(self, cap: int = BACKLOG_COUNT_CAP) -> DerivationBacklog:
        """Backlog, failures and the oldest pending event of the whole log (one query)."""
        with connections[self.db].cursor() as cursor:
            cursor.execute(derivation_status.BACKLOG, {"cap": cap})
            pending, failed, oldest_id, oldest_at = cursor.fetchone()
        return DerivationBacklog(pending, failed, oldest_id, oldest_at, cap)


class TokenQuerySet(models.QuerySet):
    def active(self) -> "TokenQuerySet":
        return self.filter(revoked_at__isnull=True)
