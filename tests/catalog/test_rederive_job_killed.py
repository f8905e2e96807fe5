"""catalog/tasks.py's ``rederive_job``: "a worker killed mid-job leaves the row "running"
and [the events it set pending] pending, which the sweep derives; the steward sees the job
stalled and can ask again" (ADR 0200). The job runs in a process of its own, as a worker
runs it, and is killed (SIGKILL) inside its second batch's transaction: the batch rolls
back, the row says "running", that batch's events are pending and nothing holds them, the
sweep derives them, the catalog is the one the events gave, and the job asked again ends
"done"."""

import os
import signal
import subprocess
import sys
import uuid

import pytest
from django.conf import settings
from django.db import connection

from catalog.models import RederiveJob
from catalog.services import rederive_jobs
from catalog.services.derive import derive_events, sweep_underived
from ingest.models import Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import canonical_dump, openlineage, store

# The worker's process: the job's batches of two, its second batch paused inside its
# transaction (events claimed, nothing committed) until the test kills it.
WORKER = """
import sys, time
import django
django.setup()
from catalog.services import rederive_jobs
from catalog.services.derivation import batch
rederive_jobs.REDERIVE_BATCH = 2
derive = batch._derive
calls = []
def paused(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        print("in the second batch", flush=True)
        time.sleep(60)
    return derive(*args, **kwargs)
batch._derive = paused
rederive_jobs.run_rederive_job(int(sys.argv[1]))
"""


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(90)
def test_a_rederive_job_killed_mid_batch_is_left_running_and_its_batch_to_the_sweep() -> None:
    events = []
    for index in range(3):
        run_id = str(uuid.uuid4())
        io = {"outputs": [dataset("s3://lake", f"out{index}")]}
        events.append(run_event("START", index * 10, run_id, job=("etl", f"j{index}"), **io))
        events.append(run_event("COMPLETE", index * 10 + 5, run_id, job=("etl", f"j{index}"), **io))
    ids = store([openlineage(event) for event in events])
    assert derive_events(ids).failed == 0
    before = canonical_dump()
    job_id = RederiveJob.objects.create(
        description="re-derive 6 event(s)", event_ids=ids, total=len(ids)
    ).pk
    database = connection.settings_dict
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(job_id)],
        cwd=settings.BASE_DIR,
        env={
            **os.environ,
            "DATABASE_URL": url,
            "DJANGO_SETTINGS_MODULE": "config.settings.development",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        for line in worker.stdout:  # its log lines, then the pause's
            if line == "in the second batch\n":
                break
        else:
            pytest.fail(f"it never paused: {worker.stderr.read() if worker.stderr else ''}")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    job = RederiveJob.objects.get(pk=job_id)
    assert (job.state, job.claimed, job.derived) == ("running", 2, 2)  # its first batch's
    pending = sorted(Event.objects.filter(derivation_status="pending").values_list("id", flat=True))
    assert pending == ids[2:4]  # the killed batch rolled back: its events are pending again
    swept = sweep_underived(older_than_seconds=0)  # nothing holds them any more
    assert (swept.claimed, swept.derived) == (2, 2)
    assert canonical_dump() == before
    rederive_jobs.run_rederive_job(job_id)  # the steward asks again
    job = RederiveJob.objects.get(pk=job_id)
    assert (job.state, job.claimed, job.derived, job.failed) == ("done", 6, 6, 0)
    assert canonical_dump() == before
