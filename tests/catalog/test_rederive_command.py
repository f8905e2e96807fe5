"""``manage.py rederive``: the command itself, not only the service it calls."""

import io
import uuid

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Job
from catalog.services.derivation.batch import KEPT_ERRORS
from catalog.services.derive import derive_events, rederive
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


@pytest.mark.django_db
def test_the_errors_a_rederive_keeps_for_its_report_are_bounded() -> None:
    """Every failed event's error was kept until the report, which prints 20: a rederive
    of a log of millions that all fail held them all. The smallest ids are kept."""
    events = [run_event("COMPLETE", 0, str(uuid.uuid4())) for _ in range(KEPT_ERRORS + 50)]
    ids = store([openlineage(event) for event in events])
    # Real producers cannot get this past ingest validation; the log is what it is.
    Event.objects.filter(id__in=ids).update(payload={"run": {"runId": 7}, "job": {}})
    seen: list[int] = []
    total = rederive(batch_size=7, progress=lambda total: seen.append(len(total.errors)))
    assert total.failed == len(ids)
    assert max(seen) <= KEPT_ERRORS
    assert sorted(total.errors) == sorted(ids)[:KEPT_ERRORS]
    out = io.StringIO()
    call_command("rederive", stdout=out)
    listed = [line for line in out.getvalue().splitlines() if line.startswith("  event ")]
    assert [int(line.split()[1].rstrip(":")) for line in listed] == sorted(ids)[:20]


@pytest.mark.django_db
@pytest.mark.parametrize("since", ["", " ", "yesterday", "2026-13-45T00:00:00Z", "0"])
def test_a_since_that_is_no_time_is_refused_and_nothing_is_emptied(since: str) -> None:
    """--since "" (a script's unset variable) ran a full rederive: every derived table
    emptied, instead of a range derived again."""
    event = run_event("COMPLETE", 0, str(uuid.uuid4()), outputs=[dataset("db", "b")])
    derive_events(store([openlineage(event)]))
    before = canonical_dump()
    with pytest.raises(CommandError, match=r"--since .* is not an ISO 8601 time"):
        call_command("rederive", "--since", since, verbosity=0)
    assert canonical_dump() == before
