"""Dataset and job names: normalisation as OpenLineage clients do, keys, run ids.

Pure functions (no database) so that derivation, lookups and tests agree on one spelling.
See docs/derivation.md, "Names".
"""

import hashlib
import re
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from core.redaction import PORT_AND_PATH, redact_text, splice, url_windows

# Default ports dropped from namespaces (the naming spec writes them only when not default).
DEFAULT_PORTS = {
    "postgres": 5432,
    "postgresql": 5432,
    "mysql": 3306,
    "hive": 9083,
    "trino": 8080,
    "kafka": 9092,
    "redshift": 5439,
    "mssql": 1433,
    "sqlserver": 1433,
    "oracle": 1521,
    "db2": 50000,
    "teradata": 1025,
    "cassandra": 9042,
    "mongodb": 27017,
    "clickhouse": 8123,
}
# Schemes that are spellings of another (Hadoop's S3 connectors, the PostgreSQL JDBC name).
SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3", "postgresql": "postgres", "gcs": "gs"}
# Storage schemes whose namespace is a bucket/host and whose name is a path.
PATH_SCHEMES = {"s3", "gs", "abfss", "wasbs", "hdfs", "file", "dbfs"}

# The namespace under which /api/v1/lineage/edges table names are stored; the name is the
# table string exactly as posted (``mlflow.Production.credit_risk``). See ADR 0022.
EDGE_API_NAMESPACE = "table"
# The namespace of jobs named by an edge's ``pipeline`` when it has no ``scheme:`` prefix.
EDGE_API_JOB_NAMESPACE = "edge-api"

_RUN_ID_NAMESPACE = uuid.UUID("6f1c9d62-4b1e-5d2a-9a4e-2f0c7b9e1d35")
_MULTI_SLASH = re.compile(r"/{2,}")


def without_credentials(text: str) -> str:
    """``text`` without the user info of any URL in it, and with secret ``key=value``
    parameters redacted: ``jdbc:mysql://u:S3CRET@db2/x`` → ``jdbc:mysql://db2/x``.

    The OpenLineage naming spec writes names without credentials; producers do not always
    follow it, and a name is shown everywhere (lists, search, graph), so derivation stores
    it clean. Linear in the text, like ``core.redaction``.
    """
    if "://" in text and "@" in text:
        text = splice(text, _user_info_spans(text))
    return redact_text(text)


def producer_text(value: Any, limit: int | None = None) -> str:
    """``value`` as the catalog stores it: secrets redacted (``token=***REDACTED***``).

    Derivation copies text out of facets into columns (descriptions, schema fields, column
    transformations, run errors, job types, metadata subjects) that every read path shows
    and search indexes, so it stores them redacted once, by ``core.redaction``'s one
    function (ADR 0056); a change of the redaction settings reaches them with
    ``manage.py rederive``. Redacted before it is cut to ``limit``, so a cut never keeps
    part of a secret the whole text would have hidden.
    """
    text = value if isinstance(value, str) else "" if value is None else str(value)
    text = redact_text(text) if text else text
    return text[:limit] if limit else text


def _user_info_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, "")`` for the user info (and its ``@``) of each URL in ``text``."""
    for start, limit in url_windows(text):
        slash = text.find("/", start, limit)
        authority_end = slash if slash >= 0 else limit
        cut = text.rfind("@", start, authority_end)
        colon = text.find(":", start, authority_end)
        if cut < 0 and colon >= 0:  # a password holding "/" (or "@") still ends at the last @
            at = text.rfind("@", start, limit)
            if at > colon + 1 and not PORT_AND_PATH.match(text, colon + 1):
                cut = at
        if cut >= 0:
            yield start, cut + 1, ""


def normalise_namespace(namespace: str) -> str:
    """One spelling per namespace: ``s3a://bucket/`` → ``s3://bucket``.

    Schemes and hosts are lower-cased, scheme spellings unified (s3a/s3n → s3), credentials
    and trailing slashes dropped, secret parameters redacted. OpenLineage's naming spec
    writes database namespaces with their port (``postgres://host:5432``), so a missing
    default port is added, never removed.
    """
    text = namespace.strip()
    if "://" not in text:
        return redact_text(text.rstrip("/") or text)
    scheme, rest = text.split("://", 1)
    scheme = scheme.lower()
    scheme = SCHEME_ALIASES.get(scheme, scheme)
    authority, _, path = rest.partition("/")
    if "@" in authority:  # credentials never belong in a name
        authority = authority.rsplit("@", 1)[1]
    if authority.startswith("["):  # IPv6 literal: keep as written
        authority = authority.lower()
    else:
        host, _, port = authority.partition(":")
        host = host.lower()
        default = DEFAULT_PORTS.get(scheme)
        if not port and default is not None and host:
            port = str(default)
        authority = f"{host}:{port}" if port else host
    path = path.strip("/")
    result = f"{scheme}://{authority}"
    if path:
        result += "/" + _MULTI_SLASH.sub("/", path)
    # Secret parameters too (``sqlserver://h:1433;password=x``), as in names.
    return redact_text(result)


def normalise_name(namespace: str, name: str) -> str:
    """Paths: no trailing slash, no ``//``; object-store keys without a leading slash; no
    credentials."""
    text = without_credentials(name.strip())
    scheme = namespace.split("://", 1)[0] if "://" in namespace else ""
    if scheme in PATH_SCHEMES:
        if "://" in text:  # a full URI as name (seen from some listeners): keep its path
            text = urlsplit(text).path or text
        text = _MULTI_SLASH.sub("/", text)
        if len(text) > 1:
            text = text.rstrip("/")
        if scheme in {"s3", "gs", "abfss", "wasbs"}:
            # Object stores: the key without a leading slash (spec: s3://bucket + path/to/obj).
            text = text.lstrip("/") or "/"
    return text


def normalise(namespace: str, name: str) -> tuple[str, str]:
    namespace = normalise_namespace(namespace)
    return namespace, normalise_name(namespace, name)


def key_hash(namespace: str, name: str) -> bytes:
    """The bounded natural key of (namespace, name): sha256 over both, NUL-separated."""
    return hashlib.sha256(namespace.encode() + b"\0" + name.encode()).digest()


def job_name(namespace: str, name: str) -> tuple[str, str]:
    """A job's (namespace, name) as the catalog keeps it: as sent, credentials removed
    (names are shown everywhere, so credentials never reach the catalog)."""
    return without_credentials(namespace), without_credentials(name)


def job_key(namespace: str, name: str) -> bytes:
    """The natural key a job is stored under, from the names a producer sent: derivation
    and every lookup by name (``Job.objects.for_name``) agree on it."""
    return key_hash(*job_name(namespace, name))


def job_run_uuid(run_id: str, job_namespace: str, job_name_: str) -> uuid.UUID:
    """``run_uuid`` of a runId sent for a job named as the producer named it."""
    return run_uuid(run_id, *job_name(job_namespace, job_name_))


def text_run_id(run_id: str) -> str | None:
    """The runId as sent when it is no UUID, else None: such a runId's runs have a
    ``run_uuid`` per job (``run_uuid``), so the runs other jobs keep of it are found, locked
    and flagged by the text (ADR 0201)."""
    try:
        uuid.UUID(run_id)
    except ValueError:
        return run_id
    return None


def run_uuid(run_id: str, job_namespace: str, job_name: str) -> uuid.UUID:
    """A runId as a UUID: itself when it is one, else uuid5 over (job namespace, name, runId).

    Non-UUID runIds (``run_id``, Airflow ``dag.task.2024-01-01``) are only unique within a
    job, so the job is part of the mapping.
    """
    try:
        return uuid.UUID(run_id)
    except (ValueError, AttributeError, TypeError):
        return uuid.uuid5(_RUN_ID_NAMESPACE, f"{job_namespace}\0{job_name}\0{run_id}")


def edge_table(table: str) -> tuple[str, str]:
    """An edge-API table string as an alias: (EDGE_API_NAMESPACE, the string as posted,
    without credentials)."""
    return EDGE_API_NAMESPACE, without_credentials(table.strip())


def split_pipeline(pipeline: str | None) -> tuple[str, str, str | None]:
    """``dagster:<job>:<run>`` → ("dagster", job, run); ``x`` → ("edge-api", "x", None)."""
    text = without_credentials((pipeline or "").strip())
    if not text:
        return EDGE_API_JOB_NAMESPACE, "unnamed", None
    parts = text.split(":", 2)
    if len(parts) == 3 and all(parts):
        return parts[0], parts[1], parts[2]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1], None
    return EDGE_API_JOB_NAMESPACE, text, None
