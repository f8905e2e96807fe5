"""The WSGI entry point leaves what start-up built out of the garbage collector's reach."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_entry_point_freezes_what_start_up_built() -> None:
    # A fresh interpreter: in this one, whatever imported config.wsgi first decides.
    code = (
        "import gc\n"
        "before = gc.get_freeze_count()\n"
        "from config.wsgi import application\n"
        "print(before, gc.get_freeze_count())\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    output = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    before, after = map(int, output.stdout.split())
    assert before == 0
    assert after > 50_000  # Django, DRF and our modules: not a handful of objects
