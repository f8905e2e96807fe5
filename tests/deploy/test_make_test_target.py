"""README, "Two commands": what `make test` does, in the order the README says it.

tests/deploy/test_install.py checks that it installs from the lock and checks the lock;
this checks the rest of the README's sentences against the Makefile and the scripts it
runs: the local services started when installed but stopped, then ruff, mypy, the
migrations check and pytest; tests marked ``slow`` left out; pytest on one worker per core
plus two, at most four, with ``--dist loadfile``; and the chromium the browser test needs.
"""

import os
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.deploy.rendering import ROOT


def _recipe(target: str) -> str:
    makefile = (ROOT / "Makefile").read_text()
    return makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]


def test_make_test_starts_the_services_checks_the_lock_then_runs_checks_and_pytest() -> None:
    recipe = _recipe("test")
    prerequisites, *lines = recipe.splitlines()
    assert prerequisites.split() == ["install-dev", "browser"]
    commands = [line.strip().lstrip("@") for line in lines]
    assert commands[0] == "scripts/ensure_services.sh"
    assert commands[1] == "$(UV) lock --check"
    assert commands[2].startswith("scripts/check_and_test.sh $(BIN) $(XDIST)")
    script = (ROOT / "scripts" / "check_and_test.sh").read_text()
    for check in (
        '"$BIN/ruff" check .',
        '"$BIN/ruff" format --check .',
        '"$BIN/mypy" config core ingest catalog api',
        "manage.py makemigrations --check --dry-run",
        '"$BIN/python" -m pytest',
    ):
        assert check in script, check


def test_ensure_services_starts_only_what_is_installed_and_not_pointed_elsewhere() -> None:
    script = (ROOT / "scripts" / "ensure_services.sh").read_text()
    assert 'if [ -z "${DATABASE_URL:-}" ] && ! pg_up; then' in script
    assert "command -v pg_ctlcluster" in script
    assert 'if [ -z "${REDIS_URL:-}" ] && ! redis_up; then' in script
    assert "command -v redis-server" in script
    assert script.rstrip().endswith("exit 0")  # a machine without them: the tests say so


def test_slow_tests_are_left_out_unless_asked() -> None:
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    assert pytest_options["ini_options"]["addopts"].endswith("-m 'not slow'")


def _workers(tmp_path: Path, cores: int, extra: tuple[str, ...] = ()) -> str:
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    nproc = shim / "nproc"
    nproc.write_text(f"#!/bin/sh\necho {cores}\n")
    nproc.chmod(nproc.stat().st_mode | stat.S_IEXEC)
    result = subprocess.run(
        [
            "make",
            "-s",
            "--eval",
            "print-xdist: ; @printf '%s\\n' '$(XDIST)'",
            "print-xdist",
            *extra,
        ],
        cwd=ROOT,
        env={**os.environ, "PATH": f"{shim}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.strip()


@pytest.mark.parametrize(("cores", "workers"), [(1, 3), (2, 4), (3, 4), (16, 4)])
def test_pytest_runs_one_worker_per_core_plus_two_at_most_four(tmp_path, cores, workers) -> None:
    assert _workers(tmp_path, cores) == f"-n {workers} --dist loadfile"


def test_test_fast_runs_one_worker_per_core_at_most_four() -> None:
    assert (
        "FAST_XDIST ?= -n auto --maxprocesses=4 --dist loadfile" in (ROOT / "Makefile").read_text()
    )
    assert (
        _recipe("test-fast")
        .split("\n")[2]
        .strip()
        .startswith("$(BIN)/python -m pytest $(FAST_XDIST)")
    )


def test_workers_chooses_the_number(tmp_path) -> None:
    assert _workers(tmp_path, 2, ("WORKERS=7",)) == "-n 7 --dist loadfile"
