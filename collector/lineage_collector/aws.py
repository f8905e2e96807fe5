"""S3 and Athena calls to datasets (worker side)."""

import time
from collections import OrderedDict
from typing import Any
from urllib.parse import unquote

from lineage_collector.errors import counters
from lineage_collector.naming import (
    DatasetName,
    Platform,
    athena_namespace,
    s3_dataset,
    s3_uri_dataset,
    table_dataset,
)

S3_READS = frozenset({"GetObject", "SelectObjectContent"})
S3_WRITES = frozenset({"PutObject", "CompleteMultipartUpload", "CopyObject"})
S3_METADATA_READS = frozenset({"HeadObject", "ListObjects", "ListObjectsV2"})
S3_METADATA_WRITES = frozenset({"DeleteObject", "DeleteObjects"})
ATHENA_CALLS = frozenset({"StartQueryExecution", "GetQueryExecution"})
# Every operation the boto3 hook queues; anything else costs one set lookup.
CAPTURED = S3_READS | S3_WRITES | S3_METADATA_READS | S3_METADATA_WRITES | ATHENA_CALLS

# The only parameters the worker reads: the queue keeps these, never the caller's whole
# params (a PutObject's Body) or the response (a GetObject's open stream).
_S3_FIELDS = ("Bucket", "Key", "CopySource", "Prefix", "Delete")
_ATHENA_RESPONSE_FIELDS = ("QueryExecutionId", "QueryExecution")

_ATHENA_DEFAULT_CATALOG = "AwsDataCatalog"
_TRACK_SECONDS = 6 * 3600.0
_TRACK_MAX = 10_000


def call_fields(
    operation: str, params: Any, response: Any, max_chars: int | None = None
) -> tuple[dict[str, Any], Any]:
    """What of a call the worker needs (calling thread: a few dict lookups).

    An Athena query over ``max_chars`` (the parser's cap; Athena takes 262,144) is not kept:
    the worker would skip it, and 10,000 queued ones would hold gigabytes until then.
    """
    if operation in ATHENA_CALLS:
        kept = {key: response[key] for key in _ATHENA_RESPONSE_FIELDS if key in response}
        execution = kept.get("QueryExecution")
        if max_chars is not None and isinstance(execution, dict):
            query = execution.get("Query")
            if isinstance(query, str) and len(query) > max_chars:
                kept["QueryExecution"] = {**execution, "Query": ""}
                counters.bump("sql.skipped_too_large")  # as the parser counts a statement
        return {"QueryExecutionId": params.get("QueryExecutionId")}, kept
    return {key: params[key] for key in _S3_FIELDS if key in params}, None


def s3_lineage(
    operation: str, params: dict[str, Any], with_metadata: bool
) -> tuple[list[DatasetName], list[DatasetName]]:
    """Inputs and outputs of one successful S3 call."""
    bucket = params.get("Bucket")
    key = params.get("Key") or ""
    if not bucket:
        return [], []
    if operation in S3_READS:
        return [s3_dataset(bucket, key)], []
    if operation in {"PutObject", "CompleteMultipartUpload"}:
        return [], [s3_dataset(bucket, key)]
    if operation == "CopyObject":
        return [_copy_source(params.get("CopySource"))], [s3_dataset(bucket, key)]
    if not with_metadata:
        return [], []
    if operation == "HeadObject":
        return [s3_dataset(bucket, key)], []
    if operation in {"ListObjects", "ListObjectsV2"}:
        return [s3_dataset(bucket, params.get("Prefix") or "", is_prefix=True)], []
    if operation == "DeleteObject":
        return [], [s3_dataset(bucket, key)]
    if operation == "DeleteObjects":
        objects = (params.get("Delete") or {}).get("Objects") or []
        return [], list(dict.fromkeys(s3_dataset(bucket, item.get("Key", "")) for item in objects))
    return [], []


def _copy_source(source: Any) -> DatasetName:
    if isinstance(source, dict):
        return s3_dataset(source["Bucket"], source["Key"])
    # botocore turns the caller's CopySource (a dict or a plain "bucket/key" string) into the
    # URL-encoded header, in the params it was given, before the hook reads them.
    bucket, _, key = str(source).lstrip("/").partition("/")
    return s3_dataset(unquote(bucket), unquote(key.split("?versionId=", 1)[0]))


class AthenaTracker:
    """Binds query execution ids to the job that started them; builds lineage on SUCCEEDED.

    The map is bounded and entries expire, because a query that is never polled must not
    hold memory forever. Each id yields lineage at most once (while it is among the
    last 10,000 ids that finished).
    """

    def __init__(self) -> None:
        self.started: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self.done: OrderedDict[str, None] = OrderedDict()

    def observe(
        self,
        run: Any,
        operation: str,
        params: dict[str, Any],
        response: dict[str, Any],
        region: str,
        parser: Any,
    ) -> tuple[Any, list[DatasetName], list[DatasetName]] | None:
        now = time.monotonic()
        if operation == "StartQueryExecution":
            execution_id = response.get("QueryExecutionId")
            if execution_id and run is not None:
                self.started[execution_id] = (run, now + _TRACK_SECONDS)
                self._trim(now)
            return None
        execution = response.get("QueryExecution") or {}
        execution_id = execution.get("QueryExecutionId") or params.get("QueryExecutionId")
        state = (execution.get("Status") or {}).get("State")
        if not execution_id or execution_id in self.done:
            return None
        if state in {"FAILED", "CANCELLED"}:
            self.started.pop(execution_id, None)
            return None
        if state != "SUCCEEDED":
            return None
        bound = self.started.pop(execution_id, None)
        target = bound[0] if bound is not None else run
        self.done[execution_id] = None
        if len(self.done) > _TRACK_MAX:
            self.done.popitem(last=False)
        if target is None:
            return None
        inputs, outputs = athena_lineage(execution, region, parser)
        return target, inputs, outputs

    def _trim(self, now: float) -> None:
        while self.started:
            first_id, (_, expires) = next(iter(self.started.items()))
            if expires > now and len(self.started) <= _TRACK_MAX:
                break
            del self.started[first_id]


def athena_lineage(
    execution: dict[str, Any], region: str, parser: Any
) -> tuple[list[DatasetName], list[DatasetName]]:
    """Datasets of a finished Athena query, named the way Airflow's Athena operator names them."""
    context = execution.get("QueryExecutionContext") or {}
    catalog = context.get("Catalog") or _ATHENA_DEFAULT_CATALOG
    platform = Platform(
        "awsathena",
        athena_namespace(region),
        catalog,
        (context.get("Database") or "default").lower(),
        3,
        "lower",
    )
    lineage = parser.parse(execution.get("Query") or "", "athena")

    def name(table: Any) -> DatasetName:
        if table.catalog and table.catalog.lower() == _ATHENA_DEFAULT_CATALOG.lower():
            table = table._replace(catalog=_ATHENA_DEFAULT_CATALOG)
        return table_dataset(platform, table)

    inputs = [name(table) for table in lineage.inputs]
    inputs += [s3_uri_dataset(uri, is_prefix=True) for uri in lineage.input_locations]
    outputs = [name(table) for table in lineage.outputs]
    outputs += [s3_uri_dataset(uri, is_prefix=True) for uri in lineage.output_locations]
    return inputs, outputs
