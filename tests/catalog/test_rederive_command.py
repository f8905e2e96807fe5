"""``manage.py rederive``: the command itself, not only the service it calls."""

import io
import uuid

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Job
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import canonical_dump, openlineage, store


@pytest.mark.django_db
@pytest.mark.parametrize("verbosity", [1, 2])
def test_rederive_command_runs_and_reports_progress_when_verbose(verbosity: int) -> None:
    out = io.StringIO()
    call_command("rederive", verbosity=verbosity, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "rederive: claimed 0, derived 0, failed 0"
    assert ("derived 0 failed 0" in lines) == (verbosity >= 2)


@pytest.mark.django_db
@pytest.mark.parametrize("size", ["0", "-1"])
@pytest.mark.parametrize("since", [[], ["--since", "2020-01-01T00:00:00Z"]])
def test_a_bad_batch_size_is_refused_before_the_catalog_is_emptied(
    size: str, since: list[str]
) -> None:
    """--batch-size 0 emptied the catalog and derived nothing, exit 0; -1 emptied it and
    then failed with a traceback. Refused first, the catalog as it was."""
    event = run_event(
        "COMPLETE", 0, str(uuid.uuid4()), inputs=[dataset("db", "a")], outputs=[dataset("db", "b")]
    )
    derive_events(store([openlineage(event)]))
    before = canonical_dump()
    assert Job.objects.exists()
    with pytest.raises(CommandError, match="--batch-size must be 1 or more"):
        call_command("rederive", *since, "--batch-size", size, verbosity=0)
    assert canonical_dump() == before
    assert not Event.objects.filter(derivation_status="pending").exists()
