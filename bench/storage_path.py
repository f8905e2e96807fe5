"""The batch storage path that Kafka ingest and POST /api/v1/lineage/batch share, against a
bare COPY of the same rows into a bare table, in one process on one database.

The path is each event's bytes read (``ingest.kafka.storage.prepare_batch``: parsed,
validated, serialised, size-checked) and stored (``ingest.services``: one INSERT per batch
of --batch-size, the statement ``record_events`` runs, committed on its own). Two shapes of
it, both as shipped:
  - in series (``write_batch``): read a batch, then store it and wait, as one batch
    request does in its thread;
  - overlapped, what ``manage.py consume_kafka`` does: the next batch is read while the
    database stores the one before (its INSERT sent in pipeline mode, ADR 0072; at most
    one in flight).
Both in a process whose start-up heap is frozen (``core.heap``), as the web server's and
the consumer's are.
The ceiling: the same rows written by ``COPY`` into a table like ingest_event (its columns,
indexes and unique digest), committed per batch. Rounds alternate the three and each ratio
printed is the median of the rounds' ratios.

Usage: .venv/bin/python -m bench.storage_path [--events 10000] [--rounds 3]
(bench/ingest.py runs it and prints its ratios too.)
"""

import argparse
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import DEFAULT_CORPUS, load_templates, make_events, migrated_django_without_broker
from bench.ingest import ceiling_copy, ceiling_rows

TOPIC = "bench"
KINDS = {TOPIC: "openlineage"}
DEAD_LETTER_BYTES = 4096


def batches(events: list[bytes], size: int) -> list[list[Any]]:
    """The events as Kafka messages (``ingest.kafka.messages.Message``), in batches."""
    from ingest.kafka.messages import Message

    now = datetime.now(UTC)
    messages = [Message(TOPIC, 0, offset, None, body, now) for offset, body in enumerate(events)]
    return [messages[start : start + size] for start in range(0, len(messages), size)]


def in_series(events: list[bytes], size: int) -> float:
    """Events/s reading then storing each batch in turn."""
    from ingest.kafka.storage import prepare_batch, write_batch

    work = batches(events, size)
    started = time.perf_counter()
    for messages in work:
        write_batch(prepare_batch(messages, KINDS), KINDS, DEAD_LETTER_BYTES)
    return len(events) / (time.perf_counter() - started)


def overlapped(events: list[bytes], size: int) -> float:
    """Events/s reading each batch while the database stores the one before, as the
    consumer does: ``send_batch`` returns once the INSERT is sent, ``finish_batch`` waits
    for its commit."""
    from ingest.kafka.storage import finish_batch, prepare_batch, send_batch

    work = batches(events, size)
    started = time.perf_counter()
    in_flight = None
    for messages in work:
        prepared = prepare_batch(messages, KINDS)
        if in_flight is not None:
            finish_batch(in_flight, KINDS, DEAD_LETTER_BYTES)
        in_flight = send_batch(prepared)
    if in_flight is not None:
        finish_batch(in_flight, KINDS, DEAD_LETTER_BYTES)
    return len(events) / (time.perf_counter() - started)


def measure(
    database_url: str, events: int, batch: int, rounds: int, corpus: Path
) -> tuple[float, float]:
    """The median ratios (in series, overlapped) of the path's events/s to COPY's."""
    migrated_django_without_broker(database_url)
    from core.heap import freeze_startup_heap

    templates = load_templates(corpus)
    freeze_startup_heap()
    series_ratios, overlap_ratios = [], []
    for round_number in range(rounds):
        # Fresh events each time: a repeated one is a duplicate, not a write.
        series = in_series(make_events(templates, events, seed=500 + 2 * round_number), batch)
        bodies = make_events(templates, events, seed=501 + 2 * round_number)
        overlap = overlapped(bodies, batch)
        copy = ceiling_copy(database_url, ceiling_rows(bodies), batch)
        series_ratios.append(series / copy)
        overlap_ratios.append(overlap / copy)
        print(
            f"  storage path round {round_number + 1}: in series {series:7.0f} events/s, "
            f"overlapped {overlap:7.0f} events/s, COPY {copy:7.0f} events/s, ratios "
            f"{series_ratios[-1]:.2f} / {overlap_ratios[-1]:.2f}",
            flush=True,
        )
    return statistics.median(series_ratios), statistics.median(overlap_ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_storage"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    series, overlap = measure(
        args.database_url, args.events, args.batch_size, args.rounds, args.corpus
    )
    print(
        f"ratio storage-path/copy-ceiling: in series {series:.2f}, overlapped as the consumer "
        f"runs it {overlap:.2f}, median of {args.rounds} rounds (target >= 0.5)"
    )


if __name__ == "__main__":
    main()
