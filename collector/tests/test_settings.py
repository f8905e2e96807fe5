"""The README's configuration table and its failure-reporting promise, one row at a time."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import lineage_collector as lc
import pytest
from lineage_collector.config import Config
from lineage_collector.errors import counters, report


def test_every_documented_variable_reaches_the_configuration(monkeypatch):
    for name, value in {
        "OPENLINEAGE_URL": "http://catalog:8000",
        "OPENLINEAGE_API_KEY": "lc_ingest_k",
        "OPENLINEAGE_NAMESPACE": "shop",
        "LINEAGE_SILENT_FAIL": "false",
        "LINEAGE_TIMEOUT": "0.7",
        "LINEAGE_CALL_TIMEOUT": "0.4",
        "LINEAGE_QUEUE_SIZE": "5",
        "LINEAGE_EXIT_FLUSH_TIMEOUT": "1.5",
        "LINEAGE_CAPTURE_S3_METADATA": "true",
    }.items():
        monkeypatch.setenv(name, value)
    config = Config.from_env()
    assert config.batch_url == "http://catalog:8000/api/v1/lineage/batch"
    assert (config.api_key, config.namespace, config.silent_fail) == ("lc_ingest_k", "shop", False)
    assert (config.timeout, config.queue_size, config.exit_flush_timeout) == (0.7, 5, 1.5)
    assert config.call_timeout == 0.4
    assert config.capture_s3_metadata_calls
    # "Every keyword of install() overrides the environment."
    assert Config.from_env(namespace="other", queue_size=9).namespace == "other"


def test_without_a_url_events_are_logged(caplog):
    counters.reset()
    lc.install(namespace="tests", flush_interval=0.01)
    try:
        with caplog.at_level(logging.INFO, logger="lineage_collector.events"):
            with lc.job("logged"):
                pass
            assert lc.flush(5)
    finally:
        lc.uninstall()
    logged = [record.getMessage() for record in caplog.records if "logged" in record.getMessage()]
    assert [
        ('"eventType":"START"' in line, '"eventType":"COMPLETE"' in line) for line in logged
    ] == [
        (True, False),
        (False, True),
    ]


def test_disabled_installs_no_hooks(monkeypatch):
    sa = pytest.importorskip("sqlalchemy")
    botocore_client = pytest.importorskip("botocore.client")
    from lineage_collector.hooks.sqlalchemy import _after_cursor_execute

    original = botocore_client.BaseClient._make_api_call
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    lc.install()
    try:
        assert botocore_client.BaseClient._make_api_call is original
        assert not sa.event.contains(
            sa.engine.Engine, "after_cursor_execute", _after_cursor_execute
        )
    finally:
        lc.uninstall()


def test_a_failure_is_counted_every_time_and_logged_once_a_minute_per_kind(caplog):
    counters.reset()
    with caplog.at_level(logging.WARNING, logger="lineage_collector"):
        for _ in range(3):
            report("send", ConnectionError("down"))
        report("send", TimeoutError("slow"))  # another kind: logged too
    assert counters.values["errors.send"] == 4
    assert [record.getMessage().split("error=")[1].split(":")[0] for record in caplog.records] == [
        "ConnectionError",
        "TimeoutError",
    ]
    counters.reset()


STDLIB_ONLY = """
import sys

for name in ("sqlalchemy", "sqlglot", "boto3", "botocore", "s3transfer", "aiobotocore",
             "openlineage", "celery"):
    sys.modules[name] = None  # not installed: importing it raises ImportError

import lineage_collector as lc
from lineage_collector.transport import MemoryTransport

transport = MemoryTransport()
lc.install(transport=transport)
with lc.job("core-only"):
    lc.add_output("s3://out/a/b.csv")
assert lc.flush(5)
assert [event["eventType"] for event in transport.events] == ["START", "COMPLETE"]
assert lc.install_celery() is False
loaded = {name.split(".")[0] for name, module in sys.modules.items() if module is not None}
# __mp_main__: multiprocessing's own name for __main__ (install() imports multiprocessing.util)
ours = {"lineage_collector", "__main__", "__mp_main__"}
print(sorted(loaded - set(sys.stdlib_module_names) - ours))
"""


def test_the_core_runs_on_the_standard_library_alone():
    # "The core is standard library only": without any extra, install(), jobs, manual
    # lineage and the emitter work, and nothing outside the standard library is imported.
    environment = {
        **os.environ,
        "PYTHONPATH": str(Path(lc.__file__).resolve().parents[1]),
    }
    result = subprocess.run(
        [sys.executable, "-S", "-c", STDLIB_ONLY],  # -S: no site-packages at all
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
