"""Marquez's ``/lineage`` and ``/column-lineage`` over the catalog's bounded graph walks.

``/lineage`` is catalog.graph.lineage_graph (both directions) re-labelled: node ids become
``dataset:<ns>:<name>`` / ``job:<ns>:<name>`` and each node carries the full Marquez Job or
Dataset as ``data``. Depths asked (the UI sends 2-5, the client 20) are clamped to the
catalog's budget, never refused; the node budget stays, and ``truncated``/``cut`` (extra
top-level keys Marquez's readers ignore) say when a bound cut the graph.

``/column-lineage`` walks ``ColumnLineageEdge`` level by level (one query per level and
direction, at most MAX_DEPTH levels and MAX_FIELDS fields).
"""

from collections import defaultdict
from typing import Any

from django.db import connection
from rest_framework.request import Request

from api.marquez import paths, shapes
from api.marquez.errors import MarquezError, not_found
from catalog.graph import (
    DEFAULT_MAX_NODES,
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

    dataset_rows = list(
        Dataset.objects.filter(
            id__any=[n["dataset_id"] for n in graph.nodes if n["type"] == "dataset"]
        ).order_by("id")
    )
    job_rows = list(
        Job.objects.filter(id__any=[n["job_id"] for n in graph.nodes if n["type"] == "job"])
        .select_related("parent")
        .order_by("id")
    )
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
    for edge in graph.edges:
        origin, destination = ids.get(edge["source"]), ids.get(edge["target"])
        if origin is None or destination is None:
            continue
        pair = {"origin": origin, "destination": destination}
        nodes[origin]["outEdges"].append(pair)
        nodes[destination]["inEdges"].append(pair)
    return {
        "graph": [nodes[key] for key in sorted(nodes)],
        "truncated": graph.truncated,
        "cut": graph.cut,
    }


# --- column lineage ---------------------------------------------------------------------

_STEP = """
SELECT c.source_id, c.source_field, c.target_id, c.target_field,
       c.transformation_type, c.transformation_description
FROM catalog_column_lineage_edge c
JOIN unnest(%(ids)s::bigint[], %(fields)s::text[]) AS f(id, field)
  ON c.{side}_id = f.id AND c.{side}_field = f.field
ORDER BY c.target_id, c.target_field, c.source_id, c.source_field
LIMIT %(limit)s
"""

Field = tuple[int, str]


def _step(frontier: set[Field], upstream: bool) -> list[tuple[Any, ...]]:
    ordered = sorted(frontier)
    with connection.cursor() as cursor:
        cursor.execute(
            _STEP.format(side="target" if upstream else "source"),
            {
                "ids": [item[0] for item in ordered],
                "fields": [item[1] for item in ordered],
                "limit": MAX_FIELDS * 4,
            },
        )
        return list(cursor.fetchall())


def _start_fields(node: paths.NodeId, root: Dataset | Job) -> set[Field]:
    if isinstance(root, Job):
        # The job's column edges, reached through its outputs (column edges are indexed by
        # target dataset, not by job).
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT DISTINCT c.target_id, c.target_field FROM catalog_column_lineage_edge c"
                " WHERE c.job_id = %(job)s AND c.target_id IN (SELECT a.dataset_id FROM"
                " catalog_job_dataset jd JOIN catalog_dataset_alias a ON a.id = jd.alias_id"
                " WHERE jd.job_id = %(job)s AND jd.direction = 'output')"
                " ORDER BY 1, 2 LIMIT %(limit)s",
                {"job": root.id, "limit": MAX_FIELDS},
            )
            return {(row[0], row[1]) for row in cursor.fetchall()}
    if node.kind == "datasetField":
        return {(root.id, node.field)}
    # The dataset's schema fields and any field column lineage names (a dataset may have
    # lineage facets without a schema facet).
    fields = DatasetField.objects.filter(dataset=root).order_by("ordinal")[:MAX_FIELDS]
    start = {(root.id, name) for name in fields.values_list("name", flat=True)}
    with connection.cursor() as cursor:
        cursor.execute(
            "(SELECT target_field FROM catalog_column_lineage_edge WHERE target_id = %(id)s"
            " LIMIT %(limit)s) UNION (SELECT source_field FROM catalog_column_lineage_edge"
            " WHERE source_id = %(id)s LIMIT %(limit)s)",
            {"id": root.id, "limit": MAX_FIELDS},
        )
        start |= {(root.id, row[0]) for row in cursor.fetchall()}
    return set(sorted(start)[:MAX_FIELDS])


def column_lineage(request: Request) -> dict[str, Any]:
    node = _node(request)
    depth = _depth(request)
    downstream = _boolean(request, "withDownstream")
    root = _root(node)
    start = _start_fields(node, root)
    if not start:
        raise not_found(f"Column lineage for '{request.query_params['nodeId']}'")

    edges: set[tuple[Any, ...]] = set()
    seen: set[Field] = set(start)
    truncated = False
    for upstream in (True, False) if downstream else (True,):
        frontier = set(start)
        for _level in range(depth):
            if not frontier:
                break
            rows = _step(frontier, upstream)
            frontier = set()
            for row in rows:
                edges.add(row)
                other = (row[0], row[1]) if upstream else (row[2], row[3])
                if other not in seen:
                    if len(seen) >= MAX_FIELDS:
                        truncated = True
                        continue
                    seen.add(other)
                    frontier.add(other)
        truncated = truncated or bool(frontier)
    return _column_graph(seen, edges, truncated)


def _column_graph(
    fields: set[Field], edges: set[tuple[Any, ...]], truncated: bool
) -> dict[str, Any]:
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

    def ident(item: Field) -> str:
        namespace, name = names[item[0]]
        return paths.node_id("datasetField", namespace, name, item[1])

    nodes: dict[Field, dict[str, Any]] = {}
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
    inputs: dict[Field, list[tuple[Any, ...]]] = defaultdict(list)
    for edge in sorted(edges):
        source, target = (edge[0], edge[1]), (edge[2], edge[3])
        if source not in nodes or target not in nodes:
            continue
        inputs[target].append(edge)
        # Marquez writes both lists from the node's side: origin is always the node itself.
        nodes[target]["inEdges"].append({"origin": ident(target), "destination": ident(source)})
        nodes[source]["outEdges"].append({"origin": ident(source), "destination": ident(target)})
    for target, rows in inputs.items():
        data = nodes[target]["data"]
        data["transformationType"] = rows[0][4] or None
        data["transformationDescription"] = rows[0][5] or None
        for row in rows:
            namespace, name = names[row[0]]
            data["inputFields"].append(
                {
                    "namespace": namespace,
                    "dataset": name,
                    "datasetVersion": None,
                    "field": row[1],
                    "transformationDescription": row[5] or None,
                    "transformationType": row[4] or None,
                }
            )
    return {
        "graph": [nodes[key] for key in sorted(nodes, key=lambda k: nodes[k]["id"])],
        "truncated": truncated,
    }
