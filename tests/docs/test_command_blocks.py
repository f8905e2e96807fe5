"""Every command block of README.md and docs/*.md, followed literally (issue 39).

A command block is a fence marked ``sh``, ``bash``, ``console`` or ``shell`` (of README.md,
docs/*.md and the collector's README, its quick start). Each one runs,
a doc's blocks in order in one bash (set -euo pipefail: what one exports the next sees),
against the shipped web server on the test database with the demo loaded
(``manage.py load_demo``). A block that cannot run on this machine (a Kubernetes cluster,
Spark, a producer from PyPI, a process that serves until stopped) carries
``<!-- not run: REASON -->`` right before its fence. An untyped fence or an indented code
block fails: it hides whether it is commands (``sh``) or not (``text``, ``yaml``...).

What the harness puts in for a reader's machine, and nothing else:
- ``http://localhost:8000`` and ``http://127.0.0.1:8000`` (make run's address) are the
  test server's; ``lc_ingest_...`` and ``lc_read_...`` are tokens of that scope;
- ``curl`` fails on an HTTP error (``--fail-with-body``), so a 401 or 404 fails the block;
- ``pip install REQUIREMENT...`` is checked, not run (tests/docs/installed.py): each
  requirement must be installed in the test environment, whose ``python`` is then first on
  PATH, as after a real install;
- the blocks run in a scratch folder that links the repository's files, with the caller's
  PATH minus the test environment's bin folder: ``python manage.py`` is the machine's Python,
  as for a reader who did not activate .venv.
"""

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from catalog.services.demo import load_demo
from ingest.services import create_token
from tests.docs.blocks import ROOT, Block, blocks, document_id, documents, problems, runnable
from tests.faults.processes import current_database_url, shipped_web_server
from tests.producers.conftest import on_test_database

VENV_BIN = Path(sys.executable).parent
# A doc's blocks together; they take a few seconds (a block that serves until stopped is
# marked instead, and this ends it rather than the suite's timeout). deploy.md's run a dozen
# manage.py commands at 4-5 CPU s of start-up each: at a load of 18 on two cores they took
# over 60 s, so the bound is generous, still under the suite's 300 s per test.
BLOCKS_SECONDS = 180
SHELL_PRELUDE = """\
set -euo pipefail
trap 'echo "failed in the block at $LC_DOCS_BLOCK" >&2' ERR
curl() { command curl --fail-with-body --silent --show-error "$@"; }
pip() {
  [ "$1" = install ] || { echo "the harness checks pip install only" >&2; return 2; }
  shift
  "$LC_DOCS_PYTHON" "$LC_DOCS_INSTALLED" "$@"
  export PATH="$LC_DOCS_VENV_BIN:$PATH"
}
"""


@dataclass(frozen=True)
class Catalog:
    url: str
    ingest_token: str
    read_token: str
    database_url: str


@pytest.fixture(scope="module")
def catalog(django_db_setup: None, django_db_blocker: Any) -> Iterator[Catalog]:
    """The demo in the test database (written outside any test transaction, so the server
    sees it; flushed after) and the shipped web server on it."""
    with django_db_blocker.unblock():
        on_test_database()
        try:
            load_demo(force=True)
            ingest_token = create_token("docs ingest", "ingest")[1]
            read_token = create_token("docs read", "read")[1]
            with shipped_web_server() as url:
                yield Catalog(url, ingest_token, read_token, current_database_url())
        finally:
            call_command("flush", interactive=False, verbosity=0)
            connection.close()


def script(doc_blocks: list[Block], catalog: Catalog) -> str:
    substitutions = {
        "http://localhost:8000": catalog.url,
        "http://127.0.0.1:8000": catalog.url,
        "lc_ingest_...": catalog.ingest_token,
        "lc_read_...": catalog.read_token,
    }
    parts = [SHELL_PRELUDE]
    for block in doc_blocks:
        text = block.text
        for placeholder, value in substitutions.items():
            text = text.replace(placeholder, value)
        parts.append(f"LC_DOCS_BLOCK={block.where}\n{text}")
    return "\n".join(parts)


def reader_environment(catalog: Catalog) -> dict[str, str]:
    """The caller's environment as a reader's shell has it: no activated .venv, no pytest or
    Django settings of the test run; the catalog's database."""
    path = [entry for entry in os.environ["PATH"].split(os.pathsep) if Path(entry) != VENV_BIN]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST", "DJANGO_SETTINGS", "VIRTUAL_ENV"))
    }
    env.update(
        PATH=os.pathsep.join(path),
        DATABASE_URL=catalog.database_url,
        LC_DOCS_PYTHON=sys.executable,
        LC_DOCS_INSTALLED=str(Path(__file__).with_name("installed.py")),
        LC_DOCS_VENV_BIN=str(VENV_BIN),
    )
    return env


def scratch_checkout(folder: Path) -> Path:
    """The repository's files linked into ``folder``: blocks run "from the repository's root"
    and what they write (``> out.ndjson``) lands in the scratch folder, not the checkout."""
    for entry in ROOT.iterdir():
        if entry.name != ".git":
            (folder / entry.name).symlink_to(entry)
    return folder


@pytest.mark.django_db
@pytest.mark.parametrize("doc", documents(), ids=document_id)
def test_every_command_block_runs_or_says_why_not(
    doc: Path, catalog: Catalog, tmp_path: Path
) -> None:
    doc_blocks = blocks(doc)
    assert problems(doc_blocks) == []
    to_run = runnable(doc_blocks)
    if not to_run:
        return
    shell = subprocess.Popen(
        ["bash", "-c", script(to_run, catalog)],
        cwd=scratch_checkout(tmp_path),
        env=reader_environment(catalog),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a block's background processes end with the shell's group
    )
    try:
        stdout, stderr = shell.communicate(timeout=BLOCKS_SECONDS)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
    assert shell.returncode == 0, f"{stderr[-3000:]}\n--- stdout ---\n{stdout[-2000:]}"
