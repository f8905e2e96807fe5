"""Every setting `make run` reads from the environment is named in README.md, which is where
`make run` is described: LINEAGE_CONSUMER_PORT was only in a table of docs/ingest.md, so a
reader whose consumer port was taken could not find what moves it (issue 39)."""

import re

from tests.docs.blocks import ROOT

RUN_LOCAL = ROOT / "scripts" / "run_local.py"
READ = re.compile(r"""environ\.get\("([A-Z][A-Z0-9_]+)"|env\.get\("([A-Z][A-Z0-9_]+)\"""")
# The supervision tests point it at a state folder of their own; no reader sets it.
FOR_TESTS = {"MAKE_RUN_DIR"}


def test_every_setting_make_run_reads_is_named_in_the_readme() -> None:
    read = {name for pair in READ.findall(RUN_LOCAL.read_text()) for name in pair if name}
    assert {"PORT", "HOST", "LINEAGE_CONSUMER_PORT"} <= read  # the pattern still finds them
    readme = (ROOT / "README.md").read_text()
    assert {name for name in read - FOR_TESTS if f"`{name}" not in readme} == set()
