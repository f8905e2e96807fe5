"""What a piece of Python prints in a fresh interpreter of the project's (the tests that must
see start-up as the server sees it: whatever imported a module first in the test's own
process would decide)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def printed(code: str, settings: str = "config.settings.test", **env: str) -> str:
    """``code``'s standard output, run with ``settings`` and ``env`` over this environment;
    a failure raises with its standard error."""
    variables = {**os.environ, "DJANGO_SETTINGS_MODULE": settings, **env}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=variables,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
