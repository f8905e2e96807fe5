"""boto3/botocore: wrap ``BaseClient._make_api_call`` and s3transfer's managed transfers.

Patching the base class reaches every session and every client, including clients created
before installation (their classes inherit ``_make_api_call``). Managed transfers run
their S3 calls on s3transfer's own pool threads, where the job context is not set, so the
transfer itself is recorded on the calling thread and reported when it succeeds.
"""

import functools
import inspect
from typing import Any

from lineage_collector.aws import CAPTURED, call_fields
from lineage_collector.context import current_run
from lineage_collector.errors import CollectorError, counters, report
from lineage_collector.naming import s3_dataset
from lineage_collector.records import AWS, IO, JobRun
from lineage_collector.runtime import RUNTIME

_originals: dict[tuple[Any, str], Any] = {}
_ALWAYS = frozenset({"StartQueryExecution", "GetQueryExecution"})


def _queue(item: tuple[Any, ...]) -> None:
    if len(RUNTIME.queue) < RUNTIME.capacity:
        RUNTIME.queue.append(item)
        if RUNTIME.needs_start:
            RUNTIME.start_worker()
    else:
        RUNTIME.dropped()


def _wants(operation: str, run: JobRun | None, response: Any) -> bool:
    if operation not in CAPTURED or not RUNTIME.active:
        return False
    if operation == "GetQueryExecution":
        # Polling loops call this many times; only a terminal state is worth a tuple.
        state = response.get("QueryExecution", {}).get("Status", {}).get("State")
        return state in ("SUCCEEDED", "FAILED", "CANCELLED")
    return run is not None or operation in _ALWAYS


def _observe(client: Any, operation: str, params: Any, response: Any) -> None:
    """Queue what the worker needs of a call that succeeded; never fails the call."""
    try:
        run = current_run.get()
        if _wants(operation, run, response):
            fields, kept = call_fields(operation, params, response, RUNTIME.max_statement_chars)
            _queue((AWS, run, operation, fields, kept, client))
    except CollectorError:
        raise  # strict mode's full queue
    except Exception as error:
        report("hook.boto3", error, strict=not RUNTIME.config.silent_fail)


def _wrap_sync(original: Any) -> Any:
    @functools.wraps(original)
    def _make_api_call(self: Any, operation_name: str, api_params: Any) -> Any:
        response = original(self, operation_name, api_params)
        _observe(self, operation_name, api_params, response)
        return response

    return _make_api_call


def _wrap_async(original: Any) -> Any:
    @functools.wraps(original)
    async def _make_api_call(self: Any, operation_name: str, api_params: Any) -> Any:
        response = await original(self, operation_name, api_params)
        _observe(self, operation_name, api_params, response)
        return response

    return _make_api_call


class _TransferDone:
    """An s3transfer subscriber that reports the transfer's datasets once it succeeded."""

    def __init__(self, run: JobRun, inputs: tuple[Any, ...], outputs: tuple[Any, ...]) -> None:
        self.run, self.inputs, self.outputs = run, inputs, outputs

    # s3transfer calls on_queued/on_progress/on_done by name, with keyword arguments.
    def on_queued(self, **kwargs: Any) -> None:
        return None

    def on_progress(self, **kwargs: Any) -> None:
        return None

    def on_done(self, future: Any, **kwargs: Any) -> None:
        try:
            future.result()
        except Exception:
            return  # a failed transfer is not lineage
        _queue((IO, self.run, self.inputs, self.outputs))


def _wrap_transfer(original: Any, kind: str) -> Any:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def transfer(self: Any, *args: Any, **kwargs: Any) -> Any:
        run = current_run.get()
        if run is None or not RUNTIME.active:
            return original(self, *args, **kwargs)
        try:
            # Bind by name: callers pass subscribers positionally (boto3 does) or by keyword.
            bound = signature.bind(self, *args, **kwargs)
            arguments = bound.arguments
            subscriber = _transfer_subscriber(run, kind, arguments)
            arguments["subscribers"] = [*(arguments.get("subscribers") or []), subscriber]
            call_args, call_kwargs = bound.args, bound.kwargs
        except Exception:
            counters.bump("errors.transfer_hook")
            return original(self, *args, **kwargs)
        return original(*call_args, **call_kwargs)

    return transfer


def _transfer_subscriber(run: JobRun, kind: str, arguments: dict[str, Any]) -> _TransferDone:
    """TransferManager.upload/download/copy arguments to the transfer's datasets."""
    target = s3_dataset(arguments["bucket"], arguments["key"])
    if kind == "upload":
        return _TransferDone(run, (), (target,))
    if kind == "download":
        return _TransferDone(run, (target,), ())
    source = arguments["copy_source"]
    return _TransferDone(run, (s3_dataset(source["Bucket"], source["Key"]),), (target,))


def _patch(owner: Any, attribute: str, wrapper: Any) -> None:
    key = (owner, attribute)
    if key in _originals:
        return
    original = getattr(owner, attribute)
    _originals[key] = original
    setattr(owner, attribute, wrapper(original))


def install_boto3() -> bool:
    """Capture S3 and Athena calls of every boto3/botocore client; False without botocore."""
    try:
        from botocore.client import BaseClient
    except ImportError:
        return False
    _patch(BaseClient, "_make_api_call", _wrap_sync)
    try:
        from s3transfer.manager import TransferManager
    except ImportError:
        pass
    else:
        for kind in ("upload", "download", "copy"):
            _patch(
                TransferManager, kind, lambda original, kind=kind: _wrap_transfer(original, kind)
            )
    try:
        from aiobotocore.client import AioBaseClient
    except ImportError:
        pass
    else:
        _patch(AioBaseClient, "_make_api_call", _wrap_async)
    counters.bump("hooks.boto3")
    return True


def uninstall_boto3() -> None:
    for (owner, attribute), original in list(_originals.items()):
        setattr(owner, attribute, original)
        del _originals[(owner, attribute)]
