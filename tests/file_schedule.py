"""`make test`'s xdist schedule: the test files that took longest start first (ADR 0108).

xdist's `--dist loadfile` hands out whole files, by default the files with the most tests
first. The files that take longest are not those: the order-independence properties (3
tests, a minute), the fault and Kafka tests that start clusters and wait on them. Handed
out last, one of them held the whole run up while the other workers had nothing left to
do. This scheduler hands out the file recorded as the longest of those still waiting each
time a worker needs work (longest processing time first), so the run ends on short files;
a worker that is sent work while a long test is still ahead of it gets the shortest file.

The recorded wall seconds per file live in tests/file_seconds.json, committed so a fresh
clone schedules well; `--record-file-seconds` rewrites it from the run (the files that ran;
the others keep their figures). A file it does not name (a new one) is estimated from its
number of tests. The order changes when tests run, never which tests run or where a file's
tests run together, so a stale figure costs time, never a result.

Loaded by `-p tests.file_schedule` (pyproject's addopts); without xdist it does nothing.
"""

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadFileScheduling

SECONDS_FILE = Path(__file__).resolve().parent / "file_seconds.json"
# A file the table does not name: its tests at about the suite's median test's wall time.
SECONDS_PER_UNKNOWN_TEST = 0.1
# A worker whose tests in hand are expected to take longer than this is busy (see below).
BUSY_SECONDS = 5.0


def load_seconds(path: Path = SECONDS_FILE) -> dict[str, float]:
    try:
        return {str(name): float(value) for name, value in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}  # no table, or a broken one: every file is estimated from its test count


def estimate(scope: str, tests: int, seconds: Mapping[str, float]) -> float:
    return seconds.get(scope, tests * SECONDS_PER_UNKNOWN_TEST)


def costliest(
    waiting: Iterable[str], tests: Mapping[str, int], seconds: Mapping[str, float]
) -> str:
    """The waiting file expected to take longest; ties (and unknown files of the same size)
    keep the queue's order."""
    return max(waiting, key=lambda scope: estimate(scope, tests.get(scope, 1), seconds))


def cheapest(waiting: Iterable[str], tests: Mapping[str, int], seconds: Mapping[str, float]) -> str:
    return min(waiting, key=lambda scope: estimate(scope, tests.get(scope, 1), seconds))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-file-seconds",
        action="store_true",
        default=False,
        help="rewrite tests/file_seconds.json (the xdist schedule's figures) from this run",
    )


class LongestFileFirst(LoadFileScheduling):
    """`--dist loadfile`, handing out the costliest waiting file first."""

    def __init__(self, config: Any, log: Any, seconds: Mapping[str, float]) -> None:
        super().__init__(config, log)
        self.seconds = seconds

    def _assign_work_unit(self, node: Any) -> None:
        # xdist pops the queue's first file; put the chosen one there. A worker is sent more
        # while it still holds a test or two (it runs a test only once it knows the next):
        # behind a long test it gets the cheapest file, so the next long one stays free for a
        # worker that will start it sooner.
        queue = self.workqueue
        tests = {scope: len(unit) for scope, unit in queue.items()}
        choose = cheapest if self._pending_seconds(node) > BUSY_SECONDS else costliest
        queue.move_to_end(choose(queue, tests, self.seconds), last=False)
        super()._assign_work_unit(node)

    def _pending_seconds(self, node: Any) -> float:
        total = 0.0
        for scope, unit in self.assigned_work.get(node, {}).items():
            left = sum(not done for done in unit.values())
            total += estimate(scope, len(unit), self.seconds) * left / len(unit)
        return total


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    return LongestFileFirst(config, log, load_seconds())


class _Recorder:
    """Sums each file's setup, call and teardown wall seconds, and writes the table."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        scope = report.nodeid.split("::", 1)[0]
        self.seconds[scope] = self.seconds.get(scope, 0.0) + report.duration

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        root = session.config.rootpath
        # Files since deleted or renamed leave the table.
        table = {name: value for name, value in load_seconds().items() if (root / name).exists()}
        table.update({scope: round(total, 1) for scope, total in self.seconds.items()})
        SECONDS_FILE.write_text(json.dumps(dict(sorted(table.items())), indent=0) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    # Under xdist the controller sees every worker's reports; a worker writes nothing.
    if config.getoption("--record-file-seconds") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(), "file_seconds_recorder")
