"""The steward's lineage picture, step 1 of 3: what to draw (docs/adr/0047).

The picture reads ``catalog.lineage.graph.lineage_graph``, the same bounded walk that serves
``/api/v1/lineage/graph`` (one walk, two renderings), and turns its result into the layout
input: nodes (datasets, jobs and "+N more" cut markers), edges with their ``kind`` (whatever
kinds the graph function emits: a new kind is drawn with the default edge style) and, in
column mode, each dataset's field list and the column edges between fields. No geometry
here: catalog/picture/layout.py places the nodes, catalog/picture/svg.py draws them.

Expanding a cut marker is one more walk from the marker's node in its direction, merged
into the picture; at most ``MAX_EXPANSIONS`` walks are added, each with its own budget.
"""

from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from django.urls import reverse

from catalog.lineage.request import Direction, Graph, GraphRequest, NodeRef


class Reads(Protocol):
    """What the picture reads, passed in (``catalog.lineage.graph`` is one): the picture
    itself never touches the database."""

    def lineage_graph(self, request: GraphRequest) -> Graph: ...

    def hidden_neighbours(
        self,
        candidates: list[int],
        shown: list[int],
        direction: str,
        as_of: datetime | None,
        cap: int,
    ) -> list[tuple[int, int]]: ...


DEFAULT_DEPTH = 2
MAX_DEPTH = 5
# Datasets and jobs of the main walk; each expansion adds at most EXPANSION_NODES more.
MAX_NODES = 150
EXPANSION_NODES = 50
MAX_EXPANSIONS = 4
# Fields shown per dataset in column mode; hidden neighbours counted per marker.
FIELDS_PER_DATASET = 12
MAX_COLUMN_EDGES = 500  # column edges drawn (the API lists them all)
MARKER_COUNT_CAP = 200
LABEL_CHARS = 30


@dataclass(frozen=True)
class Expansion:
    node: NodeRef
    direction: Direction  # "upstream" or "downstream"

    def __str__(self) -> str:
        return f"{self.node}:{self.direction}"

    @classmethod
    def parse(cls, text: str) -> "Expansion":
        """``dataset:12:upstream``; ValueError otherwise."""
        ref, _, direction = text.rpartition(":")
        if direction not in ("upstream", "downstream"):
            raise ValueError("expected <node>:upstream or <node>:downstream")
        return cls(NodeRef.parse(ref), direction)  # type: ignore[arg-type]


@dataclass
class Controls:
    """What the steward asked for: the picture's form, parsed (catalog/admin/picture.py)."""

    depth: int = DEFAULT_DEPTH
    direction: Direction = "both"
    columns: bool = False
    as_of: datetime | None = None
    expand: list[Expansion] = field(default_factory=list)


@dataclass
class PictureNode:
    id: str  # "dataset:12", "job:7" or, for a marker, "more:dataset:12:upstream"
    kind: str  # "dataset", "job" or "more"
    label: str
    sublabel: str = ""
    title: str = ""
    url: str = ""
    focused: bool = False
    fields: list[str] = field(default_factory=list)
    hidden_fields: int = 0
    count: int = 0  # markers: datasets one hop further that are not drawn (capped)
    count_capped: bool = False
    direction: str = ""  # markers: "upstream" or "downstream"


@dataclass(frozen=True)
class PictureEdge:
    source: str
    target: str
    # the graph's edge kind ("input", "output", ...), "static" for an edge only a JobEvent
    # declares, or "more" for markers
    kind: str
    # False: the job's latest completed run no longer produced it (drawn grey, ADR 0060).
    current: bool = True
    via: str = ""  # "column_lineage": an input only the column lineage named
    # True: runs read/wrote it but none completed (all failed or aborted), drawn red and
    # dashed: attempted I/O, no write (catalog.models.writes, ADR 0069).
    attempted: bool = False


@dataclass(frozen=True)
class PictureColumnEdge:
    source: str
    source_field: str
    target: str
    target_field: str  # "" for a dataset-level dependency (drawn to the dataset itself)
    transformation: str
    current: bool = True


@dataclass
class PictureInput:
    focus: str
    nodes: dict[str, PictureNode] = field(default_factory=dict)
    edges: list[PictureEdge] = field(default_factory=list)
    column_edges: list[PictureColumnEdge] = field(default_factory=list)
    column_edges_hidden: int = 0  # column edges over MAX_COLUMN_EDGES, not drawn
    truncated: bool = False
    cut: dict[str, Any] = field(default_factory=dict)


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """Labels keep the end of a name (the table), which tells names apart best."""
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def admin_change_urls() -> Callable[[str], str]:
    """``dataset:12`` → its admin page. One ``reverse`` per kind, not per node: reverse
    costs about a millisecond, which 300 nodes would turn into a third of a second."""
    marker = 987654321
    templates = {
        kind: reverse(f"admin:catalog_{kind}_change", args=[marker]) for kind in ("dataset", "job")
    }

    def url(ref: str) -> str:
        kind, _, number = ref.partition(":")
        return templates[kind].replace(str(marker), str(int(number)))

    return url


def build_picture(
    root: NodeRef,
    controls: Controls,
    expand_link: Callable[[Expansion], str],
    reads: Reads,
    node_link: Callable[[str], str] | None = None,
) -> PictureInput:
    """The layout input around ``root``; raises catalog.lineage.graph.UnknownNode for a bad root."""
    node_link = node_link or admin_change_urls()
    main = reads.lineage_graph(_request(root, controls, controls.direction, MAX_NODES))
    graphs = [main]
    for expansion in controls.expand[:MAX_EXPANSIONS]:
        if not any(node["id"] == str(expansion.node) for node in _all_nodes(graphs)):
            continue  # only from a node in the picture (a stale link expands nothing)
        graphs.append(
            reads.lineage_graph(
                _request(expansion.node, controls, expansion.direction, EXPANSION_NODES)
            )
        )
    picture = PictureInput(focus=str(root))
    picture.truncated = any(graph.truncated for graph in graphs)
    picture.cut = main.cut
    _merge(picture, graphs, node_link)
    if controls.columns:
        _add_columns(picture, graphs)
    if picture.truncated:
        _add_markers(picture, controls, expand_link, reads)
    return picture


def _request(root: NodeRef, controls: Controls, direction: Direction, budget: int) -> GraphRequest:
    return GraphRequest(
        root=root,
        direction=direction,
        depth=controls.depth,
        max_nodes=budget,
        as_of=controls.as_of,
        columns=controls.columns,
        # Control flow between the drawn jobs, drawn dotted, never as data (ADR 0090).
        control=True,
    )


def _all_nodes(graphs: Iterable[Graph]) -> Iterable[dict[str, Any]]:
    for graph in graphs:
        yield from graph.nodes


def _merge(picture: PictureInput, graphs: list[Graph], node_link: Callable[[str], str]) -> None:
    seen_edges: set[tuple[str, str, str]] = set()
    for node in _all_nodes(graphs):
        if node["id"] in picture.nodes:
            continue
        aliases = [f"{a['namespace']}/{a['name']}" for a in node.get("aliases") or []]
        full = f"{node['namespace']}/{node['name']}"
        title = "\n".join([f"{node['type']} {full}", *[f"also {a}" for a in aliases if a != full]])
        picture.nodes[node["id"]] = PictureNode(
            id=node["id"],
            kind=node["type"],
            label=short(node["name"]),
            sublabel=short(node["namespace"], LABEL_CHARS + 4),
            title=title,
            url=node_link(node["id"]),
            focused=node["id"] == picture.focus,
        )
    for graph in graphs:
        for edge in graph.edges:
            key = (edge["source"], edge["target"], edge["kind"])
            if key in seen_edges:
                continue
            seen_edges.add(key)
            # Declared only (a JobEvent's static lineage, no run): drawn dashed (ADR 0061),
            # never grey (stale is about runs, and no run produced it).
            observed = edge.get("observed", True)
            picture.edges.append(
                PictureEdge(
                    edge["source"],
                    edge["target"],
                    edge["kind"] if observed else "static",
                    # Control flow has no currency (no run produced data through it).
                    edge.get("current", True) or not observed or edge["kind"] == "control",
                    edge.get("via", ""),
                    observed
                    and edge.get("run_count", 0) > 0
                    and edge.get("completed_run_count", 0) == 0,
                )
            )


def _add_columns(picture: PictureInput, graphs: list[Graph]) -> None:
    """Each dataset lists the fields its column edges use; edges run between the fields."""
    fields: dict[str, set[str]] = defaultdict(set)
    candidates: list[PictureColumnEdge] = []
    for graph in graphs:
        # Column edges run field to field; dataset-level dependencies (a field that
        # filters, joins, groups, sorts or windows the whole target) field to dataset.
        for edge in [*(graph.column_edges or []), *(graph.dataset_dependencies or [])]:
            target_field = edge.get("target_field", "")
            candidates.append(
                PictureColumnEdge(
                    edge["source"],
                    edge["source_field"],
                    edge["target"],
                    target_field,
                    " ".join(
                        part
                        for part in (edge["transformation_type"], edge["transformation_subtype"])
                        if part
                    ),
                    # A declared column edge has no run to be stale against (ADR 0061).
                    edge["current"] or edge.get("static", False),
                )
            )
            fields[edge["source"]].add(edge["source_field"])
            if target_field:
                fields[edge["target"]].add(target_field)
    for ref, names in fields.items():
        node = picture.nodes.get(ref)
        if node is None:
            continue
        ordered = sorted(names)
        node.fields = ordered[:FIELDS_PER_DATASET]
        node.hidden_fields = len(ordered) - len(node.fields)
    shown = {(ref, name) for ref, node in picture.nodes.items() for name in node.fields}
    picture.column_edges = sorted(
        {
            edge
            for edge in candidates
            if (edge.source, edge.source_field) in shown
            and ((edge.target, edge.target_field) in shown or not edge.target_field)
            and edge.target in picture.nodes
        },
        key=lambda e: (e.target, e.target_field, e.source, e.source_field),
    )
    # Bounded like the node-to-node edges (ADR 0057): the rest is counted on the page.
    picture.column_edges_hidden = max(len(picture.column_edges) - MAX_COLUMN_EDGES, 0)
    picture.column_edges = picture.column_edges[:MAX_COLUMN_EDGES]


def sides(picture: PictureInput) -> dict[str, set[str]]:
    """For each node, whether it is upstream and/or downstream of the focus (by the edges)."""
    forward: dict[str, list[str]] = defaultdict(list)
    backward: dict[str, list[str]] = defaultdict(list)
    for edge in picture.edges:
        forward[edge.source].append(edge.target)
        backward[edge.target].append(edge.source)
    found: dict[str, set[str]] = defaultdict(set)
    for side, links in (("downstream", forward), ("upstream", backward)):
        queue = deque([picture.focus])
        reached = {picture.focus}
        while queue:
            for following in links[queue.popleft()]:
                if following not in reached:
                    reached.add(following)
                    queue.append(following)
        for ref in reached:
            found[ref].add(side)
    return found


def _add_markers(
    picture: PictureInput, controls: Controls, expand_link: Callable[[Expansion], str], reads: Reads
) -> None:
    """A "+N more" node beside every drawn dataset with undrawn lineage on its side."""
    wanted = {"both": ("upstream", "downstream")}.get(controls.direction, (controls.direction,))
    node_sides = sides(picture)
    shown = sorted(
        int(ref.split(":")[1]) for ref, node in picture.nodes.items() if node.kind == "dataset"
    )
    for direction in wanted:
        candidates = [d for d in shown if direction in node_sides.get(f"dataset:{d}", ())]
        hidden = reads.hidden_neighbours(
            candidates, shown, direction, controls.as_of, MARKER_COUNT_CAP
        )
        for dataset_id, count in hidden:
            anchor = f"dataset:{dataset_id}"
            ref = f"more:{anchor}:{direction}"
            capped = count >= MARKER_COUNT_CAP
            picture.nodes[ref] = PictureNode(
                id=ref,
                kind="more",
                label=f"+{count}{'+' if capped else ''} more",
                title=f"{count}{' or more' if capped else ''} {direction} dataset(s) not drawn: "
                "click to expand from here",
                url=expand_link(Expansion(NodeRef("dataset", dataset_id), direction)),  # type: ignore[arg-type]
                count=count,
                count_capped=capped,
                direction=direction,
            )
            if direction == "upstream":
                picture.edges.append(PictureEdge(ref, anchor, "more"))
            else:
                picture.edges.append(PictureEdge(anchor, ref, "more"))
