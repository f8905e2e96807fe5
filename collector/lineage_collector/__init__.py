"""lineage-collector: automatic OpenLineage lineage from inside Python services.

>>> from lineage_collector import install, job
>>> install()                       # hooks + emitter, configured from the environment
>>> @job("process-orders", flow="etl-pipeline")
... def process_orders(): ...
"""

from typing import Any

from lineage_collector._version import __version__
from lineage_collector.config import Config
from lineage_collector.context import (
    clear_job,
    current_run,
    job,
    propagate,
    set_job,
    submit,
)
from lineage_collector.errors import CollectorError, counters, report
from lineage_collector.hooks.boto3 import install_boto3, uninstall_boto3
from lineage_collector.hooks.celery import extract_parent, inject_headers, install_celery
from lineage_collector.hooks.sqlalchemy import install_sqlalchemy, uninstall_sqlalchemy
from lineage_collector.manual import add_input, add_output, emit_edge, emit_lineage
from lineage_collector.metadata import MetadataAPI, MetadataModel
from lineage_collector.naming import DatasetName, dataset_name
from lineage_collector.records import JobRun
from lineage_collector.runtime import RUNTIME
from lineage_collector.sql import SqlLineage, Table, parse_sql

__all__ = [
    "CollectorError",
    "Config",
    "DatasetName",
    "JobRun",
    "MetadataAPI",
    "MetadataModel",
    "SqlLineage",
    "Table",
    "__version__",
    "add_input",
    "add_output",
    "clear_job",
    "configure",
    "current_job",
    "dataset_name",
    "emit_edge",
    "emit_lineage",
    "extract_parent",
    "flush",
    "inject_headers",
    "install",
    "install_boto3",
    "install_celery",
    "install_sqlalchemy",
    "job",
    "parse_sql",
    "propagate",
    "set_job",
    "stats",
    "submit",
    "uninstall",
]


def configure(**overrides: Any) -> Config:
    """(Re)build the emitter from the environment and ``overrides``, without touching hooks.

    Overrides are :class:`Config` fields, e.g. ``url=``, ``api_key=``, ``namespace=``,
    ``transport=`` (any object with ``send(events)``, or ``"openlineage"``).
    """
    config = Config.from_env(**overrides)
    RUNTIME.configure(config)
    return config


def install(*, sqlalchemy: bool = True, boto3: bool = True, **overrides: Any) -> Config:
    """Configure the emitter and install the hooks whose libraries are importable.

    Honours ``OPENLINEAGE_DISABLED``: when set, nothing is hooked and nothing is sent. Never
    raises unless strict mode (``LINEAGE_SILENT_FAIL=false``) is on.
    """
    config = Config.from_env(**overrides)
    try:
        RUNTIME.configure(config)
        if config.disabled:
            return config
        if sqlalchemy:
            install_sqlalchemy()
        if boto3:
            install_boto3()
    except Exception as error:
        report("install", error, strict=not config.silent_fail)
    return config


def uninstall() -> None:
    """Remove the hooks and stop the worker after a bounded flush (tests, shutdown)."""
    uninstall_sqlalchemy()
    uninstall_boto3()
    RUNTIME.stop_worker(timeout=RUNTIME.config.exit_flush_timeout)


def flush(timeout: float = 5.0) -> bool:
    """Wait up to ``timeout`` seconds for queued lineage to be sent; True when all of it was.

    False when some is still waiting, or when lineage since the last flush was lost instead
    (a full queue, a refusal, retries spent: ``stats()`` says which).
    """
    return RUNTIME.flush(timeout)


def current_job() -> JobRun | None:
    """The job run of the current context, if any."""
    return current_run.get()


def stats() -> dict[str, int]:
    """The collector's counters: queued drops, events sent, errors by place, parser cache..."""
    values = dict(counters.values)
    values["queue.length"] = len(RUNTIME.queue)
    return values
