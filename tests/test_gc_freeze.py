"""The pytest process's garbage collector (tests/gc_freeze.py, ADR 0199): on while tests run,
with what collection built frozen out of its reach."""

import gc


def test_the_collector_runs_during_the_tests() -> None:
    # Off while the suite is collected only: a test's own cycles are collected as before.
    assert gc.isenabled()


def test_what_collection_built_is_frozen() -> None:
    # Django, DRF, Hypothesis and every collected module: hundreds of thousands of objects
    # (about 130,000 for this file alone), never walked again by a full collection.
    assert gc.get_freeze_count() > 50_000
