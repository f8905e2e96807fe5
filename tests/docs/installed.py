"""What `pip install REQUIREMENT...` in a doc's command block stands for when the block test
runs it: each requirement, with its extras' dependencies, is already installed in the test
environment (the lock's `dev` extra) at a version it allows. Exits 1 naming what is missing,
so a recipe that needs a package the doc does not install cannot pass by accident. A package
this repository builds (a uv workspace member, such as the collector) is not on PyPI: named
by its name it is refused, and installed by its folder (``./collector[extra]``) it is checked
as the project that folder holds.

Run as a script (the harness's `pip` shell function): ``python installed.py REQUIREMENT...``.
"""

import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def missing(requirement: Requirement) -> list[str]:
    """What of ``requirement`` is not installed: itself, a wrong version, or a dependency
    its extras add."""
    try:
        installed = distribution(requirement.name)
    except PackageNotFoundError:
        return [f"{requirement.name} is not installed"]
    if requirement.specifier and installed.version not in requirement.specifier:
        return [f"{requirement.name} {installed.version} is not {requirement.specifier}"]
    problems: list[str] = []
    for extra in sorted(requirement.extras):
        if extra not in (installed.metadata.get_all("Provides-Extra") or []):
            problems.append(f"{requirement.name} has no extra [{extra}]")
        for line in installed.requires or []:
            dependency = Requirement(line)
            if dependency.marker and dependency.marker.evaluate({"extra": extra}):
                problems += [f"[{extra}]: {text}" for text in missing(dependency)]
    return problems


def closure(requirements: list[Requirement]) -> set[str]:
    """The distributions installing ``requirements`` brings (their dependencies and those
    their extras add), by canonical name, as far as this environment has them."""
    found: set[str] = set()
    pending = list(requirements)
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found.add(name)
        try:
            dependencies = distribution(requirement.name).requires or []
        except PackageNotFoundError:
            continue
        for line in dependencies:
            dependency = Requirement(line)
            extras = requirement.extras or {""}
            if dependency.marker is None or any(
                dependency.marker.evaluate({"extra": extra}) for extra in extras
            ):
                pending.append(dependency)
    return found


def unpublished() -> dict[str, str]:
    """The packages this repository builds and PyPI does not hold (uv's workspace members),
    by canonical name: the folder to install each from."""
    root = Path(__file__).resolve().parents[2]
    members = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    found = {}
    for folder in members["members"]:
        project = tomllib.loads((root / folder / "pyproject.toml").read_text())["project"]
        found[canonicalize_name(project["name"])] = folder
    return found


def requirement(text: str) -> Requirement:
    """``text`` as pip reads it: a requirement, or a local folder with its extras
    (``./collector[sqlalchemy]``), read as the project that folder holds."""
    if not text.startswith((".", "/")):
        return Requirement(text)
    folder, _, extras = text.partition("[")
    project = tomllib.loads((Path(folder) / "pyproject.toml").read_text())["project"]
    return Requirement(project["name"] + (f"[{extras}" if extras else ""))


def main(arguments: list[str]) -> int:
    texts = [text for text in arguments if not text.startswith("-")]
    requirements = [requirement(text) for text in texts]
    local = unpublished()
    problems = [
        f"{text} is not on PyPI: it is this repository's {local[name]}/, installed by its path"
        for text in texts
        if not text.startswith((".", "/"))
        and (name := canonicalize_name(Requirement(text).name)) in local
    ]
    problems += [problem for requirement in requirements for problem in missing(requirement)]
    for problem in problems:
        print(f"pip install (checked, not run): {problem}", file=sys.stderr)
    return 1 if problems or not requirements else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
