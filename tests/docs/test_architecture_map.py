"""docs/architecture.md's table of the catalog's packages is the map a new developer reads to
find where to change something: each row that lists its package's modules names every one
of them, so a module added without a word there (a namespace purge, retirement, webhooks,
the demo: all missing once) fails here, naming the row and the module."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The rows that name their modules one by one; `facets/` ("one module per facet") and
# `admin/` ("one module per area") describe theirs by rule instead.
LISTED = ("names", "models", "lineage", "reads", "picture", "front", "services", "notify")
ROW = re.compile(r"^\s*\| `(?P<package>\w+)/` \| (?P<holds>[^|]*) \|")


def rows() -> dict[str, str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return {m["package"]: m["holds"] for line in text.splitlines() if (m := ROW.match(line))}


def modules(package: str) -> list[str]:
    folder = ROOT / "catalog" / package
    found = [path.stem for path in folder.glob("*.py") if path.stem != "__init__"]
    found += [f"{path.name}/" for path in folder.iterdir() if (path / "__init__.py").exists()]
    return sorted(found)


def test_each_catalog_package_row_names_every_module_of_its_package() -> None:
    table = rows()
    assert set(LISTED) <= set(table), sorted(set(LISTED) - set(table))
    unnamed = [
        f"catalog/{package}/{module}"
        for package in LISTED
        for module in modules(package)
        if f"`{module}`" not in table[package]
    ]
    assert unnamed == [], f"docs/architecture.md's table does not name: {unnamed}"
