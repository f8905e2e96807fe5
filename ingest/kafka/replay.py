"""Replay dead letters: run each through the pipeline again (after a steward fixed a rule,
a limit was raised or the code was upgraded). A stored one is marked replayed with the
event it became; one refused again gets the new reason. A value kept only in part is read
again from Kafka, at its offset, while the topic still holds it, by the process that
replays (the web server, for the admin's action): one whose Kafka settings are missing says
so in the report instead of calling the message gone, and one librdkafka still cannot hand
over (a batch it cannot inflate) is refused again with librdkafka's reason.

What a replay holds is bounded by the ingest's own body limit, ``LINEAGE_MAX_REQUEST_BYTES``
(ADR 0162), however large the messages and however many letters are replayed at once: the
pipeline refuses a larger value anyway, so a letter whose value is larger is reported too
large without being read, from the table or from Kafka; the values kept whole are read from
the table a chunk of at most that many bytes at a time; and a value read from Kafka is read
by a reader whose librdkafka takes one response of about that size and nothing ahead of it.

What a replay takes is bounded in time too (ADR 0163): it stops starting letters, and stops
waiting for Kafka, after ``LINEAGE_KAFKA_REPLAY_SECONDS`` (20 s: within the web server's
25 s for a request in flight at a graceful stop, and well within a proxy's usual 60 s). The
letters it did not reach are left as they were, still open, and counted, so that the
steward runs it again; one reader serves the whole replay (``ingest.kafka.reader``).

A letter read from Kafka whose message is no longer there (below its partition's first
offset, at or past its end, compacted away, its topic gone) is counted "gone from Kafka" as
soon as Kafka says so, and one Kafka did not answer for, or could not be reached for, "no
answer from Kafka": both are left open with their reason, and the steward is told which
(ADR 0169). Both were "unavailable, the topic no longer holds the message", and an empty
partition was waited on for the letter's whole 10 s.
"""

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Length
from django.utils import timezone

from ingest.kafka import config as kafka_config
from ingest.kafka import reader as kafka_reader
from ingest.kafka.messages import Message, Refusal, read_message
from ingest.kafka.reader import Gone, MessageReader, NoAnswer, OutOfTime, Read, TooLarge
from ingest.models import DeadLetter
from ingest.services import record_events


@dataclass
class ReplayReport:
    stored: list[int] = field(default_factory=list)  # dead letter ids
    refused: list[int] = field(default_factory=list)
    # Only a prefix kept, and this process cannot read Kafka (``kafka_not_configured``).
    unavailable: list[int] = field(default_factory=list)
    # Read from Kafka, which said the message is no longer there: nothing to wait for.
    gone: list[int] = field(default_factory=list)
    # Read from Kafka, which did not answer or could not be reached: it may be there.
    no_answer: list[int] = field(default_factory=list)
    # Why, letter by letter, for those two (the admin's log): Kafka's offsets or error.
    details: dict[int, str] = field(default_factory=dict)
    gone_why: dict[int, str] = field(default_factory=dict)  # letter id → ``Gone.why``
    # Values over ``limit`` (LINEAGE_MAX_REQUEST_BYTES): not read, left as they are.
    too_large: list[int] = field(default_factory=list)
    # Left as they were when the replay's time ran out: not started, or no answer from
    # Kafka before the deadline.
    not_reached: list[int] = field(default_factory=list)
    limit: int = 0
    seconds: float = 0  # LINEAGE_KAFKA_REPLAY_SECONDS
    # Why this process could not read Kafka at all (its settings' message); empty when it
    # could, and the unavailable ones are gone from their topic.
    kafka_not_configured: str = ""

    def why_unavailable(self) -> str:
        return (
            "only a prefix was kept, and this process cannot read Kafka to fetch the rest: "
            + self.kafka_not_configured
        )

    def why_gone(self) -> str:
        counts = Counter(self.gone_why.values())
        parts = [f"{counts[why]} {said}" for why, said in _GONE_SAID.items() if counts[why]]
        return (
            "only a prefix was kept, and Kafka says the message is no longer there: "
            + "; ".join(parts)
            + ". No replay can read them: they are left open, their reason unchanged"
        )

    def why_no_answer(self) -> str:
        said = self.details.get(self.no_answer[-1], "") if self.no_answer else ""
        return (
            f"Kafka did not answer within {kafka_reader.READ_SECONDS:g} s, or could not be "
            f"reached; the last said: {said}. The messages may still be there: they are left "
            "open, replay them again when Kafka answers"
        )

    def why_not_reached(self) -> str:
        return (
            f"a replay stops after LINEAGE_KAFKA_REPLAY_SECONDS ({self.seconds:g} s); they "
            "are left open: replay them again"
        )

    def why_too_large(self) -> str:
        return (
            f"values over LINEAGE_MAX_REQUEST_BYTES ({self.limit:,} bytes) are refused by "
            "ingest and not read by a replay: raise it to replay them"
        )


def replay(letter_ids: list[int]) -> ReplayReport:
    limit = settings.LINEAGE["MAX_REQUEST_BYTES"]
    # At least a second: a replay that may start no letter would only say so.
    seconds = max(1.0, float(settings.LINEAGE_KAFKA["REPLAY_SECONDS"]))
    deadline = time.monotonic() + seconds
    report = ReplayReport(limit=limit, seconds=seconds)
    reader: MessageReader | None = None
    try:
        reader = MessageReader(kafka_config.load(), limit)
    except kafka_config.KafkaNotConfigured as error:
        report.kafka_not_configured = str(error)
    # Without their keys and values: those of 500 letters are what the consumer's
    # LINEAGE_CONSUMER_DEAD_LETTER_BYTES lets each hold (``kept``: how much of a value).
    letters = list(
        DeadLetter.objects.filter(id__in=letter_ids, replayed_at__isnull=True)
        .defer("key", "value")
        .annotate(kept=Length("value"))
        .order_by("id")
    )
    try:
        for chunk in _chunks(letters, limit):
            if time.monotonic() >= deadline:  # their values are not read either
                report.not_reached.extend(letter.id for letter in chunk)
                continue
            values = _values_kept_whole(chunk, limit)
            for letter in chunk:
                if time.monotonic() >= deadline:
                    report.not_reached.append(letter.id)
                    continue
                if letter.value_size > limit:
                    report.too_large.append(letter.id)
                    continue
                value: Read | None = values.pop(letter.id, None)
                if value is None and reader is not None:
                    try:
                        value = reader.read(letter.topic, letter.partition, letter.offset, deadline)
                    except kafka_config.KafkaNotConfigured as error:
                        # Settings librdkafka refuses: said once, not an error page.
                        report.kafka_not_configured, reader = str(error), None
                _replay_one(letter, value, report)
    finally:
        if reader is not None:
            reader.close()
    return report


def _whole(letter: DeadLetter) -> bool:
    """Whether the table holds the letter's whole value (``DeadLetter.complete``, from the
    length read instead of the value)."""
    return bool(letter.kept == letter.value_size)  # type: ignore[attr-defined]


def _chunks(letters: Sequence[DeadLetter], limit: int) -> Iterator[list[DeadLetter]]:
    """The letters in runs whose values kept whole, read from the table together, add up to
    ``limit`` bytes at most (each is at most ``limit``: a larger one is not read)."""
    chunk: list[DeadLetter] = []
    held = 0
    for letter in letters:
        size = letter.value_size if _whole(letter) and letter.value_size <= limit else 0
        if chunk and held + size > limit:
            yield chunk
            chunk, held = [], 0
        chunk.append(letter)
        held += size
    if chunk:
        yield chunk


def _values_kept_whole(chunk: list[DeadLetter], limit: int) -> dict[int, bytes]:
    """The whole values of the chunk's letters that the table holds whole (one query), but
    those over the limit (a consumer may keep more than the web process replays)."""
    ids = [letter.id for letter in chunk if _whole(letter) and 0 <= letter.value_size <= limit]
    if not ids:
        return {}
    rows = DeadLetter.objects.filter(id__in=ids).values_list("id", "value")
    return {letter_id: bytes(value) for letter_id, value in rows}


_GONE_SAID = {
    kafka_reader.RETENTION: "below their partition's first offset (deleted by retention)",
    kafka_reader.END: "at or past their partition's end (never written there, or the "
    "partition was emptied: a topic deleted and made again)",
    kafka_reader.OUT_OF_RANGE: "outside the offsets their partition holds",
    kafka_reader.COMPACTED: "compacted away (a later message has their key)",
    kafka_reader.NO_TOPIC: "of a topic or partition the cluster no longer has",
}


def _replay_one(letter: DeadLetter, value: Read | None, report: ReplayReport) -> None:
    if isinstance(value, OutOfTime):
        report.not_reached.append(letter.id)
        return
    if value is None:
        report.unavailable.append(letter.id)
        return
    if isinstance(value, Gone):
        report.gone.append(letter.id)
        report.gone_why[letter.id] = value.why
        report.details[letter.id] = value.detail
        return
    if isinstance(value, NoAnswer):
        report.no_answer.append(letter.id)
        report.details[letter.id] = value.detail
        return
    if isinstance(value, TooLarge):
        report.too_large.append(letter.id)
        return
    if isinstance(value, Refusal):  # still there, and librdkafka still cannot read it
        DeadLetter.objects.filter(id=letter.id).update(reason_code=value.code, reason=value.reason)
        report.refused.append(letter.id)
        return
    message = Message(
        topic=letter.topic,
        partition=letter.partition,
        offset=letter.offset,
        key=None,  # reading a message never looks at its key (``read_message``): not read
        value=value,
        timestamp=letter.message_time,
    )
    result = read_message(message, letter.kind)
    with transaction.atomic():
        if isinstance(result, Refusal):
            DeadLetter.objects.filter(id=letter.id).update(
                reason_code=result.code[:32], reason=result.reason[:4000]
            )
            report.refused.append(letter.id)
            return
        [stored] = record_events([result])
        DeadLetter.objects.filter(id=letter.id).update(
            replayed_at=timezone.now(), replayed_event_id=stored.id
        )
        report.stored.append(letter.id)
