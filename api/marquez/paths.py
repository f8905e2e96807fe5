"""Marquez's URL space: the mount's one table of pattern → endpoint, and its matching on
the raw (still percent-encoded) path. Node ids are api/marquez/node_ids.py's.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import unquote

from api.access import COLUMN_EDGE, DATASET, EDGE, EVENT, JOB, RUN, RUN_FACT, STATIC
from api.marquez import events, lineage, resources
from api.marquez.node_ids import NodeId, node_id, parse_node_id

__all__ = ["ROUTES", "Endpoint", "NodeId", "Route", "node_id", "parse_node_id"]


# The mount's one table: each pattern with its endpoint's name, the function that answers a
# GET and the kinds of objects its Marquez shape shows (api/access.py: what a staff session
# needs to read it; tokens with the read scope read everything). A pattern without a
# function is a Marquez write: answered 405 here, but for those api.marquez.curation.WRITES
# answers (named, so a reading can say which write it is).
_JOBS, _DATASETS = (JOB, RUN, DATASET), (DATASET, JOB, RUN)


@dataclass(frozen=True)
class Endpoint:
    pattern: str
    name: str = ""
    read: Callable[..., Any] | None = None
    needs: tuple[str, ...] = ()


def _write(pattern: str, name: str = "") -> Endpoint:
    """A Marquez write: 405, unless named (api.marquez.curation.WRITES answers it)."""
    return Endpoint(pattern, name)


ROUTES: tuple[Endpoint, ...] = (
    Endpoint("namespaces", "namespaces", resources.namespaces, (JOB, DATASET)),
    Endpoint("namespaces/{namespace}", "namespace", resources.namespace, (JOB, DATASET)),
    Endpoint("namespaces/{namespace}/jobs", "jobs", resources.jobs, _JOBS),
    Endpoint("namespaces/{namespace}/jobs/{job}", "job", resources.job, _JOBS),
    # A run's dataset versions carry its run facts (ADR 0061).
    Endpoint(
        "namespaces/{namespace}/jobs/{job}/runs",
        "job_runs",
        resources.job_runs,
        (RUN, JOB, DATASET, RUN_FACT),
    ),
    _write("namespaces/{namespace}/jobs/{job}/versions"),
    _write("namespaces/{namespace}/jobs/{job}/versions/{version}"),
    _write("namespaces/{namespace}/jobs/{job}/tags/{tag}", "job_tag"),
    Endpoint("namespaces/{namespace}/datasets", "datasets", resources.datasets, _DATASETS),
    Endpoint("namespaces/{namespace}/datasets/{dataset}", "dataset", resources.dataset, _DATASETS),
    # createdByRun with its run facts
    Endpoint(
        "namespaces/{namespace}/datasets/{dataset}/versions",
        "dataset_versions",
        resources.dataset_versions,
        (*_DATASETS, RUN_FACT),
    ),
    Endpoint(
        "namespaces/{namespace}/datasets/{dataset}/versions/{version}",
        "dataset_version",
        resources.dataset_version,
        (*_DATASETS, RUN_FACT),
    ),
    _write("namespaces/{namespace}/datasets/{dataset}/tags/{tag}", "dataset_tag"),
    _write("namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}", "field_tag"),
    Endpoint("jobs", "all_jobs", resources.all_jobs, _JOBS),
    Endpoint("jobs/runs/{run}", "run", resources.run, (RUN, JOB, DATASET, RUN_FACT)),
    Endpoint("jobs/runs/{run}/facets", "run_facets", resources.run_facets, (RUN,)),
    _write("jobs/runs/{run}/{transition}"),
    # Observed and declared (static) lineage.
    Endpoint("lineage", "lineage", lineage.lineage, (JOB, DATASET, EDGE, RUN, STATIC)),
    Endpoint(
        "column-lineage", "column_lineage", lineage.column_lineage_graph, (DATASET, COLUMN_EDGE)
    ),
    Endpoint("search", "search", events.search, (JOB, DATASET)),
    Endpoint("tags", "tags", events.tags, (JOB, DATASET)),
    _write("tags/{tag}", "tag"),
    Endpoint("sources", "sources", events.sources),
    Endpoint("sources/{source}", "source", events.source),
    Endpoint("events", "events", events.events, (EVENT,)),
    Endpoint("events/lineage", "events", events.events, (EVENT,)),
    Endpoint("events/{namespace}", "events", events.events, (EVENT,)),
    Endpoint("stats/lineage-events", "stats_lineage_events", events.stats_lineage_events, (EVENT,)),
    Endpoint("stats/{asset}", "stats_assets", events.stats_assets, (JOB, DATASET)),
)
# The readings below name an endpoint; the view looks its function and needs up here.
ENDPOINTS: dict[str, Endpoint] = {route.name: route for route in ROUTES if route.name}
READS: dict[str, Callable[..., Any]] = {
    route.name: route.read for route in ROUTES if route.read is not None
}

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
_RAW = [(_compile(route.pattern), route.name) for route in ROUTES]
_DECODED = [
    (tuple(route.pattern.split("/")), route.name)
    for route in sorted(ROUTES, key=lambda route: -len(_PLACEHOLDER.sub("", route.pattern)))
]


@dataclass(frozen=True)
class Route:
    """One reading of a path: the endpoint's name ("" for a write answered 405) and the
    names in it."""

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
    if fits[0][0]:
        yield from _walk(tokens, segments, fits, 0, 0, {})


def _walk(
    tokens: tuple[str, ...],
    segments: list[str],
    fits: list[list[bool]],
    t: int,
    i: int,
    names: dict[str, str],
) -> Iterator[dict[str, str]]:
    """``_splits``' readings from token ``t`` and segment ``i`` on. Only entered where
    ``fits[t][i]``: every branch taken ends in a reading. A module function, not a closure
    that calls itself: that closure and its cell were a reference cycle left to the garbage
    collector by every Marquez path read (ADR 0132)."""
    if t == len(tokens):
        yield names
        return
    name = _placeholder(tokens[t])
    if name is None:
        yield from _walk(tokens, segments, fits, t + 1, i + 1, names)
        return
    for j in range(i + 1, len(segments) + 1):
        if fits[t + 1][j] and (j > i + 1 or segments[i]):
            reading = {**names, name: "/".join(segments[i:j])}
            yield from _walk(tokens, segments, fits, t + 1, j, reading)


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
