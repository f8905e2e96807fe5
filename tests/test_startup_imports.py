"""What every process imports at start-up (ADR 0113): `django.setup()` runs the apps'
`ready()` and the admin's autodiscovery in every `manage.py` command, web server and worker
a test or an operator starts, so a heavy import there is paid by each. The picture's layout
engine (grandalf's layouts, and numpy under it) and drf-spectacular's machinery are
imported where they are used: a picture laid out, a schema generated from the URL map."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, sys
import django
django.setup()
at_setup = sorted(m for m in {heavy!r} if m in sys.modules)
import config.urls  # what the schema view and `manage.py spectacular` read first
from drf_spectacular.extensions import OpenApiAuthenticationExtension as Auth
registered = sorted(f"{{e.__module__}}.{{e.__name__}}" for e in Auth._registry)
print(json.dumps({{"at_setup": at_setup, "registered": registered}}))
"""
HEAVY = ("numpy", "grandalf.layouts", "drf_spectacular.plumbing", "drf_spectacular.extensions")


def test_setup_imports_neither_the_layout_engine_nor_the_schema_machinery() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["at_setup"] == []
    # Loading the URL map registers the bearer token scheme before any schema is generated.
    assert "api.schema.BearerTokenScheme" in found["registered"]
