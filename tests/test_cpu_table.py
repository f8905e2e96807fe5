"""`make test-fast`'s selection by recorded CPU seconds (tests/cpu_table.py, ADR 0113)."""

import json
from pathlib import Path

from tests.cpu_table import (
    RECORD_FLOOR,
    TABLE_FILE,
    _collected_whole,
    costly,
    load_table,
    updated,
)

ROOT = Path(__file__).resolve().parent.parent


def test_only_tests_recorded_above_the_limit_are_left_out() -> None:
    table = {"a.py::slow": 0.9, "a.py::edge": 0.2, "b.py::cheap": 0.12}
    ids = ["a.py::slow", "a.py::edge", "b.py::cheap", "c.py::new"]
    assert costly(ids, table, 0.2) == {"a.py::slow"}  # at the limit stays; unknown stays
    assert costly(ids, table, 0.1) == {"a.py::slow", "a.py::edge", "b.py::cheap"}
    assert costly(ids, {}, 0.0) == set()


def test_a_record_updates_what_ran_and_keeps_the_rest() -> None:
    table = {"a.py::slow": 0.9, "a.py::faster": 0.5, "gone.py::t": 3.0, "b.py::kept": 0.4}
    measured = {"a.py::slow": 1.234, "a.py::faster": RECORD_FLOOR / 2, "c.py::new": 0.3}
    assert updated(table, measured, lambda name: name != "gone.py") == {
        "a.py::slow": 1.23,  # measured again
        "b.py::kept": 0.4,  # did not run: its figure stays
        "c.py::new": 0.3,
    }  # "faster" fell under the floor and left; a deleted file's tests left


def test_a_record_drops_the_tests_a_file_collected_whole_no_longer_holds() -> None:
    table = {
        "a.py::renamed": 0.9,
        "a.py::kept[1]": 0.5,
        "a.py::gone[2]": 0.4,  # a parameter no longer there
        "b.py::not_collected": 0.3,  # its file was not collected in this run
    }
    collected = ["a.py::kept[1]", "a.py::new_name", "c.py::other"]
    assert updated(table, {}, lambda name: True, collected) == {
        "a.py::kept[1]": 0.5,
        "b.py::not_collected": 0.3,
    }
    # Without a collection (an older caller, or nothing collected whole) nothing is dropped.
    assert updated(table, {}, lambda name: True) == table


def test_a_file_named_with_a_test_is_not_collected_whole() -> None:
    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    class Config:
        args = ["a.py::one", "b.py", "tests/c"]

    items = [Item("a.py::one"), Item("b.py::two"), Item("tests/c/d.py::three")]
    assert _collected_whole(Config(), items) == ["b.py::two", "tests/c/d.py::three"]  # type: ignore[arg-type]


def test_the_committed_table_is_readable_and_names_existing_files() -> None:
    table = load_table()
    assert table == json.loads(TABLE_FILE.read_text())
    assert len(table) > 100
    assert all(value >= RECORD_FLOOR for value in table.values())
    assert all((ROOT / nodeid.split("::", 1)[0]).is_file() for nodeid in table)


def test_a_broken_table_deselects_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "table.json"
    broken.write_text("[1, 2")
    assert load_table(broken) == {}
    assert load_table(tmp_path / "missing.json") == {}
