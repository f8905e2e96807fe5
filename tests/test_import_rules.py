"""The import rules of the project's packages (issue 29 item 3, ADR 0066), checked.

Layers point one way: api → catalog → ingest → core. Each may import itself and what is
below it, never what is above. The collector is a package of its own: it imports none of
them and none of them imports it. config (settings, URLs, the server) wires everything and
may import anything. Every ``import`` statement counts, at the top of a module or inside a
function or an ``if TYPE_CHECKING:`` block: an import that only runs later is still an
arrow, and a circle dodged inside a function is still a circle.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The package directory of each top-level import name of the project.
PACKAGES = {
    "core": ROOT / "core",
    "ingest": ROOT / "ingest",
    "catalog": ROOT / "catalog",
    "api": ROOT / "api",
    "config": ROOT / "config",
    "lineage_collector": ROOT / "collector" / "lineage_collector",
}
LAYERS = ("core", "ingest", "catalog", "api")
# What each package may import (besides itself and everything outside the project).
ALLOWED = {
    **{layer: set(LAYERS[: index + 1]) for index, layer in enumerate(LAYERS)},
    "lineage_collector": {"lineage_collector"},
    "config": set(PACKAGES),
}
# Arrows that break the rules today, each with the reason and the work that removes it. One
# that no longer occurs fails too, so the list cannot outlive what it excuses.
KNOWN_EXCEPTIONS = {
    ("api.marquez.hosts", "config.urls"): (
        "the Marquez host's URLconf extends the project's; issue 29 item 2 (the thin "
        "Marquez adapter) removes this dispatch back into config.urls"
    ),
}


def module_name(path: Path, package: str) -> str:
    parts = list(path.relative_to(PACKAGES[package]).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module an import statement anywhere in ``tree`` names, relative ones resolved."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
    return names


def arrows() -> set[tuple[str, str]]:
    """(importer, imported) for every import of one project package by another module."""
    found = set()
    for package, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            if "migrations" in path.parts:
                continue  # generated, and they name the apps they depend on as strings
            module = module_name(path, package)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for target in imported_modules(tree, module, path.name == "__init__.py"):
                if target.split(".")[0] in PACKAGES:
                    found.add((module, target))
    return found


def broken(found: set[tuple[str, str]]) -> list[str]:
    return sorted(
        f"{importer} imports {imported} ({importer.split('.')[0]} may import only "
        f"{', '.join(sorted(ALLOWED[importer.split('.')[0]]))})"
        for importer, imported in found
        if imported.split(".")[0] not in ALLOWED[importer.split(".")[0]]
        and (importer, imported) not in KNOWN_EXCEPTIONS
    )


def test_the_walk_sees_every_package() -> None:
    found = arrows()
    importers = {importer.split(".")[0] for importer, _ in found}
    # Each package but the collector imports some other project module (the collector
    # imports only itself), so a walk that finds none of them has looked in the wrong place.
    assert importers >= {"core", "ingest", "catalog", "api", "config", "lineage_collector"}
    assert ("catalog.models.jobs_runs", "catalog.models.querysets") in found  # a top-level import
    assert ("catalog.services.rederive_jobs", "catalog.tasks") in found  # inside a function


def test_no_import_breaks_the_layers() -> None:
    assert broken(arrows()) == []


def test_every_known_exception_still_occurs() -> None:
    assert set(KNOWN_EXCEPTIONS) <= arrows()


def test_a_planted_upward_import_is_named() -> None:
    # The rule itself, on arrows a module could plant: each breaks it and is named.
    planted = {
        ("core.problems", "ingest.models"),
        ("ingest.views", "catalog.models"),
        ("catalog.lineage.graph", "api.pagination"),
        ("api.views.catalog", "lineage_collector.events"),
        ("lineage_collector.events", "core.redaction"),
        ("core.redaction", "config.settings"),
    }
    named = broken(planted)
    assert len(named) == len(planted)
    assert named[0].startswith("api.views.catalog imports lineage_collector.events")
    assert broken({("api.views.catalog", "core.problems"), ("config.urls", "api.urls")}) == []


def test_function_level_and_relative_imports_are_arrows() -> None:
    tree = ast.parse(
        "def f():\n    from ingest.models import Event\n"
        "from . import sibling\nfrom ..base import thing\n"
    )
    assert imported_modules(tree, "core.sub.mod", is_package=False) == {
        "ingest.models",
        "core.sub",
        "core.base",
    }
