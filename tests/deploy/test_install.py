"""`make run` installs the service only, `make test` the toolchain too, both from uv.lock."""

import re
import tomllib

from tests.deploy.rendering import ROOT

# Test, type-checking and benchmark tools: none of them may be installed by `make run`.
TOOLCHAIN = {"pytest", "mypy", "selenium", "schemathesis", "helm-python-sdk", "ruff", "gunicorn"}


def _lock() -> dict[str, dict]:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    return {package["name"]: package for package in lock["package"]}


def _closure(packages: dict[str, dict], roots: list[str], extras: tuple[str, ...] = ()) -> set[str]:
    """Every locked package that installing ``roots`` (with ``extras`` of the roots) pulls in."""
    seen: set[str] = set()
    todo = [(name, extras) for name in roots]
    while todo:
        name, wanted = todo.pop()
        if name in seen and not wanted:
            continue
        seen.add(name)
        package = packages[name]
        requirements = list(package.get("dependencies", []))
        for extra in wanted:
            requirements += package.get("optional-dependencies", {}).get(extra, [])
        for requirement in requirements:
            todo.append((requirement["name"], tuple(requirement.get("extra", []))))
    return seen


def test_the_lock_covers_pyproject_and_pins_one_version_each() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = _lock()
    for requirement in project["project"]["dependencies"]:
        name = re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower()
        assert name in packages, f"{name} is in pyproject.toml but not in uv.lock"
        assert packages[name]["version"], name
    assert project["tool"]["uv"]["required-version"] == "==0.13.8"


def test_make_run_installs_the_service_without_the_toolchain() -> None:
    packages = _lock()
    runtime = _closure(packages, ["lineage-catalog"], ("local",))
    assert runtime >= {"django", "celery", "granian", "google-re2", "confluent-kafka"}
    assert "watchfiles" in runtime  # `make run` restarts the web server on code changes
    assert not runtime & TOOLCHAIN
    assert "lineage-collector" not in runtime
    tests = _closure(packages, ["lineage-catalog", "lineage-collector"], ("dev",))
    assert tests >= TOOLCHAIN and "moto" in tests  # the collector's own test dependencies


def test_both_commands_install_from_the_lock_and_ci_checks_it() -> None:
    makefile = (ROOT / "Makefile").read_text()
    install = makefile.split("\ninstall:", 1)[1].split("\n\n", 1)[0]
    assert "sync --frozen" in install and "--extra dev" not in install
    install_dev = makefile.split("\ninstall-dev:", 1)[1].split("\n\n", 1)[0]
    assert "sync --frozen --all-packages --extra dev --extra local" in install_dev
    test = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert test.startswith(" install-dev") and "$(UV) lock --check" in test
    assert "pip install" not in install + install_dev
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("make test")
