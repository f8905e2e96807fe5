"""Celery: carry the job in task headers and run each task as a job of its own.

``inject_headers``/``extract_parent`` are the two halves of propagation; ``install_celery``
connects them to Celery's signals (publish, prerun, postrun, failure).
"""

from typing import Any

from lineage_collector.context import clear_job, current_run, set_job
from lineage_collector.errors import report
from lineage_collector.records import JobRun

HEADER = "lineage_parent"
_task_runs: dict[str, JobRun] = {}
_task_errors: dict[str, BaseException] = {}


def inject_headers(headers: dict[str, Any]) -> dict[str, Any]:
    """Add the current job to a message's ``headers`` (no-op outside a job)."""
    run = current_run.get()
    if run is not None:
        headers[HEADER] = {"namespace": run.namespace, "name": run.name, "runId": run.run_id}
    return headers


def extract_parent(headers: Any) -> tuple[str, str, str] | None:
    """The ``(namespace, name, run_id)`` a task was published from, if any."""
    value = (headers or {}).get(HEADER) if isinstance(headers, dict) else None
    if not isinstance(value, dict):
        return None
    try:
        return (str(value["namespace"]), str(value["name"]), str(value["runId"]))
    except KeyError:
        return None


def _before_publish(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    try:
        if headers is not None:
            inject_headers(headers)
    except Exception as error:
        report("celery.publish", error)


def _prerun(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    try:
        request = getattr(task, "request", None)
        # Celery copies custom message headers onto the request; older protocols nest them.
        value = getattr(request, HEADER, None)
        parent = extract_parent({HEADER: value} if value else getattr(request, "headers", None))
        _task_runs[str(task_id)] = set_job(getattr(task, "name", "celery-task"), parent=parent)
    except Exception as error:
        report("celery.prerun", error)


def _failure(
    task_id: str | None = None, exception: BaseException | None = None, **kwargs: Any
) -> None:
    if exception is not None:
        _task_errors[str(task_id)] = exception


def _postrun(task_id: str | None = None, **kwargs: Any) -> None:
    try:
        run = _task_runs.pop(str(task_id), None)
        error = _task_errors.pop(str(task_id), None)
        if run is not None:
            clear_job(run, error)
    except Exception as error:
        report("celery.postrun", error)


def install_celery() -> bool:
    """Connect the signal handlers; False when Celery is not installed."""
    try:
        from celery import signals
    except ImportError:
        return False
    signals.before_task_publish.connect(_before_publish, weak=False)
    signals.task_prerun.connect(_prerun, weak=False)
    signals.task_failure.connect(_failure, weak=False)
    signals.task_postrun.connect(_postrun, weak=False)
    return True
