"""`--cpu-durations=N`: the N tests that used the most CPU seconds, beside pytest's
`--durations` (wall seconds). On a machine shared with others' suites, wall time measures
the load as much as the test; CPU time (this process's, plus the processes it started and
waited for) is what a change to a test changes, so before-and-after comparisons use it.

Loaded by `-p tests.cpu_report` (pyproject's addopts); a no-op unless the option is given.
It works under pytest-xdist: each worker attaches its figures to the test's reports, and
the controller prints them. The test's PostgreSQL backend is counted too (its CPU seconds
from /proc, where the server runs on this machine): a derivation test spends most of its
time there. Other processes of the server (a test database being created) are not.
"""

import os
import resource
import time
from collections.abc import Generator, Iterator
from typing import Any

import pytest

_KEY = "cpu_seconds"
_START = pytest.StashKey[tuple[float, tuple[int, float] | None]]()


_TICKS = os.sysconf("SC_CLK_TCK")
_measured: set[str] = set()  # the kinds of test this process has measured: any, database


def _cpu() -> float:
    """This process's CPU seconds and those of its children that ended."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _backend() -> tuple[int, float] | None:
    """The default connection's PostgreSQL backend and its CPU seconds so far, if the
    connection is open and the backend is a process of this machine."""
    from django.db import connection

    raw = connection.connection
    if raw is None:
        return None
    pid = raw.info.backend_pid
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return pid, (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


def _backend_seconds(start: tuple[int, float] | None) -> float:
    end = _backend()
    if end is None:
        return 0.0
    if start is None or start[0] != end[0]:
        return end[1]  # the backend started during the test: all of it is the test's
    return end[1] - start[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="print the N tests that used the most CPU seconds (0 for all), and the total",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # Setup, call and teardown, as --durations counts them; figures go on the reports.
    item.stash[_START] = (_cpu(), _backend())
    yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    start = item.stash.get(_START, None)
    if call.when == "teardown" and start is not None:
        seconds = _cpu() - start[0] + _backend_seconds(start[1])
        report.user_properties.append((_KEY, round(seconds, 3)))
        report.user_properties.append(("cpu_worker", os.environ.get("PYTEST_XDIST_WORKER", "")))
        # The first test a process runs pays its warm-up, and the first that uses the
        # database pays that database (a migrate or a copy): tests/cpu_table.py does not
        # record either figure as the test's own.
        kinds = {
            "any",
            "database" if "django_db_setup" in getattr(item, "fixturenames", ()) else "any",
        }
        if kinds - _measured:
            report.user_properties.append(("cpu_first", True))
            _measured.update(kinds)
    return report


class _Collector:
    def __init__(self, count: int) -> None:
        self.count = count
        self.seconds: dict[str, float] = {}
        self.workers: dict[str, float] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        properties: dict[str, Any] = dict(report.user_properties)
        if _KEY in properties:
            self.seconds[report.nodeid] = properties[_KEY]
            worker = properties.get("cpu_worker") or "-"
            self.workers[worker] = self.workers.get(worker, 0.0) + properties[_KEY]

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.seconds:
            return
        ranked = sorted(self.seconds.items(), key=lambda pair: pair[1], reverse=True)
        shown = ranked if self.count == 0 else ranked[: self.count]
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", f"slowest {len(shown)} tests by CPU seconds")
        for nodeid, seconds in shown:
            write(f"{seconds:8.2f}s cpu  {nodeid}")
        workers = ", ".join(f"{name} {total:.1f}" for name, total in sorted(self.workers.items()))
        write(
            f"tests' CPU in all: {sum(self.seconds.values()):.1f}s over {len(self.seconds)}"
            f" tests (per worker: {workers}; start-up and collection not included)"
        )


def pytest_configure(config: pytest.Config) -> None:
    count = config.getoption("--cpu-durations")
    # Under xdist only the controller prints; its workers only attach their figures.
    if count is not None and not os.environ.get("PYTEST_XDIST_WORKER"):
        config.pluginmanager.register(_Collector(count), "cpu_report_collector")
