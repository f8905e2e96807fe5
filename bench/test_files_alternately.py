"""Wall seconds of test files in two checkouts, run alternately (a busy machine's load
changes by the minute: each round runs every file in one checkout, then in the other).

Each run is `.venv/bin/pytest -q -p no:randomly FILE --durations=10 --cpu-durations=3` in the
checkout's own directory (its own .venv or a symlink to one); prints, per file, each round's
wall seconds with the load average at its start, the tests' CPU seconds (tests/cpu_report.py:
the tests' process, the processes they started and their PostgreSQL backend), pytest's own
"passed in" seconds, and each checkout's mean and median. Nothing is compared but what the
two trees hold: run them in the same period.

Usage: .venv/bin/python bench/test_files_alternately.py --before /tmp/main-copy \
    --after . --rounds 2 tests/ingest/test_fastpath.py tests/ingest/kafka/test_consume.py
"""

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.pytest_runs import run_pytest  # after the path above


def run(tree: Path, test_file: str) -> tuple[float, str, float, float]:
    """(wall seconds, pytest's summary line, the 1-minute load at the start, the tests' CPU
    seconds or NaN)."""
    command = [str(tree / ".venv/bin/pytest"), "-q", "-p", "no:randomly", test_file]
    command += ["--durations=10", "--cpu-durations=3"]
    result = run_pytest(command, tree, "test-files-failed-")
    lines = result.stdout.strip().splitlines()
    summary = lines[-1] if lines else result.stderr.strip()[-300:]
    if result.failure:
        summary = f"{result.failure}: {summary}"
    return result.wall, summary, result.load, result.tests_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("files", nargs="+")
    options = parser.parse_args()
    trees = {"before": options.before.resolve(), "after": options.after.resolve()}
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for round_number in range(1, options.rounds + 1):
        for test_file in options.files:
            for name, tree in trees.items():
                wall, summary, load, cpu = run(tree, test_file)
                walls.setdefault((test_file, name), []).append(wall)
                cpus.setdefault((test_file, name), []).append(cpu)
                print(
                    f"round {round_number} {name:6} {test_file}: {wall:6.1f} s wall, "
                    f"{cpu:6.1f} s tests' CPU, load {load:4.1f}; {summary}",
                    flush=True,
                )
    for label, figures in (("wall s", walls), ("tests' CPU s", cpus)):
        print(f"\n{label}: file, before mean/median, after mean/median, medians' difference")
        for test_file in options.files:
            before, after = figures[test_file, "before"], figures[test_file, "after"]
            difference = statistics.median(after) - statistics.median(before)
            print(
                f"{test_file}: {statistics.mean(before):.1f}/{statistics.median(before):.1f} "
                f"{statistics.mean(after):.1f}/{statistics.median(after):.1f} {difference:+.1f}"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
