"""docs/architecture.md, "The import rules": an import inside a function is kept only where a
comment says why (``AppConfig.ready()``, a migration, a slow optional dependency).

Every function of the project's packages (tests/test_import_rules.py's walk: migrations
aside) is read. An import in it passes when it is in ``ready()``, when it sits in a ``try``
that catches ``ImportError`` (the code says the dependency is optional), or when a comment
is on its line or in the comment lines right above it (other imports between). That it is
never a way round a circle is tests/test_import_rules.py's: a function's import is an
arrow there, and any circle fails.
"""

import ast
import re
from collections.abc import Iterable, Iterator

from tests.test_import_rules import project_modules

IMPORTS = ast.Import | ast.ImportFrom
FUNCTIONS = ast.FunctionDef | ast.AsyncFunctionDef


def _optional(function: ast.AST) -> set[int]:
    """The lines of imports inside a ``try`` that catches ``ImportError``."""
    lines = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Try) and any(
            "ImportError" in ast.unparse(handler.type or ast.Name("BaseException"))
            or "ModuleNotFoundError" in ast.unparse(handler.type or ast.Name("BaseException"))
            for handler in node.handlers
        ):
            lines |= {
                n.lineno for stmt in node.body for n in ast.walk(stmt) if isinstance(n, IMPORTS)
            }
    return lines


# Markers for the tools, which say nothing of why.
_MARKER = re.compile(r"#\s*(noqa(:\s*[A-Z0-9, ]+)?|type:\s*ignore(\[[^\]]*\])?)\s*$")


def _says(comment: str) -> bool:
    return bool(comment.strip("# ")) and not _MARKER.match(comment.strip())


def _commented(lines: list[str], lineno: int) -> bool:
    line = lines[lineno - 1]
    if "#" in line and _says(line[line.index("#") :]):
        return True
    index = lineno - 2
    while index >= 0:
        text = lines[index].strip()
        if text.startswith("#") and _says(text):
            return True
        if not text.startswith(("import ", "from ")):
            return False
        index -= 1
    return False


def unexplained(modules: Iterable[tuple[str, str]]) -> Iterator[str]:
    for name, source in modules:
        tree = ast.parse(source)
        lines = source.splitlines()
        for function in ast.walk(tree):
            if not isinstance(function, FUNCTIONS) or function.name == "ready":
                continue
            optional = _optional(function)
            for statement in function.body:
                for node in ast.walk(statement):
                    if isinstance(node, FUNCTIONS):
                        continue  # walked on its own
                    if (
                        isinstance(node, IMPORTS)
                        and node.lineno not in optional
                        and not _commented(lines, node.lineno)
                    ):
                        yield f"{name}:{node.lineno}: {ast.unparse(node)}"


def _sources() -> Iterator[tuple[str, str]]:
    for name, path in sorted(project_modules().items()):
        yield name, path.read_text(encoding="utf-8")


def test_every_import_inside_a_function_says_why() -> None:
    assert sorted(set(unexplained(_sources()))) == []


def test_a_planted_unexplained_import_is_named() -> None:
    planted = """
def ok():
    # Why: a slow optional dependency.
    import numpy
    try:
        import grandalf
    except ImportError:
        return None

def bad():
    x = 1
    from ingest import views
    import json  # noqa: F401
    return x
"""
    assert list(unexplained([("planted", planted)])) == [
        "planted:12: from ingest import views",
        "planted:13: import json",
    ]
