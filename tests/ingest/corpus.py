"""Which corpus files are complete events, read from the corpus's own SOURCES.md."""

from dataclasses import dataclass
from pathlib import Path

COMPLETE_KINDS = ("real-captured", "hand-written", "complete-example", "validation-fixture")
# Files that are deliberately invalid (SOURCES.md: "INVALID on purpose"), or not events at all.
INVALID_ON_PURPOSE = "INVALID on purpose"
NOT_AN_EVENT = {"python-client/nominal_time_without_end.json"}  # a bare nominalTime facet


@dataclass(frozen=True)
class CorpusFile:
    path: str
    kind: str
    parses: bool
    invalid_on_purpose: bool


def corpus_files(root: Path) -> list[CorpusFile]:
    files = []
    for line in (root / "SOURCES.md").read_text().splitlines():
        if not line.startswith("| `"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        path, kind, parses, description = cells[0].strip("`"), cells[5], cells[6], cells[-1]
        if not kind.startswith(COMPLETE_KINDS) or path in NOT_AN_EVENT:
            continue
        files.append(CorpusFile(path, kind, parses == "parses", INVALID_ON_PURPOSE in description))
    return files
