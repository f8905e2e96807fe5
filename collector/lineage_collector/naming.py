"""OpenLineage dataset naming: which namespace and name a table or an S3 object gets.

Follows https://openlineage.io/docs/spec/naming so that the collector's datasets join up
with what Spark, Airflow and dbt report for the same tables:

* PostgreSQL ``postgres://{host}:{port}`` + ``{database}.{schema}.{table}``
* MySQL ``mysql://{host}:{port}`` + ``{database}.{table}``
* SQL Server ``mssql://{host}:{port}`` + ``{database}.{schema}.{table}``
* Redshift ``redshift://{cluster}.{region}:{port}`` + ``{database}.{schema}.{table}``
* Snowflake ``snowflake://{account}`` + ``{DATABASE}.{SCHEMA}.{TABLE}``
* BigQuery ``bigquery`` + ``{project}.{dataset}.{table}``
* Athena ``awsathena://athena.{region}.amazonaws.com`` + ``{catalog}.{database}.{table}``
* Trino ``trino://{host}:{port}`` + ``{catalog}.{schema}.{table}``
* SQLite ``sqlite://{absolute path}`` + ``{table}``
* S3 ``s3://{bucket}`` + the object's folder, partition folders trimmed
"""

import os
import re
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit


class DatasetName(NamedTuple):
    """An OpenLineage dataset identifier."""

    namespace: str
    name: str


@dataclass(frozen=True)
class Platform:
    """Where the tables of one connection live: namespace plus the defaults for names."""

    scheme: str
    namespace: str
    database: str | None
    default_schema: str | None
    parts: int  # how many dotted parts a full name has (3: db.schema.table, 2: db.table)
    case: str = "keep"  # "lower" or "upper": how unquoted identifiers are folded


# The port a namespace gets when the connection URL names none. The naming spec writes the
# port in these namespaces, and the catalog's normalisation adds the same default to a
# namespace sent without one (tests/catalog/test_naming_contract.py holds the two together).
DEFAULT_PORTS = {
    "postgres": 5432,
    "mysql": 3306,
    "mssql": 1433,
    "redshift": 5439,
    "trino": 8080,
}

# SQLAlchemy dialect names (the part before "+driver") to OpenLineage schemes.
_SCHEMES = {
    "postgresql": "postgres",
    "postgres": "postgres",
    "psycopg": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mssql": "mssql",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "awsathena": "awsathena",
    "athena": "awsathena",
    "trino": "trino",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
}

# sqlglot dialect names per scheme.
SQL_DIALECTS = {
    "postgres": "postgres",
    "mysql": "mysql",
    "mssql": "tsql",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "awsathena": "athena",
    "trino": "trino",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
}

_REDSHIFT_HOST = re.compile(
    r"^([^.]+)\.[^.]+\.([a-z0-9-]+)\.redshift(?:-serverless)?\.amazonaws\.com$"
)
_ATHENA_HOST = re.compile(r"^athena\.([a-z0-9-]+)\.amazonaws\.com$")


def platform_for_url(url: Any) -> Platform:
    """The platform of a SQLAlchemy URL (an ``Engine.url``, a ``URL`` or a URL string)."""
    drivername, host, port, database, query = _url_parts(url)
    dialect = drivername.split("+", 1)[0].lower()
    scheme = _SCHEMES.get(dialect, dialect)
    host = (host or "localhost").lower()
    if scheme == "postgres" and _REDSHIFT_HOST.match(host):
        scheme = "redshift"
    if scheme == "postgres":
        return Platform(
            scheme,
            f"postgres://{host}:{port or DEFAULT_PORTS[scheme]}",
            database,
            "public",
            3,
            "lower",
        )
    if scheme == "redshift":
        match = _REDSHIFT_HOST.match(host)
        authority = f"{match.group(1)}.{match.group(2)}" if match else host
        return Platform(
            scheme,
            f"redshift://{authority}:{port or DEFAULT_PORTS[scheme]}",
            database,
            "public",
            3,
            "lower",
        )
    if scheme == "mysql":
        return Platform(
            scheme, f"mysql://{host}:{port or DEFAULT_PORTS[scheme]}", database, None, 2
        )
    if scheme == "mssql":
        return Platform(
            scheme, f"mssql://{host}:{port or DEFAULT_PORTS[scheme]}", database, "dbo", 3
        )
    if scheme == "snowflake":
        database_name, _, schema = (database or "").partition("/")
        return Platform(
            scheme,
            f"snowflake://{host}",
            database_name.upper() or None,
            (schema or "PUBLIC").upper(),
            3,
            "upper",
        )
    if scheme == "bigquery":
        return Platform(scheme, "bigquery", host if host != "localhost" else None, database, 3)
    if scheme == "awsathena":
        match = _ATHENA_HOST.match(host)
        region = match.group(1) if match else query.get("region_name", "us-east-1")
        catalog = query.get("catalog_name", "AwsDataCatalog")
        return Platform(
            scheme, athena_namespace(region), catalog, database or "default", 3, "lower"
        )
    if scheme == "trino":
        catalog, _, schema = (database or "").partition("/")
        return Platform(
            scheme, f"trino://{host}:{port or DEFAULT_PORTS[scheme]}", catalog or None, schema, 3
        )
    if scheme in {"sqlite", "duckdb"}:
        path = database or ":memory:"
        if path != ":memory:":
            path = os.path.abspath(path)
        return Platform(scheme, f"{scheme}://{path}", None, None, 1)
    authority = f"{host}:{port}" if port else host
    return Platform(scheme, f"{scheme}://{authority}", database, None, 3)


def _url_parts(url: Any) -> tuple[str, str | None, int | None, str | None, dict[str, str]]:
    if hasattr(url, "drivername"):
        query = {key: str(value) for key, value in dict(getattr(url, "query", {})).items()}
        return url.drivername, url.host, url.port, url.database, query
    text = str(url)
    # Driver names such as "redshift+redshift_connector" are not valid URL schemes.
    scheme, _, rest = text.partition("://")
    parts = urlsplit(f"db://{rest}")
    query: dict[str, str] = {}
    for pair in parts.query.split("&"):
        if "=" in pair:
            key, value = pair.split("=", 1)
            query[key] = unquote(value)
    database = unquote(parts.path[1:]) if parts.path.startswith("/") else None
    if scheme.startswith("sqlite"):
        # sqlite:///relative.db and sqlite:////absolute.db keep their path verbatim.
        database = unquote(text.split(":///", 1)[1]) if ":///" in text else None
    return scheme, parts.hostname, parts.port, database or None, query


def athena_namespace(region: str) -> str:
    """The namespace Airflow's Athena operator uses for a region."""
    return f"awsathena://athena.{region}.amazonaws.com"


def fold(identifier: str, case: str) -> str:
    """Fold an unquoted identifier the way the database does."""
    if case == "lower":
        return identifier.lower()
    if case == "upper":
        return identifier.upper()
    return identifier


def table_dataset(platform: Platform, table: tuple[str | None, str | None, str]) -> DatasetName:
    """Name a parsed ``(catalog, schema, table)`` on ``platform``, filling the defaults."""
    catalog, schema, name = table
    if platform.parts == 1:
        # SQLite: "main" is the default database; attached ones keep their prefix.
        qualified = name if schema in (None, "main") else f"{schema}.{name}"
        return DatasetName(platform.namespace, qualified)
    if platform.parts == 2:
        database = schema or catalog or platform.database
        return DatasetName(platform.namespace, f"{database}.{name}" if database else name)
    database = catalog or platform.database
    schema = schema or platform.default_schema
    parts = [part for part in (database, schema, name) if part]
    return DatasetName(platform.namespace, ".".join(parts))


# A partition folder: key=value (Hive style) or a purely numeric date/time part.
_PARTITION = re.compile(r"^(?:[^=/]+=[^/]*|\d{1,4}|\d{4}-\d{2}(?:-\d{2})?(?:[T ]\d{2}.*)?)$")
_S3_SCHEMES = ("s3://", "s3a://", "s3n://")


def s3_dataset(bucket: str, key: str, *, is_prefix: bool = False) -> DatasetName:
    """The prefix-level dataset of an S3 object: its folder with partition folders trimmed.

    ``orders/2026/11/29/part-0.parquet`` and ``orders/dt=2026-11-29/part-0.parquet`` are both
    ``orders``; an object at the bucket root is its own dataset; a key made only of partition
    folders is the bucket (``/``). With ``is_prefix`` the whole key is a folder (UNLOAD, COPY).
    """
    key = key.lstrip("/")
    segments = [segment for segment in key.split("/") if segment]
    if not segments:
        return DatasetName(f"s3://{bucket}", "/")
    if not is_prefix and not key.endswith("/"):
        if len(segments) == 1:
            return DatasetName(f"s3://{bucket}", segments[0])
        segments = segments[:-1]
    while segments and _PARTITION.match(segments[-1]):
        segments.pop()
    # A partition folder in the middle (a/dt=1/b) still ends the dataset at its first one.
    for index, segment in enumerate(segments):
        if _PARTITION.match(segment):
            segments = segments[:index]
            break
    return DatasetName(f"s3://{bucket}", "/".join(segments) or "/")


def s3_uri_dataset(uri: str, *, is_prefix: bool = False) -> DatasetName:
    """:func:`s3_dataset` for an ``s3://bucket/key`` URI (``s3a``/``s3n`` are read as ``s3``)."""
    for scheme in _S3_SCHEMES:
        if uri.startswith(scheme):
            rest = uri[len(scheme) :]
            bucket, _, key = rest.partition("/")
            # s3n://ACCESS_KEY:SECRET@bucket/... is an old Hadoop form: the keys are no name.
            if "@" in bucket:
                bucket = bucket.rpartition("@")[2]
            elif ":" in bucket and "@" in rest:
                # No bucket name has a ":": the keys, with a "/" in the secret (AWS secrets
                # are base64, and many have one), end at the first "@" (they have none).
                bucket, _, key = rest.partition("@")[2].partition("/")
            return s3_dataset(bucket, key, is_prefix=is_prefix)
    raise ValueError("not an S3 URI")


def _port_or_none(netloc: str) -> bool:
    """Whether what follows the authority's last ":" is a port (or the ":" is an IPv6's)."""
    host, _, port = netloc.rpartition(":")
    return port.isdigit() or (host.startswith("[") and not host.endswith("]"))


def dataset_name(
    source: Any,
    table: str | None = None,
    *,
    default_schema: str | None = None,
) -> DatasetName:
    """The OpenLineage namespace and name the collector gives a table or an S3 path.

    ``source`` is an S3 URI (``s3://bucket/orders/2026/11/29/x.parquet``), a dataset URI
    (``postgres://host:5432/db.public.orders``), or a SQLAlchemy engine / URL / URL string
    together with ``table`` (``"orders"``, ``"sales.orders"`` or ``"db.sales.orders"``).
    """
    if isinstance(source, DatasetName):
        return source
    if isinstance(source, tuple) and len(source) == 2:
        return DatasetName(str(source[0]), str(source[1]))
    if table is None:
        text = str(source)
        if text.startswith(_S3_SCHEMES):
            return s3_uri_dataset(text)
        parts = urlsplit(text)
        if not parts.scheme or not parts.netloc:
            # The URI is not quoted: it may hold a password (this message is logged).
            raise ValueError("not a dataset URI; pass an engine and a table name")
        # user:password@ never leaves the process (the naming spec has no user info either).
        authority = parts.netloc.rpartition("@")[2]
        path = parts.path
        if "@" not in parts.netloc and ":" in parts.netloc and not _port_or_none(parts.netloc):
            # "user:pa/ss@host:port/name": a "/" in the password ended the authority early,
            # at what is no port. The user info runs to the first "@" after it.
            if "@" not in path:
                raise ValueError("not a dataset URI: what follows its host's ':' is no port")
            authority, _, name = path.partition("@")[2].partition("/")
            path = f"/{name}"
        return DatasetName(f"{parts.scheme}://{authority}", unquote(path.lstrip("/")))
    url = getattr(source, "url", source)
    platform = platform_for_url(url)
    if default_schema:
        platform = Platform(
            platform.scheme,
            platform.namespace,
            platform.database,
            default_schema,
            platform.parts,
            platform.case,
        )
    pieces = [fold(piece, platform.case) for piece in table.split(".")]
    padded: list[str | None] = [None, None, *pieces]
    return table_dataset(platform, (padded[-3], padded[-2], pieces[-1]))
