"""Marquez's ``/lineage`` and ``/column-lineage`` over the catalog's bounded graph walks.

``/lineage`` is catalog.lineage.drawn.drawn_graph (catalog.lineage.graph's walk, both directions,
each row read once) re-labelled: node ids become ``dataset:<ns>:<name>`` /
``job:<ns>:<name>`` and each node carries the full Marquez Job or Dataset as ``data``.
Depths asked (the UI sends 2-5, the client 20) are clamped to the
catalog's budget, never refused; the node budget stays, and ``truncated``/``cut`` (extra
top-level keys Marquez's readers ignore) say when a bound cut the graph. The answer holds
at most ``LINEAGE_MAX_PAGE_BYTES`` of nodes (``_within_budget``): the nodes nearest the
root first, the root always; a node left out takes its edges with it, so what is drawn is
a smaller graph Marquez's UI shows as it shows any other (``cut.bytes`` counts them).

``/column-lineage`` is catalog.lineage.column_lineage.walk (the one column-lineage model, which
the native API reads too) shaped as Marquez's field graph: level by level, at most
MAX_DEPTH levels and MAX_FIELDS fields, its temporary datasets folded as the graph's are
(catalog.lineage.temporary.fold_field_walk, ADR 0089).
"""

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import orjson
from django.conf import settings
from rest_framework.request import Request

from api.marquez import node_ids, shapes
from api.marquez.errors import MarquezError, not_found
from catalog.lineage import column_lineage, temporary
from catalog.lineage.drawn import DrawnGraph, drawn_graph
from catalog.lineage.request import MAX_DEPTH, NodeRef, UnknownNode
from catalog.models import Dataset, Job
from catalog.reads import marquez_graph
from catalog.reads.datasets import find_dataset, names_and_field_types
from catalog.reads.jobs import find_job
from core import pipelined_reads, rendering

MARQUEZ_DEFAULT_DEPTH = 20
MAX_FIELDS = 500
# What one pair costs in a node's edge lists, besides the two ids: {"origin":"","destination":""},
EDGE_BYTES = 32
# What a node costs besides its id and data: {"id":"","type":"DATASET","data":,"inEdges":[],...
NODE_BYTES = 64


def _depth(request: Request) -> int:
    raw = request.query_params.get("depth", "")
    if raw == "":
        return min(MARQUEZ_DEFAULT_DEPTH, MAX_DEPTH)
    try:
        value = int(raw)
    except ValueError:
        raise MarquezError(400, f"depth must be an integer (got {raw!r}).") from None
    return min(max(value, 1), MAX_DEPTH)


def _boolean(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "").lower()  # Marquez's client sends "False"
    if raw in ("", "false", "0"):
        return False
    if raw in ("true", "1"):
        return True
    raise MarquezError(400, f"{name} must be true or false (got {raw!r}).")


def _node(request: Request) -> node_ids.NodeId:
    raw = request.query_params.get("nodeId", "")
    if not raw:
        raise MarquezError(400, "nodeId is required.")
    return node_ids.parse_node_id(raw)


def _root(node: node_ids.NodeId) -> Dataset | Job:
    if node.kind == "job":
        job = find_job(node.namespace, node.name)
        if job is None:
            raise _unknown(node)
        return job
    dataset = find_dataset(node.namespace, node.name)
    if dataset is None:
        raise _unknown(node)
    return dataset


def _graph_root(node: node_ids.NodeId) -> NodeRef:
    """The root by its name, as the walk takes it (by id)."""
    found = marquez_graph.root_id(node.kind, node.namespace, node.name)
    if found is None:
        raise _unknown(node)
    return NodeRef("job" if node.kind == "job" else "dataset", found)


def _unknown(node: node_ids.NodeId) -> MarquezError:
    kind = "Job" if node.kind == "job" else "Dataset"
    return not_found(f"{kind} '{node.name}' in namespace '{node.namespace}'")


def lineage(request: Request) -> dict[str, Any]:
    node = _node(request)
    if node.kind == "datasetField":
        raise MarquezError(400, "Use /column-lineage for datasetField nodes.")
    root = _graph_root(node)
    try:
        drawn = drawn_graph(root, _depth(request))
    except UnknownNode:  # retired between the two reads
        raise _unknown(node) from None
    ids, nodes = _nodes(drawn)
    pairs = _pairs(drawn)
    omitted = _within_budget(drawn, ids, nodes, pairs)
    _link(nodes, ids, pairs)
    cut = dict(drawn.graph.cut)
    if omitted:
        cut["bytes"] = {"limit": settings.LINEAGE["MAX_PAGE_BYTES"], "omitted_nodes": omitted}
    return {
        "graph": [nodes[key] for key in sorted(nodes)],
        "truncated": drawn.graph.truncated or bool(omitted),
        "cut": cut,
    }


def _nodes(drawn: DrawnGraph) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Marquez's nodes (the full Job or Dataset as ``data``), by Marquez id; and our node
    ids (``dataset:12``) to Marquez's (``dataset:<ns>:<name>``)."""
    ids: dict[str, str] = {}
    nodes: dict[str, dict[str, Any]] = {}
    rows, job_facts, dataset_read = _node_reads(drawn)
    shaped: tuple[tuple[str, Sequence[Any], list[dict[str, Any]]], ...] = (
        ("dataset", rows.datasets, shapes.datasets_data(rows.datasets, dataset_read)),
        ("job", rows.jobs, shapes.jobs_data(rows.jobs, latest_runs=1, facts=job_facts)),
    )
    for kind, read, data_list in shaped:
        node_type = kind.upper()
        for row, data in zip(read, data_list, strict=True):
            marquez_id = node_ids.node_id(kind, row.namespace, row.name)
            ids[f"{kind}:{row.id}"] = marquez_id
            nodes[marquez_id] = {
                "id": marquez_id,
                "type": node_type,
                "data": data,
                "inEdges": [],
                "outEdges": [],
            }
    return ids, nodes


def _node_reads(
    drawn: DrawnGraph,
) -> tuple[
    marquez_graph.NodeRows,
    marquez_graph.JobFacts,
    tuple[marquez_graph.DatasetFacts, column_lineage.ColumnLineage],
]:
    """The drawn nodes' rows, the jobs' facts, and the datasets' facts and column lineage:
    what ``shapes.jobs_data`` and ``datasets_data`` would read of the rows, in one round
    trip (ADR 0140). All four take the drawn ids, none another's answer: the rows are
    read by those ids, so their ids are the drawn ones (in the same order), unless a node
    vanished meanwhile, whose facts then go unused."""
    datasets, jobs = drawn.dataset_ids, drawn.job_ids
    reads = {
        "rows": marquez_graph.node_rows_read(datasets, jobs),
        "jobs": marquez_graph.job_facts_read(*shapes.job_facts_args_of_ids(jobs, 1)),
        "datasets": marquez_graph.dataset_facts_read(datasets),
        "lineage": column_lineage.observed_into_read(
            datasets, shapes.column_lineage_limit(datasets)
        )
        if datasets
        else None,
    }
    sent = {name: read for name, read in reads.items() if read is not None}
    found = dict(zip(sent, pipelined_reads.rows_together(list(sent.values())), strict=True))
    return (
        marquez_graph.node_rows_of(found.get("rows", [])),
        marquez_graph.job_facts_of(found.get("jobs", [])),
        (
            marquez_graph.dataset_facts_of(found.get("datasets", [])),
            column_lineage.sorted_by_level(
                column_lineage.edges_of(found.get("lineage", []), static=False)
            ),
        ),
    )


def _within_budget(
    drawn: DrawnGraph,
    ids: dict[str, str],
    nodes: dict[str, dict[str, Any]],
    pairs: list[tuple[str, str]],
) -> int:
    """Keep the nodes that fit in ``LINEAGE_MAX_PAGE_BYTES``, nearest the root first (the
    walk's depth, then the datasets the drawn jobs touch past it; the root always), each
    node's ``data`` rendered once and kept as bytes; drop the rest from ``nodes``. A node
    is charged its rendered data and every pair it is an end of (as both ends list it), so
    the edges ``_link`` adds later fit too. Returns how many nodes were left out.

    Every node is rendered first (the answer writes each anyway): when all fit, as most
    graphs do, nothing is ordered (ADR 0129)."""
    budget = settings.LINEAGE["MAX_PAGE_BYTES"]
    ends: dict[str, int] = defaultdict(int)
    for source, target in pairs:
        origin, destination = ids.get(source), ids.get(target)
        if origin is not None and destination is not None:
            cost = len(origin) + len(destination) + EDGE_BYTES
            ends[source] += cost
            ends[target] += cost
    sizes: dict[str, int] = {}
    for ref, marquez_id in ids.items():
        node = nodes[marquez_id]
        data = rendering.compact(node["data"])
        node["data"] = orjson.Fragment(data)
        sizes[ref] = len(data) + len(marquez_id) + NODE_BYTES + ends[ref]
    if sum(sizes.values()) <= budget:
        return 0
    depths = {item["id"]: item["depth"] for item in drawn.graph.nodes}
    root = f"{drawn.graph.root.kind}:{drawn.graph.root.id}"
    order = sorted(ids, key=lambda ref: (ref != root, depths.get(ref, MAX_DEPTH + 1), ref))
    used = 0
    for position, ref in enumerate(order):
        size = sizes[ref]
        if position and used + size > budget:
            for left_out in order[position:]:
                del nodes[ids.pop(left_out)]
            return len(order) - position
        used += size
    return 0


def _pairs(drawn: DrawnGraph) -> list[tuple[str, str]]:
    """(source, target) in our node ids: the walk's edges, then each drawn job's links."""
    # Marquez links jobs only to datasets: a parent edge (ADR 0070) is not one of its edges.
    # A ``through`` edge is: the link of two jobs through a folded temporary dataset (ADR 0089).
    pairs = [(e["source"], e["target"]) for e in drawn.graph.edges if e["kind"] != "parent"]
    for job_id, dataset_id, direction in drawn.links:
        dataset_ref, job_ref = f"dataset:{dataset_id}", f"job:{job_id}"
        pairs.append((dataset_ref, job_ref) if direction == "input" else (job_ref, dataset_ref))
    return pairs


def _link(
    nodes: dict[str, dict[str, Any]], ids: dict[str, str], pairs: list[tuple[str, str]]
) -> None:
    """Each pair once, as Marquez's ``outEdges`` of its origin and ``inEdges`` of its
    destination; a pair with an end not drawn is left out."""
    drawn: set[tuple[str, str]] = set()
    for source, target in pairs:
        origin, destination = ids.get(source), ids.get(target)
        if origin is None or destination is None or (origin, destination) in drawn:
            continue
        drawn.add((origin, destination))
        pair = {"origin": origin, "destination": destination}
        nodes[origin]["outEdges"].append(pair)
        nodes[destination]["inEdges"].append(pair)


# --- column lineage ---------------------------------------------------------------------


def _start_fields(node: node_ids.NodeId, root: Dataset | Job) -> set[column_lineage.Field]:
    if isinstance(root, Job):
        return column_lineage.job_fields(root.id, MAX_FIELDS)
    if node.kind == "datasetField":
        return {(root.id, node.field)}
    return column_lineage.dataset_fields(root.id, MAX_FIELDS)


def column_lineage_graph(request: Request) -> dict[str, Any]:
    node = _node(request)
    depth = _depth(request)
    downstream = _boolean(request, "withDownstream")
    root = _root(node)
    start = _start_fields(node, root)
    if not start:
        raise not_found(f"Column lineage for '{request.query_params['nodeId']}'")
    walked = column_lineage.walk(start, depth, downstream, MAX_FIELDS)
    # Temporary datasets fold away here too (ADR 0089): the root's own dataset never does.
    keep = None if isinstance(root, Job) else root.id
    return _column_graph(temporary.fold_field_walk(walked, keep, MAX_FIELDS * 4))


def _column_graph(walked: column_lineage.FieldWalk) -> dict[str, Any]:
    """Marquez's column-lineage graph of the catalog's walk: shaping only."""
    fields = walked.fields
    names, types = names_and_field_types(sorted({item[0] for item in fields}))

    def ident(item: column_lineage.Field) -> str:
        namespace, name = names[item[0]]
        return node_ids.node_id("datasetField", namespace, name, item[1])

    nodes: dict[column_lineage.Field, dict[str, Any]] = {}
    for item in fields:
        if item[0] not in names:
            continue
        namespace, name = names[item[0]]
        nodes[item] = {
            "id": ident(item),
            "type": "DATASET_FIELD",
            "data": {
                "namespace": namespace,
                "dataset": name,
                "datasetVersion": None,
                "field": item[1],
                "fieldType": types.get(item) or None,
                "transformationDescription": None,
                "transformationType": None,
                "inputFields": [],
            },
            "inEdges": [],
            "outEdges": [],
        }
    inputs: dict[column_lineage.Field, list[column_lineage.ColumnEdge]] = defaultdict(list)
    linked: set[tuple[column_lineage.Field, column_lineage.Field]] = set()
    for edge in walked.edges:
        source, target = (edge.source_id, edge.source_field), (edge.target_id, edge.target_field)
        if source not in nodes or target not in nodes:
            continue
        inputs[target].append(edge)
        if (source, target) in linked:
            continue
        linked.add((source, target))
        # Marquez writes both lists from the node's side: origin is always the node itself.
        nodes[target]["inEdges"].append({"origin": ident(target), "destination": ident(source)})
        nodes[source]["outEdges"].append({"origin": ident(source), "destination": ident(target)})
    for target, edges in inputs.items():
        nodes[target]["data"].update(shapes.field_lineage(edges))
    return {
        "graph": [nodes[key] for key in sorted(nodes, key=lambda k: nodes[k]["id"])],
        "truncated": walked.truncated,
    }
