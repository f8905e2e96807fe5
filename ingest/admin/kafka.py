"""Admin for Kafka ingest: dead letters (read-only, replayable) and the consumers' lag."""

import json
import re
from typing import Any, ClassVar

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from core.admin_base import BoundedAdmin, TimeOrderChangeList
from core.admin_scans import PresentValuesFilter
from core.problems import Problem
from core.redaction import redact, redact_text
from ingest.models import ConsumerLag, DeadLetter
from ingest.parsing import parse_json

# Control bytes no text carries (tab and line breaks aside): UTF-16 or UTF-32 text (an ASCII
# key is split by NUL bytes), compressed or binary formats (Avro, Protobuf). Their keys are
# not text that redaction can find, so they are not shown at all.
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _shown(data: Any, limit: int = 4096) -> str:
    """Bytes as the steward sees them: bounded and redacted by the one redaction function.

    A JSON document (as ingest parses it: strict, no duplicate keys, bounded depth) is
    redacted as a document, so a secret key's value goes whole whatever it holds (``{"password":
    {"nested": "x"}}``, ``{"secrets": ["x", "y"]}``, numbers); anything else (JSON cut short,
    refused JSON, plain text) as text, which redacts an object or array after a secret key to
    its closing bracket or, cut short, to the end. Binary is not shown.
    """
    if data is None:
        return "—"
    raw = bytes(data)[:limit]
    if _BINARY.search(raw):
        return f"binary, {len(raw)} bytes: not shown (only text can be redacted)"
    try:
        document = parse_json(raw)
    except Problem:
        return redact_text(raw.decode("utf-8", errors="replace"))
    return json.dumps(redact(document), indent=2, ensure_ascii=False)


class ReplayedFilter(admin.SimpleListFilter):
    title = "replayed"
    parameter_name = "replayed"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "not replayed"), ("yes", "replayed")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "no":
            return queryset.filter(replayed_at__isnull=True)  # ingest_dead_letter_open_idx
        if self.value() == "yes":
            return queryset.filter(replayed_at__isnull=False)
        return queryset


class ReasonCodeFilter(PresentValuesFilter):
    title = "reason code"
    column = "reason_code"  # ingest_dead_letter_reason_idx (reason_code, id)


class TopicFilter(PresentValuesFilter):
    title = "topic"
    column = "topic"  # ingest_dead_letter_position_uniq (topic, partition, offset)


class LettersWithoutValues(TimeOrderChangeList):
    """The list (and the replay action's selection) without keys and values, which it
    does not show: a page held 50 values of up to LINEAGE_CONSUMER_DEAD_LETTER_BYTES each,
    read again after every replay. The change page reads its letter's whole row. On the
    base's change list, so ``?o=`` sorts by ``sortable_by`` only (ADR 0193)."""

    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet:
        return super().get_queryset(request, exclude_parameters).defer("key", "value")


@admin.register(DeadLetter)
class DeadLetterAdmin(BoundedAdmin):
    list_display = (
        "id",
        "topic",
        "partition",
        "offset",
        "reason_code",
        "reason_redacted",
        "received_at",
        "replayed_at",
    )
    # Each value's choices found by its index, one probe a value: Django's field filters
    # read every letter twice a visit (SELECT DISTINCT reason_code, topic; ADR 0195).
    list_filter: ClassVar[tuple[Any, ...]] = (ReplayedFilter, ReasonCodeFilter, TopicFilter)
    sortable_by = ("id",)
    fields: ClassVar[tuple[str, ...]] = (
        "topic",
        "partition",
        "offset",
        "kind",
        "message_time",
        "received_at",
        "reason_code",
        "reason_redacted",
        "key_shown",
        "value_size",
        "value_shown",
        "replayed_at",
        "replayed_event_link",
    )
    readonly_fields = fields
    actions = ["replay_selected"]

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return LettersWithoutValues

    @admin.display(description="reason")
    def reason_redacted(self, letter: DeadLetter) -> str:
        return redact_text(letter.reason)

    @admin.display(description="key")
    def key_shown(self, letter: DeadLetter) -> str:
        return _shown(letter.key, 1024)

    @admin.display(description="value (redacted; JSON indented; kept whole when it fits)")
    def value_shown(self, letter: DeadLetter) -> str:
        kept = "whole" if letter.complete else f"first {len(bytes(letter.value))} bytes"
        return format_html("<p>{}</p><pre>{}</pre>", kept, _shown(letter.value))

    @admin.display(description="stored as")
    def replayed_event_link(self, letter: DeadLetter) -> str:
        if letter.replayed_event_id is None:
            return "—"
        return format_html(
            '<a href="/admin/ingest/event/{}/change/">event #{}</a>',
            letter.replayed_event_id,
            letter.replayed_event_id,
        )

    def has_replay_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("ingest.change_deadletter")

    @admin.action(description="Replay selected dead letters", permissions=["replay"])
    def replay_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        # Here, not at the top: every process's django.setup() imports the admin (ADR
        # 0113), and the replay brings Kafka's client (confluent_kafka) that only it needs.
        from ingest.kafka.replay import replay

        # What the log names them by, not their keys and values: the replay reads those a
        # bounded chunk at a time (ADR 0162).
        letters = list(queryset.only("id", "topic", "partition", "offset")[:500])
        report = replay([letter.pk for letter in letters])
        outcomes = {
            **dict.fromkeys(report.stored, "stored"),
            **dict.fromkeys(report.refused, "refused again"),
            **dict.fromkeys(report.too_large, "too large, not read"),
            # With what Kafka said of each: its offsets, or its error.
            **{id_: f"gone from Kafka ({report.details[id_]})" for id_ in report.gone},
            **{id_: f"no answer from Kafka ({report.details[id_]})" for id_ in report.no_answer},
            **dict.fromkeys(report.unavailable, "unavailable"),
            **dict.fromkeys(report.not_reached, "not reached, left open"),
        }
        for letter in letters:  # a replay stores events: the admin log says who asked
            self.log_change(request, letter, f"Replayed: {outcomes.get(letter.pk, 'skipped')}.")
        counts = [
            ("too large", report.too_large, report.why_too_large),
            ("gone from Kafka", report.gone, report.why_gone),
            ("no answer from Kafka", report.no_answer, report.why_no_answer),
            ("unavailable", report.unavailable, report.why_unavailable),
            ("not reached", report.not_reached, report.why_not_reached),
        ]
        self.message_user(
            request,
            f"Stored {len(report.stored)}, refused again {len(report.refused)} (the reason is "
            "updated), "
            + ", ".join(
                f"{name} {len(ids)}" + (f" ({why()})" if ids else "") for name, ids, why in counts
            )
            + ".",
            messages.WARNING
            if report.refused or any(ids for _, ids, _ in counts)
            else messages.SUCCESS,
        )


@admin.register(ConsumerLag)
class ConsumerLagAdmin(BoundedAdmin):
    list_display = (
        "group_id",
        "topic",
        "partition",
        "committed_offset",
        "high_watermark",
        "lag",
        "member",
        "reported_at",
    )
    sortable_by = ("group_id",)
