"""What a lineage graph read is asked (``GraphRequest``) and what it answers (``Graph``).

Plain values, no database: the walk (``catalog.lineage.graph``), its assembly, the diff,
the picture and the API all speak these, and import nothing else of one another for them.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Direction = Literal["upstream", "downstream", "both"]
# Which lineage a read walks: what runs did, what JobEvents declare, or both (ADR 0061).
Lineage = Literal["observed", "static", "all"]

DEFAULT_DEPTH = 3
MAX_DEPTH = 10
DEFAULT_MAX_NODES = 200
MAX_MAX_NODES = 2000
# Edges among the chosen nodes and column edges are capped too (multiple jobs per pair).
EDGES_PER_NODE = 20
# The kinds of edges a graph can be asked for (``edges=``): data lineage, always drawn,
# and control flow between jobs (ADR 0090).
EDGE_KINDS = ("data", "control")
# "What was cut" lists at most this many node ids.
CUT_LIST_LIMIT = 100


@dataclass(frozen=True)
class NodeRef:
    kind: Literal["dataset", "job"]
    id: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"

    @classmethod
    def parse(cls, text: str) -> "NodeRef":
        """``dataset:12`` or ``job:7``; ValueError otherwise."""
        kind, _, number = text.partition(":")
        if kind not in ("dataset", "job") or not number.isdigit():
            raise ValueError("expected dataset:<id> or job:<id>")
        value = int(number)
        if not 0 < value < 2**63:
            raise ValueError("the id is out of range")
        return cls(kind, value)  # type: ignore[arg-type]


@dataclass
class GraphRequest:
    root: NodeRef
    direction: Direction = "both"
    depth: int = DEFAULT_DEPTH
    max_nodes: int = DEFAULT_MAX_NODES
    as_of: datetime | None = None
    since: datetime | None = None
    columns: bool = False
    lineage: Lineage = "all"
    # Also the jobs' control edges (jobDependencies, ADR 0090): ``edges=data,control``.
    control: bool = False
    # Internal: False when the store holds no declaration at all, as the root's existence
    # check read it (catalog.lineage.graph). The table-level static reads then find nothing
    # and are not sent: planning them was a fifth of a graph's database CPU (ADR 0104).
    declarations: bool = True
    # Internal, read the same way: False when no dataset or job is retired, so the edge reads
    # leave out their retirement probes (catalog.lineage.window.observed).
    retirements: bool = True

    @property
    def observed(self) -> bool:
        return self.lineage != "static"

    @property
    def static(self) -> bool:
        return self.lineage != "observed"

    @property
    def reads_static(self) -> bool:
        """Static lineage is asked for and the store may hold some (``declarations``)."""
        return self.static and self.declarations


@dataclass
class Graph:
    root: NodeRef
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    column_edges: list[dict[str, Any]] | None = None
    dataset_dependencies: list[dict[str, Any]] | None = None
    truncated: bool = False
    cut: dict[str, Any] = field(default_factory=dict)
    # Internal: the JobLineageEdge id behind each bipartite edge (for diffs).
    edge_sources: dict[str, list[int]] = field(default_factory=dict)
    # Internal: the drawn jobs a run of which had dataset pairs cut (Job.lineage_edges_cut).
    run_edges_cut: list[str] = field(default_factory=list)
    # Internal: the drawn datasets typed temporary job outputs, and those folded into
    # job-to-job ``through`` edges (catalog.lineage.temporary, ADR 0089).
    temporary: set[int] = field(default_factory=set)
    folded: set[int] = field(default_factory=set)
    # The nodes and edges as the answer's JSON arrays (text), when PostgreSQL built them
    # (catalog.lineage.prebuilt, ADR 0109): ``nodes`` and ``edges`` are then left empty.
    prebuilt: tuple[str, str] | None = None


class UnknownNode(LookupError):
    pass
