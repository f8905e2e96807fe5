"""Lineage the hooks cannot see: declared inside a job, emitted without one, or posted as edges."""

import time
from collections.abc import Iterable
from typing import Any

from lineage_collector.context import _flow_parent, current_run
from lineage_collector.deadline_http import post_json
from lineage_collector.errors import counters, report
from lineage_collector.events import run_event, uuid7
from lineage_collector.naming import DatasetName, dataset_name
from lineage_collector.records import EVENT, IO
from lineage_collector.runtime import RUNTIME

DatasetLike = DatasetName | tuple[str, str] | str


def _names(items: Iterable[DatasetLike] | DatasetLike) -> tuple[DatasetName, ...]:
    # A lone string is one URI, not an iterable of one-letter names.
    if isinstance(items, str | DatasetName):
        items = [items]
    return tuple(dataset_name(item) for item in items)


def _strict() -> bool:
    return not RUNTIME.config.silent_fail


def add_input(*datasets: DatasetLike) -> None:
    """Record inputs of the current job: ``DatasetName``, ``(namespace, name)`` or a URI."""
    _add(datasets, ())


def add_output(*datasets: DatasetLike) -> None:
    """Record outputs of the current job (see :func:`add_input`)."""
    _add((), datasets)


def _add(inputs: tuple[DatasetLike, ...], outputs: tuple[DatasetLike, ...]) -> None:
    try:
        run = current_run.get()
        if run is None:
            counters.bump("manual.outside_job")
            return
        RUNTIME.put((IO, run, _names(inputs), _names(outputs)))
    except Exception as error:
        report("manual.add", error, strict=_strict())


def emit_lineage(
    inputs: Iterable[DatasetLike] = (),
    outputs: Iterable[DatasetLike] = (),
    *,
    job_name: str,
    namespace: str | None = None,
    flow: str | None = None,
    event_type: str = "COMPLETE",
    run_id: str | None = None,
) -> str | None:
    """Queue one RunEvent for ``job_name`` without a surrounding job; returns its run id."""
    try:
        namespace = namespace or RUNTIME.config.namespace
        run_id = run_id or uuid7()
        parent = None
        name = job_name
        if flow:
            name = f"{flow}.{job_name}"
            parent = _flow_parent(namespace, flow, None)
        event = run_event(
            event_type,
            run_id=run_id,
            namespace=namespace,
            name=name,
            moment=time.time(),
            inputs=_names(inputs),  # one URI or DatasetName, or an iterable of them
            outputs=_names(outputs),
            parent=parent,
        )
        RUNTIME.put((EVENT, event))
        return run_id
    except Exception as error:
        report("manual.emit_lineage", error, strict=_strict())
        return None


def emit_edge(
    source: str,
    target: str,
    lineage_type: str = "direct",
    pipeline: str | None = None,
) -> bool:
    """POST one edge (``catalog.schema.table`` strings) to ``/api/v1/lineage/edges``.

    Synchronous, for a pipeline's success path: returns False instead of raising when the
    catalog is not configured, down, slow or refuses the edge. It holds its caller at most
    ``LINEAGE_CALL_TIMEOUT`` seconds (5) in all: the name's lookup, connecting, TLS, sending
    and the answer's status line and headers, however slowly the catalog answers.
    """
    config = RUNTIME.config
    url = config.api_url("api/v1/lineage/edges")
    if url is None or config.disabled:
        return False
    payload: dict[str, Any] = {
        "source_table": source,
        "target_table": target,
        "lineage_type": lineage_type,
    }
    if pipeline:
        payload["pipeline"] = pipeline
    try:
        return post_json(url, payload, config.api_key, config.call_timeout)
    except Exception as error:
        report("emit_edge", error, strict=_strict())
        return False
