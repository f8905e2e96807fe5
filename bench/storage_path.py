"""The batch storage path that Kafka ingest and POST /api/v1/lineage/batch share, against a
bare COPY of the same rows into a bare table, in one process on one database.

The path: each event's bytes parsed (``ingest.parsing.parse_json``), validated
(``validate_openlineage``), serialised and stored by ``ingest.services.record_events`` in
batches of --batch-size, each batch one INSERT in autocommit, which is what
``ingest.kafka.storage.store_batch`` does for a batch of messages. The ceiling: the same
rows written by ``COPY`` into a table like ingest_event (its columns, indexes and unique
digest), committed per batch. Rounds alternate the two and the ratio printed is the
median of the rounds' ratios.

Usage: .venv/bin/python -m bench.storage_path [--events 10000] [--rounds 3]
(bench/ingest.py runs it and prints its ratio too.)
"""

import argparse
import statistics
import time
from pathlib import Path

from bench.common import DEFAULT_CORPUS, load_templates, make_events, migrated_django_without_broker
from bench.ingest import ceiling_copy, ceiling_rows


def storage_path_rate(events: list[bytes], batch: int) -> float:
    from ingest.parsing import parse_json
    from ingest.services import record_events, serialise
    from ingest.validation import validate_openlineage

    started = time.perf_counter()
    for start in range(0, len(events), batch):
        record_events(
            [
                serialise(validate_openlineage(parse_json(body)))
                for body in events[start : start + batch]
            ]
        )
    return len(events) / (time.perf_counter() - started)


def measure(database_url: str, events: int, batch: int, rounds: int, corpus: Path) -> float:
    """The median ratio of the storage path's events/s to COPY's; prints each round."""
    migrated_django_without_broker(database_url)
    templates = load_templates(corpus)
    ratios = []
    for round_number in range(rounds):
        bodies = make_events(templates, events, seed=500 + round_number)
        path = storage_path_rate(bodies, batch)
        copy = ceiling_copy(database_url, ceiling_rows(bodies), batch)
        ratios.append(path / copy)
        print(
            f"  storage path round {round_number + 1}: {path:7.0f} events/s, COPY {copy:7.0f} "
            f"events/s, ratio {ratios[-1]:.2f}",
            flush=True,
        )
    return statistics.median(ratios)


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
    ratio = measure(args.database_url, args.events, args.batch_size, args.rounds, args.corpus)
    print(
        f"ratio storage-path/copy-ceiling: {ratio:.2f} median of {args.rounds} rounds "
        "(target >= 0.5)"
    )


if __name__ == "__main__":
    main()
