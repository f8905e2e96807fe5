"""Peak memory of ``manage.py backfill`` on hostile files (issue 27 item 8).

Builds each file in a temporary folder, backfills it in a process of its own (in that
folder, so a state file left behind shows) and prints the process's peak RSS, its time and
what it reported. Every file also holds one valid event, which must be stored.

Usage: .venv/bin/python bench/backfill_memory.py [--database postgres://.../name]
           [--only NAME]
The database is made anew and migrated. At the default limits (64 MiB inflation cap, 8 MiB
per event) a file of empty lines took 692 MiB before the reader was streamed.
"""

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BIN, PEAK_PROBE, ROOT, migrated_database, peak_mib

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_backfill"
MIB = 1 << 20


def _event() -> bytes:
    import uuid

    return orjson.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-01-01T00:00:00Z",
            "run": {"runId": str(uuid.uuid4())},
            "job": {"namespace": "bench", "name": "backfill_memory"},
            "inputs": [],
            "outputs": [],
            "producer": "https://example.com/bench",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
    )


def _gzip(path: Path, parts: Callable[[], list[bytes]]) -> None:
    with gzip.open(path, "wb", compresslevel=6) as out:
        for part in parts():
            out.write(part)


def _repeat(piece: bytes, total: int) -> list[bytes]:
    block = piece * (MIB // len(piece))
    return [block] * (total // len(block))


# name -> how to write it; each holds one valid event, first. A line that is not JSON after
# it keeps files of blanks from being one JSON document (its refusal is counted).
FILES: dict[str, Callable[[Path], None]] = {
    # The review's file: 64 MiB of empty lines (62 KB gzipped), under the inflation cap.
    "empty-lines.ndjson.gz": lambda p: _gzip(
        p, lambda: [_event(), b"\nnot json\n", *_repeat(b"\n", 63 * MIB)]
    ),
    # An event, then one line of 60 MiB with no newline.
    "one-line.ndjson.gz": lambda p: _gzip(p, lambda: [_event(), b"\n", *_repeat(b"x", 60 * MIB)]),
    # A gzip bomb: 512 MiB of one line, past the inflation cap.
    "bomb.ndjson.gz": lambda p: _gzip(p, lambda: [_event(), b"\n", *_repeat(b"y", 512 * MIB)]),
    # 60 MiB of short lines of blanks after an event.
    "blank-lines.ndjson.gz": lambda p: _gzip(
        p, lambda: [_event(), b"\nnot json\n", *_repeat(b" \t\r\n", 60 * MIB)]
    ),
    # 60 MiB of short lines that are not JSON, each refused.
    "short-lines.ndjson.gz": lambda p: _gzip(
        p, lambda: [_event(), b"\n", *_repeat(b"x\n", 8 * MIB)]
    ),
    # A JSON array of 60 MiB: an event and 60 strings of 1 MiB (each refused).
    "array.json": lambda p: p.write_bytes(
        b"[" + b",".join([_event()] + [b'"' + b"s" * MIB + b'"'] * 60) + b"]"
    ),
    # A JSON array past the inflation cap (refused whole before): 100 elements of 1 MiB.
    "big-array.json.gz": lambda p: _gzip(
        p, lambda: [b"[", _event(), *[b',"' + b"t" * MIB + b'"' for _ in range(100)], b"]"]
    ),
    # 40 events of 4 MiB: a chunk of the default 1,000 events held them all before storing.
    "large-events.ndjson.gz": lambda p: _gzip(p, lambda: [_large_event() for _ in range(40)]),
}


def _large_event() -> bytes:
    event = orjson.loads(_event())
    event["run"]["facets"] = {"padding": {"text": "p" * (4 * MIB)}}
    return orjson.dumps(event) + b"\n"


def run(path: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Peak RSS in MiB, seconds and the summary printed by backfilling ``path`` alone."""
    started = time.monotonic()
    result = subprocess.run(
        [str(BIN / "python"), "-c", PEAK_PROBE, str(ROOT / "manage.py"), "backfill", str(path)],
        cwd=path.parent,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    elapsed = time.monotonic() - started
    peak = peak_mib(result.stderr)
    lines = result.stdout.splitlines()
    summary = next((line for line in lines if line.startswith("stored")), result.stdout)
    return peak, elapsed, summary.strip()[:120]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--only", choices=sorted(FILES))
    arguments = parser.parse_args()
    env = migrated_database(arguments.database)
    baseline_rss = None
    with tempfile.TemporaryDirectory() as folder:
        tiny = Path(folder) / "one-event.ndjson"
        tiny.write_bytes(_event() + b"\n")
        baseline_rss, _, _ = run(tiny, env)
        print(f"{'file':24} {'size':>10} {'peak RSS':>10} {'time':>7}  result")
        print(
            f"{tiny.name:24} {tiny.stat().st_size:>10,} {baseline_rss:>7.0f} MiB"
            f" {'':>7}  (baseline)"
        )
        for name, write in FILES.items():
            if arguments.only and name != arguments.only:
                continue
            path = Path(folder) / name
            write(path)
            peak, elapsed, summary = run(path, env)
            print(
                f"{name:24} {path.stat().st_size:>10,} {peak:>7.0f} MiB {elapsed:>6.1f}s  {summary}"
            )
            path.unlink()
        left = sorted(entry.name for entry in Path(folder).iterdir() if entry.name != tiny.name)
        print(f"left in the working directory: {left or 'nothing'}")


if __name__ == "__main__":
    main()
