"""Marquez's URL space, routed on the raw (still percent-encoded) path, and its node ids.

Why the raw path: Marquez names are percent-encoded path segments and may contain ``/``
(``/namespaces/s3%3A%2F%2Fbucket/datasets/raw%2Forders``). WSGI servers decode PATH_INFO,
after which ``s3://bucket/datasets/raw/orders`` no longer says where one name ends, so the
route is matched on the raw path (gunicorn's ``RAW_URI``, uWSGI's ``REQUEST_URI``) with one
segment per name, and each name is decoded afterwards. A server that gives no raw path gets
a best-effort match on the decoded path (names up to the next keyword segment).
"""

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from api.marquez.errors import MarquezError

# (pattern, handler name); a handler name of "" is a Marquez write: answered 405 here.
ROUTES: tuple[tuple[str, str], ...] = (
    ("namespaces", "namespaces"),
    ("namespaces/{namespace}", "namespace"),
    ("namespaces/{namespace}/jobs", "jobs"),
    ("namespaces/{namespace}/jobs/{job}", "job"),
    ("namespaces/{namespace}/jobs/{job}/runs", "job_runs"),
    ("namespaces/{namespace}/jobs/{job}/versions", ""),
    ("namespaces/{namespace}/jobs/{job}/versions/{version}", ""),
    ("namespaces/{namespace}/jobs/{job}/tags/{tag}", ""),
    ("namespaces/{namespace}/datasets", "datasets"),
    ("namespaces/{namespace}/datasets/{dataset}", "dataset"),
    ("namespaces/{namespace}/datasets/{dataset}/versions", "dataset_versions"),
    ("namespaces/{namespace}/datasets/{dataset}/versions/{version}", "dataset_version"),
    ("namespaces/{namespace}/datasets/{dataset}/tags/{tag}", ""),
    ("namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}", ""),
    ("jobs", "all_jobs"),
    ("jobs/runs/{run}", "run"),
    ("jobs/runs/{run}/facets", "run_facets"),
    ("jobs/runs/{run}/{transition}", ""),
    ("lineage", "lineage"),
    ("column-lineage", "column_lineage"),
    ("search", "search"),
    ("tags", "tags"),
    ("tags/{tag}", ""),
    ("sources", "sources"),
    ("sources/{source}", "source"),
    ("events", "events"),
    ("events/lineage", "events"),
    ("events/{namespace}", "events"),
    ("stats/lineage-events", "stats_lineage_events"),
    ("stats/{asset}", "stats_assets"),
)

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _compile(pattern: str, name_regex: str) -> re.Pattern[str]:
    parts = _PLACEHOLDER.split(pattern)
    regex = "".join(
        f"(?P<{part}>{name_regex})" if index % 2 else re.escape(part)
        for index, part in enumerate(parts)
    )
    return re.compile(f"^{regex}$")


# Raw paths: one segment per name. Decoded paths: a name runs to the next keyword, so the
# routes with the most fixed text are tried first (".../daily/versions" is not a dataset
# named "daily/versions"; "events/lineage" is not the events of namespace "lineage").
_RAW = [(_compile(pattern, "[^/]+"), handler) for pattern, handler in ROUTES]
_DECODED = [
    (_compile(pattern, ".+?"), handler)
    for pattern, handler in sorted(ROUTES, key=lambda route: -len(_PLACEHOLDER.sub("", route[0])))
]


@dataclass(frozen=True)
class Route:
    handler: str
    kwargs: dict[str, str]


def raw_rest(meta: dict[str, Any], decoded_path: str, decoded_rest: str) -> str | None:
    """The part of the raw request path after the mount, or None when the server gave none."""
    raw = meta.get("RAW_URI") or meta.get("REQUEST_URI")
    if not raw:
        return None
    raw = raw.split("?", 1)[0]
    if raw.lower().startswith(("http://", "https://")):  # absolute-form request target
        raw = "/" + raw.split("://", 1)[1].partition("/")[2]
    prefix = decoded_path[: len(decoded_path) - len(decoded_rest)]
    if not raw.startswith(prefix):
        return None
    return raw[len(prefix) :]


def resolve(decoded_rest: str, raw: str | None) -> Route | None:
    """The route of ``raw`` (preferred) or ``decoded_rest``; None for an unknown path.

    Earlier routes win, so the fixed ``events/lineage`` is not read as a namespace.
    """
    candidates = _RAW if raw is not None else _DECODED
    path = (raw if raw is not None else decoded_rest).strip("/")
    for regex, handler in candidates:
        match = regex.match(path)
        if match:
            kwargs = match.groupdict()
            if raw is not None:
                kwargs = {key: unquote(value) for key, value in kwargs.items()}
            return Route(handler, kwargs)
    return None


# Marquez's node ids: split on ":" except where ":" starts "//" or a digit (a scheme or a
# port), so "dataset:postgres://db:5432:public.orders" is (dataset, postgres://db:5432,
# public.orders). A "#<version>" suffix names a version; this catalog answers the current one.
_ID_SPLIT = re.compile(r":(?!//|\d)")
_VERSION = re.compile(r"#[0-9a-fA-F-]{36}$")
_PARTS = {"dataset": 3, "job": 3, "datasetField": 4}


@dataclass(frozen=True)
class NodeId:
    kind: str  # dataset, job or datasetField
    namespace: str
    name: str
    field: str = ""


def parse_node_id(value: str) -> NodeId:
    text = _VERSION.sub("", value.strip())
    kind = text.split(":", 1)[0]
    expected = _PARTS.get(kind)
    if expected is None:
        raise MarquezError(
            400, f"nodeId must start with dataset:, job: or datasetField: (got {value!r})."
        )
    parts = text.split(":")
    if len(parts) != expected:
        parts = _ID_SPLIT.split(text)
    if len(parts) < expected or not all(parts[1:]):
        raise MarquezError(400, f"nodeId {value!r} is not {kind}:<namespace>:<name>.")
    if len(parts) > expected:
        # A name holding ":" that the split could not tell apart: it belongs to the name.
        if kind == "datasetField":
            parts = [parts[0], parts[1], ":".join(parts[2:-1]), parts[-1]]
        else:
            parts = [parts[0], parts[1], ":".join(parts[2:])]
    return NodeId(kind, parts[1], parts[2], parts[3] if kind == "datasetField" else "")


def node_id(kind: str, namespace: str, name: str, field: str | None = None) -> str:
    text = f"{kind}:{namespace}:{name}"
    return f"{text}:{field}" if field is not None else text
