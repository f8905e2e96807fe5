"""The whole test suite on N xdist workers against M, run alternately (a machine's pace and
load change by the minute: each round runs the suite once per worker count).

Each run is what `make test` runs for pytest (`.venv/bin/python -m pytest -n N --dist
loadfile`, the suite's schedule, tests/file_schedule.py), without the static checks beside
it; prints, per run, pytest's wall seconds, the tests' CPU seconds (tests/cpu_report.py: the
tests, the processes they start and their PostgreSQL backends; start-up and collection not
included), its per-worker split and the 1-minute load at the start, then each count's mean
and median. DATABASE_URL and REDIS_URL as for `make test` (unset: the local services).

Usage: .venv/bin/python bench/suite_workers.py --workers 3 4 --rounds 2
"""

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.pytest_runs import run_pytest  # after the path above

ROOT = Path(__file__).resolve().parent.parent
PASSED = re.compile(r"^=*\s*(\d+ passed.*|\d+ failed.*) in ([\d.]+)s", re.MULTILINE)


def run(workers: int) -> tuple[float, float, float, str, float]:
    """(pytest's own seconds, the process's wall seconds with start-up and collection, the
    tests' CPU seconds, its summary and per-worker split, the 1-minute load at the start)."""
    command = [sys.executable, "-m", "pytest", "-q", "--cpu-durations=1"]
    command += ["-n", str(workers), "--dist", "loadfile"]
    result = run_pytest(command, ROOT, "suite-workers-failed-")
    passed = PASSED.findall(result.stdout)
    summary = passed[-1][0] if passed else result.stderr.strip()[-300:]
    if result.failure:
        summary = f"{result.failure}: {summary}"
    seconds = float(passed[-1][1]) if passed else float("nan")
    return seconds, result.wall, result.tests_cpu, f"{summary}; {result.per_worker}", result.load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    figures: dict[int, list[tuple[float, float, float]]] = {n: [] for n in args.workers}
    for round_number in range(1, args.rounds + 1):
        # Each round reverses the order, so neither count always runs on a warmer machine.
        order = args.workers if round_number % 2 else list(reversed(args.workers))
        for workers in order:
            started = time.strftime("%H:%M:%S", time.gmtime())
            seconds, wall, cpu, summary, load = run(workers)
            figures[workers].append((seconds, wall, cpu))
            print(
                f"round {round_number} {workers} workers ({started} UTC, load {load:.1f}):"
                f" pytest {seconds:.1f} s ({wall:.1f} s with start-up), tests' CPU {cpu:.1f} s;"
                f" {summary}",
                flush=True,
            )
    print("\nworkers: pytest s, with start-up s, tests' CPU s (each mean/median)")
    for workers, rows in figures.items():
        columns = [[row[i] for row in rows] for i in range(3)]
        print(
            f"{workers}: "
            + ", ".join(f"{statistics.mean(c):.1f}/{statistics.median(c):.1f}" for c in columns)
        )


if __name__ == "__main__":
    main()
