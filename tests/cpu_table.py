"""The tests recorded as costly, and `make test-fast`'s selection by them (ADR 0113).

`tests/test_cpu_seconds.json` holds the CPU seconds (`--cpu-durations`' figure: the test's
process, the processes it waited for and its PostgreSQL backend) of every test that took at
least `RECORD_FLOOR` when last recorded. `--max-test-cpu=SECONDS` deselects the tests it
records above SECONDS: `make test-fast` runs the rest, the inner loop, in under a minute. A
test the table does not name (new, or cheaper than the floor) is run. `make test` runs every
test whatever the table says.

`--record-test-cpu` rewrites the entries of the tests that ran (those now under the floor
leave it) and drops the tests that no longer exist: those of files that no longer exist, and
those a file collected whole (not named by a `file::test` argument) no longer holds; the
others keep their figures: `make test PYTEST_ARGS=--record-test-cpu` records the whole
suite. The first test each process runs is not recorded: it also pays the worker's database
copy and warm-up, which are not its own.

Loaded by `-p tests.cpu_table` (pyproject's addopts); it does nothing unless an option is
given.
"""

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

TABLE_FILE = Path(__file__).resolve().parent / "test_cpu_seconds.json"
# Below this a test is not recorded (most of the suite): the table stays a few hundred lines.
RECORD_FLOOR = 0.1


def load_table(path: Path = TABLE_FILE) -> dict[str, float]:
    try:
        return {str(name): float(value) for name, value in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}  # no table, or a broken one: nothing is deselected


def costly(nodeids: list[str], table: dict[str, float], limit: float) -> set[str]:
    """The node ids recorded above ``limit`` CPU seconds."""
    return {nodeid for nodeid in nodeids if table.get(nodeid, 0.0) > limit}


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def updated(
    table: dict[str, float],
    measured: dict[str, float],
    exists: Any,
    collected: Iterable[str] = (),
) -> dict[str, float]:
    """``table`` with the figures of the tests measured in a run (at or above the floor;
    those below it leave the table), without the tests of files that no longer exist, and
    without those of a file the run ``collected`` whole (every test it holds, before any
    deselection) that are not among its tests any more (renamed, removed, parameters
    changed)."""
    collected = set(collected)
    whole = {_file(nodeid) for nodeid in collected}
    kept = {
        nodeid: value
        for nodeid, value in table.items()
        if nodeid not in measured
        and exists(_file(nodeid))
        and (nodeid in collected or _file(nodeid) not in whole)
    }
    kept.update(
        {nodeid: round(value, 2) for nodeid, value in measured.items() if value >= RECORD_FLOOR}
    )
    return dict(sorted(kept.items()))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--max-test-cpu",
        type=float,
        default=None,
        metavar="SECONDS",
        help="deselect the tests tests/test_cpu_seconds.json records above SECONDS of CPU",
    )
    parser.addoption(
        "--record-test-cpu",
        action="store_true",
        default=False,
        help="rewrite tests/test_cpu_seconds.json from the CPU seconds of the tests that ran",
    )


_COLLECTED_KEY = "cpu_table_collected"


def _collected_whole(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    """The node ids collected from files that were collected whole: a file an argument names
    with ``::`` was collected in part, so its missing tests tell nothing."""
    partial = {_file(str(arg)) for arg in config.args if "::" in str(arg)}
    return [item.nodeid for item in items if _file(item.nodeid) not in partial]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # First, before -m, -k and --deselect drop items: a recording run notes every test that
    # exists (an xdist worker sends them to the controller, which writes the table).
    if config.getoption("--record-test-cpu"):
        collected = _collected_whole(config, items)
        recorder = config.pluginmanager.get_plugin("test_cpu_recorder")
        if recorder is not None:
            recorder.collected.update(collected)
        if hasattr(config, "workeroutput"):
            config.workeroutput[_COLLECTED_KEY] = collected
    # Every xdist worker deselects the same tests from the same table, as with -k.
    limit = config.getoption("--max-test-cpu")
    if limit is None:
        return
    dropped = costly([item.nodeid for item in items], load_table(), limit)
    if dropped:
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid in dropped])
        items[:] = [item for item in items if item.nodeid not in dropped]


class _Recorder:
    def __init__(self) -> None:
        self.measured: dict[str, float] = {}
        self.collected: set[str] = set()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # An xdist worker's collection (each worker collects every test).
        self.collected.update(getattr(node, "workeroutput", {}).get(_COLLECTED_KEY, ()))

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        properties = dict(report.user_properties)
        if "cpu_seconds" in properties and not properties.get("cpu_first"):
            self.measured[report.nodeid] = float(properties["cpu_seconds"])

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        root = session.config.rootpath
        table = updated(
            load_table(), self.measured, lambda name: (root / name).exists(), self.collected
        )
        TABLE_FILE.write_text(json.dumps(table, indent=0) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    # Under xdist the controller sees every worker's reports; a worker writes nothing.
    if config.getoption("--record-test-cpu") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(), "test_cpu_recorder")
