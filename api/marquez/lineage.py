"""Marquez's ``/lineage`` and ``/column-lineage`` over the catalog's bounded graph walks.

``/lineage`` is catalog.graph.lineage_graph (both directions) re-labelled: node ids become
``dataset:<ns>:<name>`` / ``job:<ns>:<name>`` and each node carries the full Marquez Job or
Dataset as ``data``. Depths asked (the UI sends 2-5, the client 20) are clamped to the
catalog's budget, never refused; the node budget stays, and ``truncated``/``cut`` (extra
top-level keys Marquez's readers ignore) say when a bound cut the graph.

``/column-lineage`` is catalog.column_lineage.walk (the one column-lineage model, which
the native API reads too) shaped as Marquez's field graph: level by level, at most
MAX_DEPTH levels and MAX_FIELDS fields.
"""

from collections import defaultdict
from typing import Any

from rest_framework.request import Request

from api.marquez import paths, shapes
from api.marquez.errors import MarquezError, not_found
from catalog import column_lineage, graph_jobs
from catalog.graph import (
    DEFAULT_MAX_NODES,
    EDGES_PER_NODE,
    MAX_DEPTH,
    GraphRequest,
    NodeRef,
    UnknownNode,
    lineage_graph,
)
from catalog.models import Dataset, DatasetField, Job

MARQUEZ_DEFAULT_DEPTH = 20
MAX_FIELDS = 500


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


def _node(request: Request) -> paths.NodeId:
    raw = request.query_params.get("nodeId", "")
    if not raw:
        raise MarquezError(400, "nodeId is required.")
    return paths.parse_node_id(raw)


def _root(node: paths.NodeId) -> Dataset | Job:
    if node.kind == "job":
        job = Job.objects.for_name(node.namespace, node.name).first()
        if job is None:
            raise not_found(f"Job '{node.name}' in namespace '{node.namespace}'")
        return job
    dataset = Dataset.objects.for_alias(node.namespace, node.name).first()
    if dataset is None:
        raise not_found(f"Dataset '{node.name}' in namespace '{node.namespace}'")
    return dataset


def lineage(request: Request) -> dict[str, Any]:
    node = _node(request)
    if node.kind == "datasetField":
        raise MarquezError(400, "Use /column-lineage for datasetField nodes.")
    depth = _depth(request)
    root = _root(node)
    ref = NodeRef("job" if isinstance(root, Job) else "dataset", root.id)
    try:
        graph = lineage_graph(
            GraphRequest(root=ref, direction="both", depth=depth, max_nodes=DEFAULT_MAX_NODES)
        )
    except UnknownNode:  # deleted between the lookup and the walk
        raise not_found(node.name) from None

    # Marquez draws each job with every dataset it reads and writes, also those past the
    # depth bound: the jobs' own links come in (capped) beside the walk's.
    job_ids = [n["job_id"] for n in graph.nodes if n["type"] == "job"]
    links = graph_jobs.links_of_jobs(job_ids, EDGES_PER_NODE * DEFAULT_MAX_NODES)
    dataset_ids = {n["dataset_id"] for n in graph.nodes if n["type"] == "dataset"}
    dataset_rows = list(
        Dataset.objects.filter(id__any=sorted(dataset_ids | {link[1] for link in links})).order_by(
            "id"
        )
    )
    job_rows = list(Job.objects.filter(id__any=job_ids).select_related("parent").order_by("id"))
    ids: dict[str, str] = {}  # our node id (dataset:12) -> Marquez's (dataset:<ns>:<name>)
    nodes: dict[str, dict[str, Any]] = {}
    for kind, rows, shaped in (
        ("dataset", dataset_rows, shapes.datasets_data(dataset_rows)),
        ("job", job_rows, shapes.jobs_data(job_rows, latest_runs=1)),
    ):
        for row, data in zip(rows, shaped, strict=True):
            marquez_id = paths.node_id(kind, data["namespace"], data["name"])
            ids[f"{kind}:{row.pk}"] = marquez_id
            nodes[marquez_id] = {
                "id": marquez_id,
                "type": kind.upper(),
                "data": data,
                "inEdges": [],
                "outEdges": [],
            }
    pairs = [(edge["source"], edge["target"]) for edge in graph.edges]
    for job_id, dataset_id, direction in links:
        dataset_ref, job_ref = f"dataset:{dataset_id}", f"job:{job_id}"
        pairs.append((dataset_ref, job_ref) if direction == "input" else (job_ref, dataset_ref))
    drawn: set[tuple[str, str]] = set()
    for source, target in pairs:
        origin, destination = ids.get(source), ids.get(target)
        if origin is None or destination is None or (origin, destination) in drawn:
            continue
        drawn.add((origin, destination))
        pair = {"origin": origin, "destination": destination}
        nodes[origin]["outEdges"].append(pair)
        nodes[destination]["inEdges"].append(pair)
    return {
        "graph": [nodes[key] for key in sorted(nodes)],
        "truncated": graph.truncated,
        "cut": graph.cut,
    }


# --- column lineage ---------------------------------------------------------------------


def _start_fields(node: paths.NodeId, root: Dataset | Job) -> set[column_lineage.Field]:
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
    return _column_graph(walked)


def _column_graph(walked: column_lineage.FieldWalk) -> dict[str, Any]:
    """Marquez's column-lineage graph of the catalog's walk: shaping only."""
    fields = walked.fields
    dataset_ids = sorted({item[0] for item in fields})
    names = {
        row[0]: (row[1], row[2])
        for row in Dataset.objects.filter(id__any=dataset_ids).values_list(
            "id", "namespace", "name"
        )
    }
    types = {
        (row[0], row[1]): row[2]
        for row in DatasetField.objects.filter(dataset_id__any=dataset_ids).values_list(
            "dataset_id", "name", "type"
        )
    }

    def ident(item: column_lineage.Field) -> str:
        namespace, name = names[item[0]]
        return paths.node_id("datasetField", namespace, name, item[1])

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
