"""The tests recorded as costly, and `make test-fast`'s selection by them (ADR 0113).

`tests/test_cpu_seconds.json` holds the CPU seconds (`--cpu-durations`' figure: the test's
process, the processes it waited for and its PostgreSQL backend) of every test that took at
least `RECORD_FLOOR` when last recorded. `--max-test-cpu=SECONDS` deselects the tests it
records above SECONDS: `make test-fast` runs the rest, the inner loop, in under a minute. A
test the table does not name (new, or cheaper than the floor) is run. `make test` runs every
test whatever the table says.

`--record-test-cpu` rewrites the entries of the tests that ran (those now under the floor
leave it) and drops the tests of files that no longer exist; the others keep their figures:
`make test PYTEST_ARGS=--record-test-cpu` records the whole suite. The first test each
process runs is not recorded: it also pays the worker's database copy and warm-up, which are
not its own.

Loaded by `-p tests.cpu_table` (pyproject's addopts); it does nothing unless an option is
given.
"""

import json
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


def updated(table: dict[str, float], measured: dict[str, float], exists: Any) -> dict[str, float]:
    """``table`` with the figures of the tests measured in a run (at or above the floor;
    those below it leave the table) and without the tests of files that no longer exist."""
    kept = {
        nodeid: value
        for nodeid, value in table.items()
        if nodeid not in measured and exists(nodeid.split("::", 1)[0])
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
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
        table = updated(load_table(), self.measured, lambda name: (root / name).exists())
        TABLE_FILE.write_text(json.dumps(table, indent=0) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    # Under xdist the controller sees every worker's reports; a worker writes nothing.
    if config.getoption("--record-test-cpu") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(), "test_cpu_recorder")
