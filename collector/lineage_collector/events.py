"""OpenLineage 2-0-2 RunEvents as plain dicts, with the standard facets the collector sets."""

import platform
import re
import secrets
import time
import traceback
from datetime import UTC, datetime
from typing import Any

from lineage_collector._version import PRODUCER, __version__
from lineage_collector.naming import DatasetName

SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_FACETS = "https://openlineage.io/spec/facets"
_FACET_SCHEMAS = {
    "parent": f"{_FACETS}/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
    "errorMessage": f"{_FACETS}/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
    "jobDependencies": (
        f"{_FACETS}/1-0-1/JobDependenciesRunFacet.json#/$defs/JobDependenciesRunFacet"
    ),
    "jobType": f"{_FACETS}/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
    "processing_engine": (
        f"{_FACETS}/1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet"
    ),
}
_MAX_STACK_CHARS = 8_000


def uuid7() -> str:
    """A time-ordered UUIDv7 (what OpenLineage recommends for runIds)."""
    value = (time.time_ns() // 1_000_000) << 80 | secrets.randbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def iso(moment: float) -> str:
    """An epoch time as the ISO 8601 UTC timestamp OpenLineage expects."""
    return datetime.fromtimestamp(moment, tz=UTC).isoformat(timespec="microseconds")


def facet(key: str, **fields: Any) -> dict[str, Any]:
    """A standard facet with its ``_producer`` and ``_schemaURL``."""
    return {"_producer": PRODUCER, "_schemaURL": _FACET_SCHEMAS[key], **fields}


def dataset(name: DatasetName) -> dict[str, Any]:
    return {"namespace": name.namespace, "name": name.name, "facets": {}}


# user:password@ in any URL of an error's message or stack (a DSN in the message, or a
# create_engine("postgresql://etl:pw@db/shop") line the traceback quotes). A password may
# hold a "/" (an AWS secret in s3n://KEY:SECRET@bucket often does) or an "@" that was not
# percent-encoded: after "user:" the user info runs to the last "@" before a space or a
# quote (a URL with an "@" in its path and a port is redacted too far, never too little).
# Bounded repeats: linear in the text's length whatever it holds.
_URL_CREDENTIALS = re.compile(
    r"(?i)\b([a-z][a-z0-9+.-]{0,31}://)"
    r"(?:[^\s/@'\":]{0,256}:[^\s'\"]{0,256}|[^\s/@'\"]{1,256})@"
)


def without_credentials(text: str) -> str:
    """``text`` with the user info of every URL in it replaced by ``***``."""
    return _URL_CREDENTIALS.sub(r"\1***@", text)


def error_facet(error: BaseException) -> dict[str, Any]:
    stack = without_credentials("".join(traceback.format_exception(error))[-_MAX_STACK_CHARS:])
    # Capped like the stack: a message quoting a megabyte statement would make the event
    # one the catalog refuses as too large, and the run's FAIL would be lost with it.
    message = without_credentials(f"{type(error).__name__}: {error}"[:_MAX_STACK_CHARS])
    return facet("errorMessage", message=message, programmingLanguage="PYTHON", stackTrace=stack)


def engine_facet() -> dict[str, Any]:
    return facet(
        "processing_engine",
        name="python",
        version=platform.python_version(),
        openlineageAdapterVersion=__version__,
    )


def run_event(
    event_type: str,
    *,
    run_id: str,
    namespace: str,
    name: str,
    moment: float,
    inputs: list[DatasetName] | tuple[DatasetName, ...] = (),
    outputs: list[DatasetName] | tuple[DatasetName, ...] = (),
    parent: tuple[str, str, str] | None = None,
    upstream: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
    error: BaseException | None = None,
) -> dict[str, Any]:
    """A RunEvent; ``parent`` is ``(namespace, name, run_id)``, ``upstream`` job identifiers."""
    run_facets: dict[str, Any] = {}
    if parent is not None:
        parent_namespace, parent_name, parent_run = parent
        run_facets["parent"] = facet(
            "parent",
            job={"namespace": parent_namespace, "name": parent_name},
            run={"runId": parent_run},
        )
    if upstream:
        run_facets["jobDependencies"] = facet(
            "jobDependencies",
            upstream=[
                {
                    "job": {"namespace": job_namespace, "name": job_name},
                    "dependency_type": "IMPLICIT_DEPENDENCY",
                }
                for job_namespace, job_name in upstream
            ],
        )
    if event_type == "START":
        run_facets["processing_engine"] = engine_facet()
    if error is not None:
        run_facets["errorMessage"] = error_facet(error)
    return {
        "eventType": event_type,
        "eventTime": iso(moment),
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id, "facets": run_facets},
        "job": {
            "namespace": namespace,
            "name": name,
            "facets": {
                "jobType": facet(
                    "jobType", processingType="BATCH", integration="PYTHON", jobType="JOB"
                )
            },
        },
        "inputs": [dataset(item) for item in inputs],
        "outputs": [dataset(item) for item in outputs],
    }
