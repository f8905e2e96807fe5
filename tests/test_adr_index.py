"""docs/adr/README.md indexes every ADR by area (issue 29 item 6): none is left out, and
every link leads to a record."""

import re
from pathlib import Path

ADR = Path(__file__).resolve().parent.parent / "docs" / "adr"


def test_every_adr_is_indexed_once_and_every_link_exists() -> None:
    records = sorted(path.name for path in ADR.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert len(records) > 40
    links = re.findall(r"\]\(([^)]+\.md)\)", (ADR / "README.md").read_text(encoding="utf-8"))
    assert sorted(links) == records
