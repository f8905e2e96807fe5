"""The import rules of the project's packages (ADR 0066, ADR 0073), checked.

Layers point one way: api → catalog → ingest → core. Each may import itself and what is
below it, never what is above. The collector is a package of its own: it imports none of
them and none of them imports it. config (settings, URLs, the server) wires everything and
may import anything. Inside ``catalog`` each package is one idea with its own rule
(``CATALOG``, and docs/architecture.md says the same in words). No module imports a name
from its own package's ``__init__``, and there is no import circle anywhere in the house.

Every ``import`` statement counts, at the top of a module or inside a function or an
``if TYPE_CHECKING:`` block: an import that only runs later is still an arrow, and a
circle dodged inside a function is still a circle.
"""

import ast
import functools
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
# None today: api.marquez.hosts, which extends the project's URL map on a Marquez host (ADR
# 0068), reads it through ROOT_URLCONF as Django does, not by importing config.urls.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


# What each part of the catalog may import of the catalog, besides itself (ADR 0073). A part
# is a package (``catalog.lineage``) or a top-level module (``catalog.tasks``).
CATALOG: dict[str, set[str]] = {
    "catalog.names": set(),  # pure: how names are spelled
    "catalog.facets": {"catalog.names"},
    "catalog.models": {"catalog.names", "catalog.facets"},
    "catalog.lineage": {"catalog.models", "catalog.names", "catalog.facets"},
    "catalog.reads": {"catalog.models", "catalog.names", "catalog.facets"},
    # The picture is drawn from what the walk returned: its request and result, no reads.
    "catalog.picture": {"catalog.lineage.request"},
    "catalog.front": {"catalog.reads", "catalog.models", "catalog.names"},
    # Notifications: the outbox derivation writes to, and the sending of it (ADR 0086).
    "catalog.notify": {"catalog.models", "catalog.names", "catalog.facets", "catalog.lineage"},
    "catalog.services": {"catalog.models", "catalog.names", "catalog.facets", "catalog.notify"},
    "catalog.management": {"catalog.services", "catalog.models", "catalog.names"},
    "catalog.tasks": {"catalog.services", "catalog.front", "catalog.notify"},
    "catalog.admin": {
        "catalog.names",
        "catalog.facets",
        "catalog.models",
        "catalog.lineage",
        "catalog.reads",
        "catalog.picture",
        "catalog.services",
        "catalog.notify",
        "catalog.permissions",
    },
    "catalog.templatetags": {"catalog.admin"},
    "catalog.apps": {"catalog.reads", "catalog.permissions"},
    "catalog.permissions": set(),
    "catalog": set(),
}
# Modules that must not touch the database, even through Django: the picture is pure layout.
NO_DATABASE = ("catalog.picture", "catalog.names", "catalog.facets")


def module_name(path: Path, package: str) -> str:
    parts = list(path.relative_to(PACKAGES[package]).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def imported_modules(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module an import statement anywhere in ``tree`` names, relative ones resolved;
    ``from package import name`` also names ``package.name`` (a submodule, if it is one)."""
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
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def project_modules() -> dict[str, Path]:
    """Every module of the project's packages (migrations aside), by dotted name."""
    modules = {}
    for package, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            if "migrations" not in path.parts:
                modules[module_name(path, package)] = path
    return modules


@functools.cache
def syntax_tree(path: Path) -> ast.AST:
    """A module's parse, once per test process: every test here walks the same few hundred
    files, and parsing them was most of each test's 0.6-0.8 CPU s (ADR 0113). The files do
    not change during a run; the trees are only read."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_graph() -> dict[str, set[str]]:
    """importer → the project modules it imports (a name resolves to its nearest module)."""
    modules = project_modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = syntax_tree(path)
        targets = set()
        for name in imported_modules(tree, module, path.name == "__init__.py"):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected components of more than one module
    (Tarjan's algorithm, iterative), each sorted, smallest name first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def part_of(module: str) -> str:
    """The catalog part a module belongs to (``catalog.lineage.graph`` → ``catalog.lineage``)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def catalog_breaks(graph: dict[str, set[str]]) -> list[str]:
    broken_rules = []
    for importer, targets in graph.items():
        if not importer.startswith("catalog"):
            continue
        part = part_of(importer)
        allowed = CATALOG[part]
        for target in targets:
            if not target.startswith("catalog") or part_of(target) == part:
                continue
            if target == "catalog.tasks" or not any(
                target == rule or target.startswith(rule + ".") for rule in allowed
            ):
                broken_rules.append(f"{importer} imports {target} ({part} may import {allowed})")
    return sorted(broken_rules)


def own_init_imports() -> list[str]:
    """``from package import name`` inside ``package`` where ``name`` is not a submodule:
    a module that takes names from its own package's ``__init__``."""
    modules = project_modules()
    found = []
    for module, path in modules.items():
        tree = syntax_tree(path)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and not node.level
                and node.module in modules
                and module.startswith(f"{node.module}.")
                # ``python -m package`` runs __main__ after the package: it is its user.
                and not module.endswith(".__main__")
            ):
                found += [
                    f"{module}: from {node.module} import {alias.name}"
                    for alias in node.names
                    if f"{node.module}.{alias.name}" not in modules
                ]
    return sorted(found)


def arrows() -> set[tuple[str, str]]:
    """(importer, imported) for every import of one project package by another module."""
    found = set()
    for package, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            if "migrations" in path.parts:
                continue  # generated, and they name the apps they depend on as strings
            module = module_name(path, package)
            tree = syntax_tree(path)
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
    assert ("catalog.models.jobs_runs", "catalog.models.identity") in found  # a top-level import


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
        "from . import sibling\nfrom ..base import thing\nimport catalog.models.webhooks\n"
    )
    assert imported_modules(tree, "core.sub.mod", is_package=False) == {
        "ingest.models",
        "ingest.models.Event",  # a submodule or a name: module_graph keeps what is a module
        "core.sub",
        "core.sub.sibling",
        "core.base",
        "core.base.thing",
        "catalog.models.webhooks",  # an `import a.b` statement
    }


def test_there_is_no_import_circle() -> None:
    graph = module_graph()
    assert len(graph) > 150  # the walk found the project
    assert cycles(graph) == []


def test_a_planted_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]
    graph = module_graph()
    graph["catalog.names.naming"] = {*graph["catalog.names.naming"], "catalog.lineage.graph"}
    assert any("catalog.names.naming" in circle for circle in cycles(graph))


def test_each_catalog_part_imports_only_what_its_rule_allows() -> None:
    graph = module_graph()
    assert set(map(part_of, (m for m in graph if m.startswith("catalog")))) == set(CATALOG)
    assert catalog_breaks(graph) == []


def test_a_planted_catalog_import_is_named() -> None:
    planted = {
        "catalog.names.rules": {"catalog.models.identity"},  # names is pure
        "catalog.lineage.graph": {"catalog.reads.search"},  # lineage and reads are apart
        "catalog.reads.search": {"catalog.lineage.graph"},
        "catalog.picture.build": {"catalog.lineage.graph"},  # the picture reads nothing
        "catalog.services.derive": {"catalog.tasks"},  # tasks are sent by name
        "catalog.admin.jobs": {"catalog.tasks"},
    }
    named = catalog_breaks(planted)
    assert len(named) == len(planted)
    assert catalog_breaks({"catalog.picture.build": {"catalog.lineage.request"}}) == []


def test_nothing_touches_the_database_where_it_must_not() -> None:
    graph = module_graph()
    modules = project_modules()
    for module, targets in graph.items():
        if module.startswith(NO_DATABASE):
            text = modules[module].read_text(encoding="utf-8")
            assert "django.db" not in text, module
            assert not {t for t in targets if t.startswith("catalog.models")}, module


def test_no_module_imports_its_own_package_init() -> None:
    assert own_init_imports() == []
