"""The current job, in a ContextVar, and the ways to start, end and carry it.

A ``ContextVar`` (not ``threading.local``) so two asyncio tasks on one thread each see their
own job. Context does not cross into thread pools or other processes by itself, hence
:func:`propagate`, :func:`submit` and the Celery header helpers.
"""

import contextvars
import functools
import inspect
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

from lineage_collector.errors import report
from lineage_collector.events import uuid7
from lineage_collector.records import END, START, JobRun
from lineage_collector.runtime import RUNTIME

P = ParamSpec("P")
R = TypeVar("R")

current_run: contextvars.ContextVar[JobRun | None] = contextvars.ContextVar(
    "lineage_collector_run", default=None
)
# One run id per flow and process, so that every job of a flow hangs under one parent run.
_flow_runs: dict[tuple[str, str], str] = {}


def _flow_parent(namespace: str, flow: str, run_id: str | None) -> tuple[str, str, str]:
    if run_id is None:
        run_id = _flow_runs.setdefault((namespace, flow), uuid7())
    return (namespace, flow, run_id)


def _upstream(namespace: str, jobs: Iterable[str | tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    result = []
    for item in jobs:
        if isinstance(item, str):
            result.append((namespace, item))
        else:
            result.append((str(item[0]), str(item[1])))
    return tuple(result)


def set_job(
    name: str,
    *,
    flow: str | None = None,
    flow_run_id: str | None = None,
    upstream_jobs: Iterable[str | tuple[str, str]] = (),
    namespace: str | None = None,
    parent: tuple[str, str, str] | None = None,
) -> JobRun:
    """Start a run of job ``name`` in the current context and emit its START event.

    The job is named ``{flow}.{name}`` with a parent facet pointing at the flow when ``flow``
    is given (the way Airflow names ``dag.task``); otherwise an enclosing job, or ``parent``
    (``(namespace, name, run_id)``, e.g. from Celery headers), becomes the parent. Pair with
    :func:`clear_job`; this is what middleware and signal handlers use.
    """
    namespace = namespace or RUNTIME.config.namespace
    enclosing = current_run.get()
    if flow:
        full_name = f"{flow}.{name}"
        if parent is None:
            if enclosing is not None and enclosing.name == flow and flow_run_id is None:
                parent = (enclosing.namespace, enclosing.name, enclosing.run_id)
            else:
                parent = _flow_parent(namespace, flow, flow_run_id)
    else:
        full_name = name
        if parent is None and enclosing is not None:
            parent = (enclosing.namespace, enclosing.name, enclosing.run_id)
    run = JobRun(
        name=full_name,
        namespace=namespace,
        parent=parent,
        upstream=_upstream(namespace, upstream_jobs),
    )
    run.token = current_run.set(run)
    RUNTIME.put((START, run, run.started))
    return run


def clear_job(run: JobRun | None = None, error: BaseException | None = None) -> None:
    """End ``run`` (default: the current one): COMPLETE, or FAIL with ``error``."""
    run = run or current_run.get()
    if run is None:
        return
    RUNTIME.put((END, run, time.time(), error))
    try:
        if run.token is not None:
            current_run.reset(run.token)
        else:
            current_run.set(None)
    except ValueError:
        # Reset from another context (e.g. a Celery postrun handler): just forget the job.
        current_run.set(None)


class job:
    """A job: decorator or (async) context manager; each call or ``with`` block is one run.

    >>> @job("process-orders", flow="etl-pipeline", upstream_jobs=["etl-pipeline.extract"])
    ... def process_orders(): ...
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        flow: str | None = None,
        upstream_jobs: Iterable[str | tuple[str, str]] = (),
        namespace: str | None = None,
        flow_run_id: str | None = None,
    ) -> None:
        self.name = name
        self.flow = flow
        self.upstream_jobs = tuple(upstream_jobs)
        self.namespace = namespace
        self.flow_run_id = flow_run_id
        self._runs: list[JobRun | None] = []  # None: a start that failed

    def _start(self, default_name: str = "job") -> JobRun | None:
        try:
            return set_job(
                self.name or default_name,
                flow=self.flow,
                flow_run_id=self.flow_run_id,
                upstream_jobs=self.upstream_jobs,
                namespace=self.namespace,
            )
        except Exception as error:
            report("job.start", error, strict=not RUNTIME.config.silent_fail)
            return None

    @staticmethod
    def _end(run: JobRun | None, error: BaseException | None) -> None:
        if run is None:
            return
        if isinstance(error, SystemExit) and error.code in (None, 0):
            error = None  # sys.exit(0) inside a job is how a script succeeds, not a failure
        try:
            clear_job(run, error)
        except Exception as failure:
            report("job.end", failure, strict=not RUNTIME.config.silent_fail)

    def __enter__(self) -> JobRun | None:
        run = self._start()
        self._runs.append(run)
        return run

    def __exit__(self, kind: Any, error: BaseException | None, trace: Any) -> None:
        # One instance can be entered by several threads or tasks at once (a module-level
        # `LOAD = job("load")`): end the run this context entered, which is its current one
        # (nested jobs have reset theirs), not whichever was entered last anywhere.
        run = current_run.get()
        if run is not None and run.parent is not None and run not in self._runs:
            # A set_job() in the block that was never cleared: its parent is ours.
            run = next((mine for mine in self._runs if mine and mine.run_id == run.parent[2]), run)
        try:
            self._runs.remove(run)  # by identity (JobRun has eq=False); atomic under the GIL
        except ValueError:
            run = self._runs.pop() if self._runs else None  # e.g. this context's start failed
        self._end(run, error)  # returning None re-raises the error unchanged

    async def __aenter__(self) -> JobRun | None:
        return self.__enter__()

    async def __aexit__(self, kind: Any, error: BaseException | None, trace: Any) -> None:
        self.__exit__(kind, error, trace)

    def __call__(self, function: Callable[P, R]) -> Callable[P, R]:
        name = self.name or getattr(function, "__qualname__", "job")
        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def run_async(*args: P.args, **kwargs: P.kwargs) -> Any:
                run = self._start(name)
                try:
                    result = await function(*args, **kwargs)
                except BaseException as error:
                    self._end(run, error)
                    raise
                self._end(run, None)
                return result

            return run_async  # type: ignore[return-value]

        @functools.wraps(function)
        def run_sync(*args: P.args, **kwargs: P.kwargs) -> R:
            run = self._start(name)
            try:
                result = function(*args, **kwargs)
            except BaseException as error:
                self._end(run, error)
                raise
            self._end(run, None)
            return result

        return run_sync


def propagate(function: Callable[P, R]) -> Callable[P, R]:
    """Wrap ``function`` so that it runs in the current job wherever it is called.

    Only the job is carried (not a whole ``Context``), so the wrapper may run on several pool
    threads at once.
    """
    run = current_run.get()

    @functools.wraps(function)
    def in_job(*args: P.args, **kwargs: P.kwargs) -> R:
        token = current_run.set(run)
        try:
            return function(*args, **kwargs)
        finally:
            current_run.reset(token)

    return in_job


def submit(
    executor: Executor, function: Callable[..., R], /, *args: Any, **kwargs: Any
) -> Future[R]:
    """``executor.submit`` with the current job carried into the pool thread."""
    return executor.submit(propagate(function), *args, **kwargs)
