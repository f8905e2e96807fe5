"""How long a `make test` run's workers take under xdist's stock `--dist loadfile` order
(files with the most tests first) and under tests/file_schedule.py's (longest recorded
files first), replayed from one run's per-test wall seconds (pytest's --junitxml).

Each worker runs its files' tests one after another for the seconds they took in that
run; a worker is sent the next file as xdist sends it (at the start, and whenever two or
fewer of its tests are left). Prints each order's makespan (the last worker's end) and
the workers' busy seconds. A replay, not a run: the seconds were measured with the other
workers beside each test, and a change of order changes what runs beside what.

Usage: .venv/bin/python bench/xdist_schedule.py RUN.xml [--workers 3]
   (RUN.xml from `make test PYTEST_ARGS="--junitxml=RUN.xml"`)
"""

import argparse
import heapq
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.file_schedule import BUSY_SECONDS, cheapest, costliest

ROOT = Path(__file__).resolve().parent.parent


def file_of(classname: str) -> str:
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (ROOT / candidate).exists():
            return candidate
    return classname


def read_run(path: Path) -> dict[str, list[float]]:
    """Each file's tests' wall seconds, files in about pytest's collection order (the
    report holds them in the order they ended: testpaths' order, then by path)."""
    files: dict[str, list[float]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        files.setdefault(file_of(case.get("classname", "")), []).append(float(case.get("time", 0)))
    return dict(sorted(files.items(), key=lambda item: (item[0].startswith("collector/"), item[0])))


Chooser = Callable[[dict[str, list[float]], list[float]], str]


def stock(waiting: dict[str, list[float]], pending: list[float]) -> str:
    # --loadscope-reorder: most tests first, ties in collection order.
    return max(waiting, key=lambda name: len(waiting[name]))


def longest_first(waiting: dict[str, list[float]], pending: list[float]) -> str:
    seconds = {name: sum(tests) for name, tests in waiting.items()}
    tests = {name: len(t) for name, t in waiting.items()}
    choose = cheapest if sum(pending) > BUSY_SECONDS else costliest
    return choose(waiting, tests, seconds)


def replay(files: dict[str, list[float]], workers: int, choose: Chooser) -> list[float]:
    """Each worker's end time."""
    waiting = dict(files)
    queues: list[list[float]] = [[] for _ in range(workers)]
    ends = [0.0] * workers

    def feed(worker: int) -> None:
        while waiting and len(queues[worker]) <= 2:
            queues[worker].extend(waiting.pop(choose(waiting, queues[worker])))

    for worker in range(workers):  # one file each, then more while two or fewer tests
        if waiting:
            queues[worker].extend(waiting.pop(choose(waiting, queues[worker])))
    for worker in range(workers):
        feed(worker)
    events = [(0.0, worker) for worker in range(workers)]
    heapq.heapify(events)
    while events:
        now, worker = heapq.heappop(events)
        if not queues[worker]:
            ends[worker] = now
            continue
        seconds = queues[worker].pop(0)
        feed(worker)
        heapq.heappush(events, (now + seconds, worker))
    return ends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--workers", type=int, default=3)
    args = parser.parse_args()
    files = read_run(args.run)
    total = sum(sum(tests) for tests in files.values())
    print(f"{sum(map(len, files.values()))} tests in {len(files)} files, {total:.0f} worker s")
    longest = sorted(files.items(), key=lambda item: -sum(item[1]))[:5]
    print("longest files: " + ", ".join(f"{name} {sum(t):.0f} s" for name, t in longest))
    for label, choose in (("stock loadfile", stock), ("longest first", longest_first)):
        ends = replay(files, args.workers, choose)
        print(
            f"{label:>15}: makespan {max(ends):6.0f} s; workers end at "
            + ", ".join(f"{end:.0f}" for end in ends)
        )


if __name__ == "__main__":
    main()
