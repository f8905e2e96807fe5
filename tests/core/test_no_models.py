"""core/ is a toolbox, not an app: it defines no models (ADR 0066)."""

import ast
import importlib
import pkgutil
from pathlib import Path

from django.apps import apps

import core

CORE = Path(core.__file__).resolve().parent


def test_core_modules_import_and_define_no_model() -> None:
    names = [info.name for info in pkgutil.walk_packages(core.__path__, "core.")]
    assert "core.problems" in names and "core.admin_base" in names
    for name in names:
        importlib.import_module(name)  # a model here would need an app: import fails
    in_core = [
        m.__name__
        for m in apps.get_models(include_auto_created=True)
        if m.__module__.startswith("core.")
    ]
    assert in_core == []


def test_no_class_in_core_derives_from_a_model() -> None:
    # Abstract models too (the registry does not list them): a base class named *Model
    # taken from django.db.models.
    found = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    text = ast.unparse(base)
                    if text in ("models.Model", "Model") or text.endswith(".models.Model"):
                        found.append(f"{path.name}: {node.name}")
    assert found == []
