"""The code blocks of README.md and docs/*.md, as a reader sees them: fenced blocks with their
language, the `<!-- not run: REASON -->` marker before a command block, and indented code
blocks (which have no language, so they are reported to be fenced)."""

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What a reader types into a shell; every such block runs in tests/docs/test_command_blocks.py
# unless a marker says why it cannot run on this machine.
COMMAND_LANGUAGES = frozenset({"sh", "bash", "console", "shell"})
# The comment right before a fence (blank lines between allowed) that exempts a command block.
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<language>[\w+-]*)\s*$")
# A list item: its text's indentation plus 4 opens an indented code block inside it.
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")


@dataclass(frozen=True)
class Block:
    doc: str  # relative to the repository's root
    line: int  # of the opening fence (or the first indented line), 1-based
    language: str  # "" for an untyped fence, "indented" for an indented code block
    text: str
    not_run: str | None  # the marker's reason, when the doc says why it is not run

    @property
    def is_command(self) -> bool:
        return self.language in COMMAND_LANGUAGES

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def documents() -> list[Path]:
    # The collector's README is its quick start: a reader follows it from the repository's
    # root like the others.
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "collector/README.md"]


def document_id(path: Path) -> str:
    """A test id: the file's name for README.md and docs/*.md, its path otherwise."""
    return str(path.relative_to(ROOT)).removeprefix("docs/")


def problems(doc_blocks: list[Block]) -> list[str]:
    found = []
    for block in doc_blocks:
        if block.language == "":
            found.append(f"{block.where}: untyped fence: say `sh` for commands, else `text`...")
        elif block.language == "indented":
            found.append(f"{block.where}: indented code block: fence it with its language")
        elif block.is_command and block.not_run == "":
            found.append(f"{block.where}: `<!-- not run: -->` without a reason")
    return found


def runnable(doc_blocks: list[Block]) -> list[Block]:
    return [block for block in doc_blocks if block.is_command and block.not_run is None]


def blocks(path: Path) -> list[Block]:
    doc = str(path.relative_to(ROOT))
    lines = path.read_text().splitlines()
    found: list[Block] = []
    code_indent = 4  # where an indented code block starts: 4 more than the list item's text
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = FENCE.match(line)
        if fence:
            end = index + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            indent = len(fence["indent"])
            body = "\n".join(text[indent:] for text in lines[index + 1 : end])
            found.append(
                Block(doc, index + 1, fence["language"], body + "\n", _marker(lines, index))
            )
            index = end + 1
            continue
        indent = len(line) - len(line.lstrip())
        if line.strip() and indent >= code_indent and index > 0 and not lines[index - 1].strip():
            end = index
            while end < len(lines) and (
                _indent(lines[end]) >= code_indent or not lines[end].strip()
            ):
                end += 1
            body = "\n".join(text[code_indent:] for text in lines[index:end]).strip("\n")
            found.append(Block(doc, index + 1, "indented", body + "\n", _marker(lines, index)))
            index = end
            continue
        item = LIST_ITEM.match(line)
        if item:
            code_indent = item.end() + 4
        elif line.strip() and indent == 0:
            code_indent = 4
        index += 1
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _marker(lines: list[str], index: int) -> str | None:
    previous = index - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    marker = NOT_RUN.match(lines[previous]) if previous >= 0 else None
    return marker["reason"] if marker else None


def sections(path: Path) -> dict[str, list[Block]]:
    """The blocks under each `## ` heading (its text without the hashes), in order."""
    headings = [
        (number, line.removeprefix("## ").strip())
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.startswith("## ")
    ]
    found: dict[str, list[Block]] = {title: [] for _, title in headings}
    for block in blocks(path):
        above = [title for number, title in headings if number < block.line]
        if above:
            found[above[-1]].append(block)
    return found
