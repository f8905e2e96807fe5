"""Temporary datasets fold away: a job-to-job link through them, not a node (ADR 0089).

A dataset whose facets type it a temporary job output (``catalog.facets.dataset_type``)
is an intermediate one job hands the next. Once the graph is assembled, each such dataset
with a writer and a reader drawn is taken out: its ``output`` and ``input`` halves become
one ``through`` edge from each writer job to each reader job (naming what it went
through), and column edges into it are composed with those out of it, so ``x`` of job A's
input reaches ``y`` of job B's output directly. The walk itself is unchanged (a temporary
dataset is a hop like any other, so ``depth`` bounds a chain of them); what is folded is
only what was drawn. The root is never folded (a graph around a temporary dataset shows
it), and neither is a temporary dataset with no writer or no reader drawn (a dead end or a
bound's edge: folding it would lose the link). The dataset stays readable by id.
"""

from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from catalog.facets import dataset_type
from catalog.lineage.column_lineage import ColumnEdge, Field, FieldWalk
from catalog.lineage.request import Graph
from catalog.models import Dataset

# Column edges are composed through at most this many temporary datasets in a row (a
# chain longer than the walk's depth cannot be drawn whole anyway).
MAX_FOLD_DEPTH = 10
INDIRECT = "INDIRECT"
# What a composed column edge takes from both parts (``_rules``), by the names the API's
# dicts and the read's rows share.
_RULE_FIELDS = (
    "transformation_type",
    "transformation_subtype",
    "transformation_description",
    "masking",
    "first_seen",
    "last_seen",
    "run_count",
)
Edge = TypeVar("Edge")


def fold(graph: Graph, temporary: set[int], column_limit: int, link_limit: int) -> None:
    """Fold the drawn temporary datasets of ``graph`` (ids) in place; ``column_limit``
    bounds the composed column edges and dependencies like the ones read.

    ``link_limit`` bounds the ``through`` links (the graph's edge limit): a temporary dataset
    links each of its writers to each of its readers, so 1,000 of each drawn beside it were a
    million links (ADR 0172). One whose links would pass what is left of the limit is not
    folded: it stays drawn as it was, with its edges, which the walk's bounds hold already."""
    candidates = {f"dataset:{dataset_id}" for dataset_id in temporary} - {str(graph.root)}
    writers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    readers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for edge in graph.edges:
        if edge["kind"] == "output" and edge["target"] in candidates:
            writers[edge["target"]].append(edge)
        elif edge["kind"] == "input" and edge["source"] in candidates:
            readers[edge["source"]].append(edge)
    folded = set()
    budget = link_limit
    for ref in sorted(ref for ref in candidates if writers[ref] and readers[ref]):
        links_at_most = len(writers[ref]) * len(readers[ref])
        if links_at_most <= budget:
            budget -= links_at_most
            folded.add(ref)
    if not folded:
        return
    links: dict[tuple[str, str], dict[str, Any]] = {}
    for ref in sorted(folded):
        for wrote in writers[ref]:
            for read in readers[ref]:
                if wrote["source"] != read["target"]:  # a job's own scratch space
                    _add_link(links, graph, ref, wrote, read)
    kept = [e for e in graph.edges if e["source"] not in folded and e["target"] not in folded]
    for edge in graph.edges:
        if edge["source"] in folded or edge["target"] in folded:
            graph.edge_sources.pop(edge["id"], None)
    graph.edges = kept + [links[key] for key in sorted(links)]
    graph.nodes = [node for node in graph.nodes if node["id"] not in folded]
    graph.folded = {int(ref.split(":")[1]) for ref in folded}
    if graph.column_edges is not None and graph.dataset_dependencies is not None:
        _fold_columns(graph, folded, column_limit)


def _add_link(
    links: dict[tuple[str, str], dict[str, Any]],
    graph: Graph,
    ref: str,
    wrote: dict[str, Any],
    read: dict[str, Any],
) -> None:
    """One writer → reader link through ``ref``; several temporary datasets between the
    same two jobs are one link naming each."""
    key = (wrote["source"], read["target"])
    sources = graph.edge_sources.get(wrote["id"], []) + graph.edge_sources.get(read["id"], [])
    known = links.get(key)
    if known is not None:
        known["through"] = sorted({*known["through"], ref})
        graph.edge_sources[known["id"]] = sorted({*graph.edge_sources[known["id"]], *sources})
        return
    # Observed when both halves were; declared when both were; a link half seen and half
    # only declared is drawn as declared (no run ever went all the way through it).
    observed = wrote["observed"] and read["observed"]
    link_id = f"{key[0]}->{key[1]}"
    links[key] = {
        "id": link_id,
        "kind": "through",
        "source": key[0],
        "target": key[1],
        # The link exists once both halves do; it was last seen when either was.
        "first_seen": max(wrote["first_seen"], read["first_seen"]),
        "last_seen": max(wrote["last_seen"], read["last_seen"]),
        # The reader's figures: how often the next job took what the first one left.
        "last_run_id": read["last_run_id"],
        "run_count": read["run_count"],
        "completed_run_count": read["completed_run_count"],
        "lineage_types": sorted({*wrote["lineage_types"], *read["lineage_types"]}),
        "via": read["via"],
        "current": wrote["current"] and read["current"],
        "observed": observed,
        "static": (wrote["static"] and read["static"]) or not observed,
        "through": [ref],
    }
    graph.edge_sources[link_id] = sorted(sources)


def _fold_columns(graph: Graph, folded: set[str], limit: int) -> None:
    """Compose column edges and dataset-level dependencies through the folded datasets:
    ``x → t.c`` (job A) and ``t.c → y`` (job B) become ``x → y`` (job B), through ``t``;
    a dependency on the whole of ``t`` makes whatever ``t`` feeds a dependency too."""
    assert graph.column_edges is not None and graph.dataset_dependencies is not None
    every = [*graph.column_edges, *graph.dataset_dependencies]
    out_of: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    out_of_dataset: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for edge in every:
        if edge["source"] in folded:
            out_of[(edge["source"], edge["source_field"])].append(edge)
            out_of_dataset[edge["source"]].append(edge)
    done = [edge for edge in every if edge["source"] not in folded]

    def nexts(first: dict[str, Any]) -> list[dict[str, Any]]:
        target_field = first.get("target_field")
        if target_field is None:  # a dependency on the whole folded dataset
            return out_of_dataset[first["target"]]
        return out_of[(first["target"], target_field)]

    composed, cut = _chain(
        [edge for edge in done if edge["target"] in folded],
        nexts,
        _compose,
        _identity,
        lambda edge: edge["target"] in folded,
        limit,
        _GRAPH_PARTS,
    )
    result = [
        edge
        for edge in [*done, *composed]
        if edge["source"] not in folded and edge["target"] not in folded
    ]
    graph.column_edges = [edge for edge in result if "target_field" in edge]
    graph.dataset_dependencies = [edge for edge in result if "target_field" not in edge]
    if cut:
        graph.cut["folded_column_edges"] = {"limit": limit, "max_fold_depth": MAX_FOLD_DEPTH}
        graph.truncated = True


def _chain(
    pending: list[Edge],
    nexts: Callable[[Edge], list[Edge]],
    compose: Callable[[Edge, Edge], Edge],
    identity: Callable[[Edge], Hashable],
    into_folded: Callable[[Edge], bool],
    limit: int,
    parts: "Parts[Edge] | None" = None,
) -> tuple[list[Edge], bool]:
    """The one composition loop of the graph's fold and the field walk's: each edge into a
    folded dataset (``pending``) composed with each edge ``nexts`` gives out of it, again
    while the result leads into another folded one, at most MAX_FOLD_DEPTH in a row and
    ``limit`` edges (by ``identity``, first kept). Returns the composed edges and whether a
    bound cut them.

    ``parts``: what of a first and a second edge a composed edge's identity is made of. A
    first whose head was composed already, or a second whose tail another second out of the
    same place has, can only give an identity kept already, so neither is composed (ADR
    0172): the limit counts new edges only, and 1,000 edges into a field that differ only by
    their job (or transformation) times 1,000 out of it were a million compositions for
    1,000 edges, 11-32 s of a web process's CPU for one graph."""
    composed: dict[Hashable, Edge] = {}
    cut = False
    heads: set[Hashable] = set()
    seconds: dict[Hashable, list[Edge]] = {}  # by a first's lead: its seconds, one per tail
    for _ in range(MAX_FOLD_DEPTH):
        following: list[Edge] = []
        for first in pending:
            if parts is None:
                ahead = nexts(first)
            else:
                head = parts.head(first)
                if head in heads:
                    continue
                heads.add(head)
                lead = parts.lead(first)
                if lead not in seconds:
                    tails: dict[Hashable, Edge] = {}
                    for second in nexts(first):
                        tails.setdefault(parts.tail(first, second), second)
                    seconds[lead] = list(tails.values())
                ahead = seconds[lead]
            for second in ahead:
                edge = compose(first, second)
                key = identity(edge)
                if key in composed:
                    continue
                if len(composed) >= limit:
                    cut = True
                    break
                composed[key] = edge
                if into_folded(edge):
                    following.append(edge)
        pending = following
        if not pending:
            break
    return list(composed.values()), cut or bool(pending)


@dataclass(frozen=True)
class Parts(Generic[Edge]):
    """What a composed edge's identity is made of: ``head`` of the first edge (its ``lead``
    among it), ``tail`` of a second edge. ``lead``: what of the first decides its seconds
    (``nexts``) and their tails, so first edges that lead alike share one list of seconds,
    one per tail."""

    head: Callable[[Edge], Hashable]
    lead: Callable[[Edge], Hashable]
    tail: Callable[[Edge, Edge], Hashable]


def _rules(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """What a composed edge takes from ``first`` (into a folded dataset) and ``second``
    (out of it), by ``_RULE_FIELDS``: INDIRECT when either part is, the subtype of the
    INDIRECT part, descriptions joined, masked when either is, the span where both exist,
    the fewer runs, so the graph and the field walk compose alike."""
    indirect = INDIRECT in (first["transformation_type"], second["transformation_type"])
    return {
        "transformation_type": INDIRECT if indirect else second["transformation_type"],
        "transformation_subtype": (
            first["transformation_subtype"]
            if first["transformation_type"] == INDIRECT
            else second["transformation_subtype"]
        ),
        "transformation_description": "; ".join(
            text
            for text in (first["transformation_description"], second["transformation_description"])
            if text
        ),
        "masking": first["masking"] or second["masking"],
        "first_seen": max(first["first_seen"], second["first_seen"]),
        "last_seen": max(first["last_seen"], second["last_seen"]),
        "run_count": min(first["run_count"], second["run_count"]),
    }


def _identity(edge: dict[str, Any]) -> tuple:
    return (
        edge["source"],
        edge["source_field"],
        edge["target"],
        edge.get("target_field"),
        edge["job"],
        tuple(edge["through"]),
    )


# ``_identity(_compose(first, second))`` is made of these: the first's source, its through
# and whether it is dataset-level (a dependency's composition has no target field), with
# where it leads (its target and field: the seconds ``nexts`` gives); the second's target,
# its field unless the first is dataset-level, its job and its through.
_GRAPH_PARTS: Parts[dict[str, Any]] = Parts(
    lambda first: (
        first["source"],
        first["source_field"],
        tuple(first.get("through", [])),
        _GRAPH_PARTS.lead(first),
    ),
    lambda first: (first["target"], first.get("target_field"), "target_field" in first),
    lambda first, second: (
        second["target"],
        second.get("target_field") if "target_field" in first else None,
        second["job"],
        tuple(second.get("through", [])),
    ),
)


def _compose(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """``first`` (into a folded dataset) then ``second`` (out of it), as one edge in the
    API's shape: a dependency on the whole folded dataset stays one on the whole target."""
    body = dict(second)
    if "target_field" not in first:  # first is dataset-level: so is what it leads to
        for key in (
            "target_field",
            "field_transformation_type",
            "field_transformation_description",
        ):
            body.pop(key, None)
        body.pop("outside_schema", None)
    body.update(
        {
            "source": first["source"],
            "source_field": first["source_field"],
            **_rules(first, second),
            "current": first["current"] and second["current"],
            "static": first["static"] and second["static"],
            "through": [*first.get("through", []), second["source"], *second.get("through", [])],
        }
    )
    return body


# --- the field walk (Marquez's /column-lineage) --------------------------------------


def temporary_among(dataset_ids: list[int]) -> set[int]:
    """Which of ``dataset_ids`` are typed temporary job outputs: one query, the facet read
    in PostgreSQL (the rows' facets are not fetched)."""
    if not dataset_ids:
        return set()
    rows = Dataset.objects.filter(id__any=dataset_ids, **dataset_type.temporary_lookup())
    return set(rows.values_list("id", flat=True))


def fold_field_walk(walked: FieldWalk, keep: int | None, limit: int) -> FieldWalk:
    """The field walk with its temporary datasets folded as the graph folds them: each one
    (but ``keep``, the root's dataset) that the walk reached from both sides (an edge into
    one of its fields and one out of one) is taken out with its fields, and ``x → t.c``
    then ``t.c → y`` become ``x → y`` (the second edge's job and target form). One with a
    side not walked (a dead end, or a depth bound's edge) stays, as in the graph. At most
    ``limit`` composed edges and MAX_FOLD_DEPTH temporaries in a row; past either the walk
    is ``truncated``."""
    walked_ids = sorted({item[0] for item in walked.fields})
    temporary = temporary_among(walked_ids) - {keep}
    reached = {e.target_id for e in walked.edges} & {e.source_id for e in walked.edges}
    folded = temporary & reached
    if not folded:
        return walked
    out_of: dict[Field, list[ColumnEdge]] = defaultdict(list)
    for edge in walked.edges:
        if edge.source_id in folded:
            out_of[(edge.source_id, edge.source_field)].append(edge)
    done = [edge for edge in walked.edges if edge.source_id not in folded]
    composed, cut = _chain(
        [edge for edge in done if edge.target_id in folded],
        lambda first: out_of[(first.target_id, first.target_field)],
        _compose_column,
        lambda edge: (
            edge.source_id,
            edge.source_field,
            edge.target_id,
            edge.target_field,
            edge.job_id,
            edge.transformation_type,
            edge.transformation_description,
        ),
        lambda edge: edge.target_id in folded,
        limit,
        _WALK_PARTS,
    )
    edges = [
        edge
        for edge in [*done, *composed]
        if edge.source_id not in folded and edge.target_id not in folded
    ]
    edges.sort(key=lambda e: (e.target_id, e.target_field, e.source_id, e.source_field, e.id))
    fields = {item for item in walked.fields if item[0] not in folded}
    return FieldWalk(fields, edges, walked.truncated or cut)


# The field walk's identity of a composed edge (``fold_field_walk``): the first's source,
# its transformation (INDIRECT or not, and its description, which ``_rules`` join), where
# it leads; the second's target, job and transformation.
_WALK_PARTS: Parts[ColumnEdge] = Parts(
    lambda first: (
        first.source_id,
        first.source_field,
        first.transformation_type == INDIRECT,
        first.transformation_description,
        first.target_id,
        first.target_field,
    ),
    lambda first: (first.target_id, first.target_field),
    lambda first, second: (
        second.target_id,
        second.target_field,
        second.job_id,
        second.transformation_type,
        second.transformation_description,
    ),
)


def _compose_column(first: ColumnEdge, second: ColumnEdge) -> ColumnEdge:
    """``first`` (into a folded dataset's field) then ``second`` (out of it), as one edge:
    ``_rules`` on the read's rows (the second part's job, target and the target field's
    own form)."""
    return replace(
        second,
        source_id=first.source_id,
        source_namespace=first.source_namespace,
        source_name=first.source_name,
        source_field=first.source_field,
        **_rules(_values(first), _values(second)),
    )


def _values(edge: ColumnEdge) -> dict[str, Any]:
    return {name: getattr(edge, name) for name in _RULE_FIELDS}
