"""Marquez's URL space, routed on the raw (still percent-encoded) path, and its node ids.

Why the raw path: Marquez names are percent-encoded path segments and may contain ``/``
(``/namespaces/s3%3A%2F%2Fbucket/datasets/raw%2Forders``). WSGI servers decode PATH_INFO,
after which ``s3://bucket/datasets/raw/orders`` no longer says where one name ends, so the
route is matched on the raw path (gunicorn's ``RAW_URI``, uWSGI's ``REQUEST_URI``) with one
segment per name, and each name is decoded afterwards.

Without a raw path (granian gives none, ADR 0052; or a proxy decoded ``%2F`` already) a path
can have several readings: ``namespaces/ns/datasets/x/versions`` is dataset ``x``'s versions
or the dataset named ``x/versions``. ``resolve_all`` lists them, the usual one first (names
up to the next keyword segment), and the view answers with the first reading whose names
exist (api/marquez/views.py). Hostile paths cost little: the readings are capped, and a path
of more than ``MAX_SEGMENTS`` segments gets only the first.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
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

# Readings of one decoded path are few in practice; these bound what a hostile path (hundreds
# of keyword segments) can cost, since the view may look each reading up.
MAX_READINGS = 32
MAX_SEGMENTS = 64


def _compile(pattern: str) -> re.Pattern[str]:
    parts = _PLACEHOLDER.split(pattern)
    regex = "".join(
        f"(?P<{part}>[^/]+)" if index % 2 else re.escape(part) for index, part in enumerate(parts)
    )
    return re.compile(f"^{regex}$")


# Raw paths: one segment per name. Decoded paths: a name is one or more whole segments, and
# the routes with the most fixed text come first (".../daily/versions" reads first as the
# versions of "daily", not a dataset named "daily/versions"; "events/lineage" as the fixed
# route, not the events of namespace "lineage").
_RAW = [(_compile(pattern), handler) for pattern, handler in ROUTES]
_DECODED = [
    (tuple(pattern.split("/")), handler)
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
    if raw is None:
        return next(_readings(_segments(decoded_rest)), None)
    path = raw.strip("/")
    for regex, handler in _RAW:
        match = regex.match(path)
        if match:
            return Route(handler, {key: unquote(value) for key, value in match.groupdict().items()})
    return None


def resolve_all(decoded_rest: str) -> list[Route]:
    """Every reading of a decoded path (no raw path says where its names end), best first.

    Best is ``resolve``'s order: the routes with the most fixed text, then shorter earlier
    names. At most MAX_READINGS; only the first for a path of more than MAX_SEGMENTS segments.
    """
    segments = _segments(decoded_rest)
    limit = 1 if len(segments) > MAX_SEGMENTS else MAX_READINGS
    return list(islice(_readings(segments), limit))


def _segments(decoded_rest: str) -> list[str]:
    return decoded_rest.strip("/").split("/")


def _readings(segments: list[str]) -> Iterator[Route]:
    present = set(segments)
    for tokens, handler in _DECODED:
        # A cheap first test: a route whose fixed text is not all in the path is skipped.
        if all(token in present for token in tokens if _placeholder(token) is None):
            for names in _splits(tokens, segments):
                yield Route(handler, names)


def _placeholder(token: str) -> str | None:
    """The name a pattern segment stands for (``{job}``: ``job``); None for fixed text."""
    return token[1:-1] if token.startswith("{") else None


def _splits(tokens: tuple[str, ...], segments: list[str]) -> Iterator[dict[str, str]]:
    """Every way ``segments`` fill a pattern's ``tokens``: fixed text matches one segment,
    a placeholder takes one or more (never empty text). Earlier names shortest first: the
    order a lazy ``.+?`` regex tries them in.
    """
    fits = _fits(tokens, segments)

    def walk(t: int, i: int, names: dict[str, str]) -> Iterator[dict[str, str]]:
        # Only entered where fits[t][i]: every branch taken ends in a reading.
        if t == len(tokens):
            yield names
            return
        name = _placeholder(tokens[t])
        if name is None:
            yield from walk(t + 1, i + 1, names)
            return
        for j in range(i + 1, len(segments) + 1):
            if fits[t + 1][j] and (j > i + 1 or segments[i]):
                yield from walk(t + 1, j, {**names, name: "/".join(segments[i:j])})

    if fits[0][0]:
        yield from walk(0, 0, {})


def _fits(tokens: tuple[str, ...], segments: list[str]) -> list[list[bool]]:
    """``fits[t][i]``: whether ``tokens[t:]`` can take exactly ``segments[i:]``.

    Worked out backwards, one pass per token, so a path of many keyword segments costs
    tokens x segments steps, where backtracking (as a regex does) costs their product.
    """
    count = len(segments)
    fits = [[False] * (count + 1) for _ in tokens] + [[False] * count + [True]]
    for t in reversed(range(len(tokens))):
        after = fits[t + 1]
        if _placeholder(tokens[t]) is None:
            for i in range(count):
                fits[t][i] = segments[i] == tokens[t] and after[i + 1]
            continue
        later = False  # after[j] for some j >= i + 2: a name of two or more segments fits
        for i in reversed(range(count)):
            fits[t][i] = (bool(segments[i]) and after[i + 1]) or later
            later = later or after[i + 1]
    return fits


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
