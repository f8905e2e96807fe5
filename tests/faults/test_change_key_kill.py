"""Issue 40: a derivation SIGKILLed while it holds a change key's lock, inside its transaction
(catalog/services/derivation/change_log.py writes every change row under a per-key
transaction-level try-lock, ADR 0088), leaves nothing locked and nothing half-written: a
second derivation completes and every change is recorded, announced and ledgered once.

The derivation runs in a process of its own (tests/faults/derive_child.py) on the test
database. It is stopped deterministically where it holds the keys: the test holds an
EXCLUSIVE lock on the webhook ledger (catalog_notified_change), which the derivation
inserts into right after writing its change rows under their key locks, in the same
transaction (catalog/notify/outbox.py). No hook in the production code: the test waits,
through pg_locks, until that backend holds its change-key advisory locks and waits for the
ledger, then kills the process."""

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from catalog.models import WebhookSubscription
from tests.api.project_fixtures import derive
from tests.api.test_changes import V1, load
from tests.faults import processes

LEDGER = "catalog_notified_change"
# The three changes between V1 and V2 of tests/api/test_changes.py: note removed, amount
# retyped, currency added.
EXPECTED = {("column_removed", "note"), ("type_changed", "amount"), ("column_added", "currency")}


def _child(env: dict[str, str], step: str, log: Path) -> processes.Service:
    command = [str(processes.BIN / "python"), "-m", "tests.faults.derive_child", step]
    return processes.Service(command, env, log).start()


def _run(env: dict[str, str], step: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "tests.faults.derive_child", step],
        cwd=processes.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _rows(database: str, sql: str) -> list[tuple]:
    with psycopg.connect(database, autocommit=True) as connection:
        return connection.execute(sql).fetchall()


_HOLDER = f"""
SELECT a.pid,
       (SELECT count(*) FROM pg_locks l
        WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted),
       (SELECT count(*) FROM pg_locks l
        WHERE l.pid = a.pid AND l.relation = '{LEDGER}'::regclass AND NOT l.granted)
FROM pg_stat_activity a
WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
  AND a.application_name <> 'the test'
"""


# Advisory locks held in this database (pg_locks shows the whole cluster's).
_ADVISORY = """
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database
                                             WHERE datname = current_database())
"""


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
def test_a_derivation_killed_holding_a_change_key_leaves_nothing_locked_or_twice(
    tmp_path: Path,
) -> None:
    WebhookSubscription.objects.create(name="every change", url="http://127.0.0.1:9/")
    derive(load(V1, 0, 0))  # orders' first schema: no change yet
    database = processes.current_database_url()
    env = processes.service_env(database, settings.CELERY_BROKER_URL)
    holder = psycopg.connect(database, application_name="the test")
    killed = None
    try:
        holder.execute(f"LOCK TABLE {LEDGER} IN EXCLUSIVE MODE")  # reads pass, inserts wait
        killed = _child(env, "second", tmp_path / "second.log")

        def stopped_holding_keys() -> bool:
            found = [row for row in _rows(database, _HOLDER) if row[1] and row[2]]
            return len(found) == 1

        processes.wait_for(stopped_holding_keys, 60, "the derivation to hold its change keys")
        ((backend, keys, _),) = [row for row in _rows(database, _HOLDER) if row[1] and row[2]]
        assert keys >= len(EXPECTED)  # it holds every key it is writing
        killed.kill()  # SIGKILL, inside its transaction, change rows written, keys held
        assert "stored" in killed.output() and "second derived" not in killed.output()
    finally:
        holder.rollback()  # the ledger is free again: the orphaned backend goes on, then
        holder.close()  # finds its client gone and rolls back
        if killed is not None:
            killed.stop()

    def backend_gone() -> bool:
        return not _rows(database, f"SELECT 1 FROM pg_stat_activity WHERE pid = {backend}")

    processes.wait_for(backend_gone, 60, "the killed derivation's backend to end")
    # Nothing of the killed transaction is left: no lock, no change row, the event pending.
    assert _rows(database, _ADVISORY) == [(0,)]
    assert _rows(database, "SELECT count(*) FROM catalog_dataset_change") == [(0,)]
    assert _rows(
        database, "SELECT count(*) FROM ingest_event WHERE derivation_status = 'pending'"
    ) == [(1,)]

    assert "drain derived=1 failed=0" in _run(env, "drain")  # a second derivation completes
    changes = _rows(database, 'SELECT kind, "column" FROM catalog_dataset_change')
    assert sorted(changes) == sorted(EXPECTED)  # each once
    assert _rows(database, f"SELECT count(*) FROM {LEDGER}") == [(len(EXPECTED),)]
    deliveries = _rows(database, "SELECT kind, change_key FROM catalog_webhook_delivery")
    assert len(deliveries) == len({key for _, key in deliveries}) == len(EXPECTED)
    assert _rows(database, _ADVISORY) == [(0,)]
    assert _rows(
        database, "SELECT count(*) FROM ingest_event WHERE derivation_status <> 'derived'"
    ) == [(0,)]
