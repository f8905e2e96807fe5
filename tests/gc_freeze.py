"""Each pytest process's garbage collector: off while the suite is collected, then the heap
collection built frozen (ADR 0199).

Collecting the suite builds about 345,000 tracked objects that live until the process ends
(Django, DRF, Hypothesis, every test module and item); Python's collector went over them
again and again: about a fifth of a process's collection CPU (1.1 of 5.8 s), and every full
collection during the tests walked them all again. Here the collector is off from pytest's
early start-up (before pytest-django sets Django up) until collection ends; then one
``gc.collect()`` frees what collection left in cycles and ``gc.freeze()`` moves the rest to
the permanent generation, which the collector never walks, as the web server does with its
start-up heap (core/heap.py, ADR 0132). What a test allocates is collected as before: a test
that counts what ``gc.collect()`` finds (tests/core/test_heap.py) sees its own objects only,
as it did.

Loaded by `-p tests.gc_freeze` (pyproject's addopts); `-p no:tests.gc_freeze` leaves the
collector alone, for a comparison.
"""

import gc
from collections.abc import Generator
from typing import Any

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: Any, args: Any) -> Any:
    # pytest-django sets Django up in its implementation of this hook, run inside this one.
    gc.disable()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    # Under xdist the controller collects nothing; it too turns the collector on here.
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()
        gc.enable()
