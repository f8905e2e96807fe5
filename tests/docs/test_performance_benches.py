"""docs/performance.md points each figure at the bench that prints it: every bench it names
is in bench/, and takes the options the page gives it.

A figure is only as good as the command that prints it again. The page attributed
callgrind's instruction counts to ``bench/batch_cpu.py``, which prints CPU time; its
figures from harnesses that were not kept are now marked *one-off*, and this keeps the
benches and options it does name real (reading each bench's source, not running it).
"""

import ast
import re
from pathlib import Path

from tests.docs.blocks import ROOT

PERFORMANCE = ROOT / "docs" / "performance.md"
# A code span that runs a bench: `bench/read.py --small`, `python -m bench.ingest`.
BENCH = re.compile(r"\bbench[/.](\w+)(?:\.py)?((?:\s+--[\w-]+)*)")


def named_benches() -> dict[str, set[str]]:
    """Each bench the page names, with the options it gives it anywhere."""
    found: dict[str, set[str]] = {}
    for span in re.findall(r"`([^`]+)`", PERFORMANCE.read_text()):
        for name, flags in BENCH.findall(span):
            found.setdefault(name, set()).update(flags.split())
    return found


def options(path: Path) -> set[str]:
    """The ``--options`` a bench's argparse declares (string constants passed to a call)."""
    declared = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            declared |= {
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant) and str(arg.value).startswith("--")
            }
    return declared


def test_every_bench_the_page_names_exists_with_the_options_it_gives() -> None:
    benches = named_benches()
    assert {"read", "ingest", "batch_cpu", "server_floor"} <= set(benches)
    for name, flags in benches.items():
        path = ROOT / "bench" / f"{name}.py"
        assert path.is_file(), f"docs/performance.md names bench/{name}.py"
        assert flags <= options(path), f"bench/{name}.py lacks {flags - options(path)}"


def test_instruction_counts_are_marked_one_off() -> None:
    """No kept bench counts instructions: each paragraph that quotes a count marks it so."""
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*- )", PERFORMANCE.read_text()):
        if "instructions" in paragraph:
            assert "*one-off*" in paragraph, paragraph
