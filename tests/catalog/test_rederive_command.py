"""``manage.py rederive``: the command itself, not only the service it calls."""

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
@pytest.mark.parametrize("verbosity", [1, 2])
def test_rederive_command_runs_and_reports_progress_when_verbose(verbosity: int) -> None:
    out = io.StringIO()
    call_command("rederive", verbosity=verbosity, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "rederive: claimed 0, derived 0, failed 0"
    assert ("derived 0 failed 0" in lines) == (verbosity >= 2)
