"""The facet table is the one place facets are named (issue 29 item 1, ADR 0067).

Every module of catalog/facets/ is registered; no other module of catalog/ or api/ looks
a facet up by its name (the names: every standard facet ingest validates, and every
registered one); docs/derivation.md lists the table as the registry makes it.
"""

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import catalog.facets
from catalog.facets import BY_NAME, FACETS, RUN_FACT_FACETS, kept, table_markdown
from catalog.facets.base import POSITIONS, Facet
from ingest.facets import validated_facets

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "catalog" / "facets"
# Where facets are read: the catalog (derivation, read services, admin) and both APIs.
# ingest is below the catalog (it cannot import it) and validates every standard facet
# by its schema, not by a name of its own.
SCANNED = ("catalog", "api")
HELPERS = {"base", "_numbers", "__main__"}
# Names that are also a field of Marquez's own objects (its Dataset's columnLineage), which
# the mount's shapes write, not read.
MARQUEZ_FIELDS = {"columnLineage"}


def facet_names() -> set[str]:
    return {key for _, key in validated_facets()} | set(BY_NAME)


def _mentions_facets(node: ast.AST) -> bool:
    return "facet" in ast.unparse(node).lower()


def facet_lookups(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every place ``source`` spells a facet name as a facet lookup.

    A name that cannot be an ordinary word (camelCase, snake_case: ``jobType``,
    ``processing_engine``) counts wherever it is a string, or quoted inside one (SQL's
    ``facets->'name'``). A plain word that is also a facet name (``schema``, ``parent``,
    ``version``) counts where it is looked up in something called facets: the key of a
    ``.get`` or a subscript, or an argument of a call that mentions facets."""
    found: list[tuple[int, str]] = []
    distinct = {name for name in names if name != name.lower() or "_" in name}
    words = names - distinct
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in distinct:
                found.append((node.lineno, node.value))
            else:
                found += [(node.lineno, n) for n in distinct if f"'{n}'" in node.value]
        keys: list[ast.expr] = []
        if isinstance(node, ast.Subscript) and _mentions_facets(node.value):
            keys = [node.slice]
        elif isinstance(node, ast.Call) and (
            _mentions_facets(node.func) or any(_mentions_facets(a) for a in node.args)
        ):
            keys = list(node.args)
        for key in keys:
            if isinstance(key, ast.Constant) and key.value in words:
                found.append((key.lineno, key.value))
    return sorted(set(found))


def _sources() -> list[Path]:
    paths = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts or PACKAGE in path.parents:
                continue
            paths.append(path)
    return paths


def test_no_module_outside_the_table_reads_a_facet_by_its_name():
    names = facet_names()
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in _sources()
        for line, name in facet_lookups(path.read_text(), names)
        if not (name in MARQUEZ_FIELDS and (ROOT / "api" / "marquez") in path.parents)
    ]
    assert offenders == [], "read these facets through catalog/facets/:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "source",
    [
        'job.facets.get("jobType")',
        'value = dataset.facets.get("documentation")',
        'facets["schema"]',
        '_facet(facets, "sourceCodeLocation")',
        'merge(run.facets, {"lineageCatalog_edge": {}})',
        "SQL = \"SELECT r.facets->'lineageCatalog_edge'->>'pipeline' FROM catalog_run r\"",
        'skip = ("columnLineage",)',
        'version_facets.get("parent")',
    ],
)
def test_the_scan_finds_a_facet_read_by_its_name(source):
    assert facet_lookups(source, facet_names()), source


@pytest.mark.parametrize(
    "source",
    [
        'Job.objects.select_related("parent")',
        'fields = [*JobSerializer.Meta.fields, "parent", "children"]',
        'data = {"tags": [], "version": "1"}',
        'raise ValueError("schema is not an object")',
    ],
)
def test_the_scan_leaves_ordinary_words_alone(source):
    assert facet_lookups(source, facet_names()) == []


def test_every_module_of_the_package_is_in_the_table():
    registered = {facet.name for facet in FACETS}
    for module in pkgutil.iter_modules(catalog.facets.__path__):
        if module.name in HELPERS:
            continue
        if module.name == "kept":  # the spec's unread facets, one row each
            assert {facet.name for facet in kept.KEPT} <= registered
            continue
        loaded = importlib.import_module(f"catalog.facets.{module.name}")
        assert isinstance(loaded.FACET, Facet), module.name
        assert loaded.FACET.name == loaded.NAME, module.name
        assert loaded.NAME in registered, f"catalog/facets/{module.name}.py is not in FACETS"


def test_every_declaration_is_complete():
    for facet in FACETS:
        assert set(facet.appears) <= set(POSITIONS)
        for said in (facet.extracts, facet.projects, facet.native, facet.marquez):
            assert said.strip(), facet.name


def test_a_facet_appearing_nowhere_is_refused():
    with pytest.raises(ValueError):
        Facet("x", appears=("somewhere",), extracts="-", projects="-", native="-", marquez="-")


def test_the_run_facts_are_the_five_the_model_keeps():
    assert set(RUN_FACT_FACETS) == {
        "outputStatistics",
        "inputStatistics",
        "dataQualityMetrics",
        "dataQualityAssertions",
        "subset",  # issue 41 item 6 (ADR 0092)
    }


def test_docs_derivation_lists_the_table():
    text = (ROOT / "docs" / "derivation.md").read_text()
    assert table_markdown() in text, "print it with: .venv/bin/python -m catalog.facets"
