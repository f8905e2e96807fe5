"""/lineage/graph and /lineage/diff: bounded walks over the lineage (catalog.lineage.graph)."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api import params
from api.access import COLUMN_EDGE, DATASET, EDGE, JOB, STATIC, STATIC_COLUMN
from api.base import ReadAPIView
from api.column_serializers import ColumnEdgeSerializer, DatasetDependencySerializer
from api.problems import WITH_404, bad_parameter, not_found
from catalog.lineage import design_time
from catalog.lineage import diff as graph_diff
from catalog.lineage import graph as lineage
from catalog.lineage import request as graph_request
from catalog.lineage.assembly import NODE_ALIASES
from core.rendering import RawJSON

DIRECTIONS = ("upstream", "downstream", "both")


class AliasRefSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    reason = serializers.CharField()


class GraphNodeSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="dataset:<id> or job:<id>")
    type = serializers.ChoiceField(choices=["dataset", "job"])
    dataset_id = serializers.IntegerField(required=False)
    job_id = serializers.IntegerField(required=False)
    namespace = serializers.CharField()
    name = serializers.CharField()
    depth = serializers.IntegerField(help_text="Dataset hops from the root.")
    aliases = AliasRefSerializer(
        many=True,
        help_text=f"A dataset's names, the first {NODE_ALIASES} by namespace and name "
        "(ADR 0184); [] for jobs.",
    )
    alias_count = serializers.IntegerField(
        required=False,
        help_text=f"Only on a dataset with more than {NODE_ALIASES} aliases: how many it has "
        "(/datasets/{id}/aliases lists them all).",
    )
    is_dropped = serializers.BooleanField()
    first_seen = serializers.DateTimeField(allow_null=True)
    last_seen = serializers.DateTimeField(allow_null=True)


class ControlRulesSerializer(serializers.Serializer):
    dependency_type = serializers.CharField(
        allow_blank=True, help_text="DIRECT_INVOCATION, IMPLICIT_DEPENDENCY, ..."
    )
    sequence_trigger_rule = serializers.CharField(
        allow_blank=True, help_text="FINISH_TO_START, FINISH_TO_FINISH, START_TO_START, ..."
    )
    status_trigger_rule = serializers.CharField(
        allow_blank=True, help_text="EXECUTE_EVERY_TIME, EXECUTE_ON_SUCCESS, ..."
    )
    trigger_rule = serializers.CharField(
        allow_blank=True,
        help_text="The downstream run's rule over its upstream jobs (ALL_SUCCESS, ...); "
        '"" on an edge a run stated of its downstream job.',
    )


class GraphEdgeSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="<source>-><target>")
    kind = serializers.ChoiceField(
        choices=["input", "output", "parent", "through", "control"],
        help_text="input: dataset → job; output: job → dataset; parent: parent job → child "
        "job (an Airflow DAG → its task, from the parent run facet; no runs of its own: "
        "run_count 0, first/last seen are the child's; ADR 0070); through: job → job through "
        "temporary datasets folded away (datasetType JOB_OUTPUT, subType TEMPORARY; named "
        "in `through`; the reader's runs, first seen when both halves were; ADR 0089); control: "
        "upstream job → downstream job, control flow from a run's jobDependencies facet, only "
        "with `edges=data,control` (id `<source>-><target>#control`; run_count 0, current "
        "false, last_run_id the run that last stated it; never data lineage; ADR 0090).",
    )
    # Only the stubs see Field.source here: the serializer metaclass pops declared fields.
    source = serializers.CharField()  # type: ignore[assignment]
    target = serializers.CharField()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    last_run_id = serializers.UUIDField(allow_null=True)
    run_count = serializers.IntegerField()
    completed_run_count = serializers.IntegerField(
        help_text="Of run_count, the runs that completed (COMPLETE) and, for an output, "
        "wrote it (their COMPLETE named it, or named no output): the rest only attempted "
        "this input or output. 0 with run_count > 0: no run of the job ever completed it "
        "(ADR 0069)."
    )
    lineage_types = serializers.ListField(
        child=serializers.CharField(), help_text="Edge-API lineage_type values, if any."
    )
    via = serializers.ChoiceField(
        choices=["", "column_lineage"],
        allow_blank=True,
        help_text='How the last run named the dataset: "" in its inputs/outputs, '
        "`column_lineage` only in an output's column lineage (an input the event did not list).",
    )
    current = serializers.BooleanField(
        help_text="The job's latest completed run (as of `as_of`) still produced this edge."
    )
    observed = serializers.BooleanField(help_text="Some run read or wrote it.")
    static = serializers.BooleanField(
        help_text="The job's current JobEvent declares it (design-time lineage). A static-only "
        "edge has no runs (run_count 0, last_run_id null, current false) and is seen when it "
        "was declared; its via is how the declaration names the dataset."
    )
    through = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Only on a `through` edge: the temporary datasets it folds (dataset:<id>, "
        "each still readable by id).",
    )
    control = ControlRulesSerializer(
        required=False, help_text="Only on a `control` edge: the dependency's rules as sent."
    )


class GraphSerializer(serializers.Serializer):
    # Only the stubs see Field.root here: the serializer metaclass pops declared fields.
    root = serializers.CharField()  # type: ignore[assignment]
    nodes = GraphNodeSerializer(many=True)
    edges = GraphEdgeSerializer(many=True)
    column_edges = ColumnEdgeSerializer(
        many=True, required=False, help_text="Only with columns=true."
    )
    dataset_dependencies = DatasetDependencySerializer(
        many=True, required=False, help_text="Only with columns=true."
    )
    truncated = serializers.BooleanField()
    cut = serializers.DictField(
        child=serializers.JSONField(),
        help_text="What a bound cut: `depth` {limit, nodes_with_more}, `max_nodes` {limit, "
        "omitted_datasets, omitted_is_lower_bound, omitted_jobs (jobs that only read or only "
        "write a drawn dataset, left out for the budget)}, `edges` {limit}, `children` "
        "{limit, omitted_jobs} (child jobs of a parent root left out; at most 200 drawn), "
        "`column_edges` {limit, omitted, omitted_is_lower_bound} (with columns=true: column "
        "edges and dependencies past the limit, LINEAGE_MAX_COLUMN_EDGES (2,000) of each "
        "kind, observed and declared, or 20 per node if fewer; counted up to 100,000), "
        "`run_edges` {limit, jobs} (drawn jobs a run of which had input x output pairs past "
        "LINEAGE_MAX_RUN_EDGES: the walk goes through such a job only along the pairs kept, "
        "so from a cut input it reaches the job but not its outputs; ADR 0080), `control` "
        "{limit, omitted} (with edges=control: control edges to jobs not drawn, or past the "
        "limit), `folded_column_edges` {limit, max_fold_depth} (column edges composed "
        "through temporary datasets were bounded; ADR 0089). "
        "Empty when complete.",
    )


class NodeDiffSerializer(serializers.Serializer):
    added = GraphNodeSerializer(many=True)
    removed = GraphNodeSerializer(many=True)


class EdgeDiffSerializer(serializers.Serializer):
    added = GraphEdgeSerializer(many=True)
    removed = GraphEdgeSerializer(many=True)


class DiffSerializer(serializers.Serializer):
    # Only the stubs see Field.root here: the serializer metaclass pops declared fields.
    root = serializers.CharField()  # type: ignore[assignment]
    to = serializers.DateTimeField()
    nodes = NodeDiffSerializer()
    edges = EdgeDiffSerializer()
    truncated = serializers.BooleanField(help_text="Either of the two walks was cut.")


# "from" is a Python keyword: declared after the class body.
DiffSerializer._declared_fields["from"] = serializers.DateTimeField()


NODE = OpenApiParameter(
    "node", str, required=True, description="dataset:<id> or job:<id>, e.g. dataset:12."
)
WALK_PARAMETERS = [
    NODE,
    OpenApiParameter("direction", str, enum=list(DIRECTIONS), description="Default both."),
    OpenApiParameter(
        "depth",
        int,
        description=f"Dataset hops, 1-{graph_request.MAX_DEPTH} "
        f"(default {graph_request.DEFAULT_DEPTH}).",
    ),
    OpenApiParameter(
        "max_nodes",
        int,
        description=f"Datasets + jobs, 1-{graph_request.MAX_MAX_NODES} "
        f"(default {graph_request.DEFAULT_MAX_NODES}).",
    ),
    OpenApiParameter(
        "lineage",
        str,
        enum=list(design_time.LINEAGES),
        description="observed: what runs read and wrote; static: what jobs' current JobEvents "
        "declare (design-time); all (default): both.",
    ),
]

GRAPH_EXAMPLE = {
    "root": "dataset:1",
    "nodes": [
        {
            "id": "dataset:1",
            "type": "dataset",
            "dataset_id": 1,
            "namespace": "postgres://db:5432",
            "name": "shop.public.orders",
            "depth": 0,
            "aliases": [
                {"namespace": "postgres://db:5432", "name": "shop.public.orders", "reason": "event"}
            ],
            "is_dropped": False,
            "first_seen": "2026-11-01T10:00:00Z",
            "last_seen": "2026-11-02T10:00:00Z",
        },
        {
            "id": "job:4",
            "type": "job",
            "job_id": 4,
            "namespace": "airflow",
            "name": "etl.orders_daily",
            "depth": 1,
            "aliases": [],
            "is_dropped": False,
            "first_seen": "2026-11-01T10:00:00Z",
            "last_seen": "2026-11-02T10:00:00Z",
        },
    ],
    "edges": [
        {
            "id": "dataset:1->job:4",
            "kind": "input",
            "source": "dataset:1",
            "target": "job:4",
            "first_seen": "2026-11-01T10:00:00Z",
            "last_seen": "2026-11-02T10:00:00Z",
            "last_run_id": "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9e8f",
            "run_count": 2,
            "completed_run_count": 1,
            "lineage_types": [],
            "via": "",
            "current": True,
            "observed": True,
            "static": False,
        }
    ],
    "truncated": True,
    "cut": {"depth": {"limit": 1, "nodes_with_more": ["dataset:9"]}},
}


def _walk_request(request: Request) -> graph_request.GraphRequest:
    raw = params.required(request, "node")
    try:
        root = graph_request.NodeRef.parse(raw)
    except ValueError as error:
        raise bad_parameter("node", str(error)) from None
    return graph_request.GraphRequest(
        root=root,
        direction=params.choice(request, "direction", DIRECTIONS, "both"),  # type: ignore[arg-type]
        depth=params.integer(
            request, "depth", graph_request.DEFAULT_DEPTH, 1, graph_request.MAX_DEPTH
        ),
        max_nodes=params.integer(
            request, "max_nodes", graph_request.DEFAULT_MAX_NODES, 1, graph_request.MAX_MAX_NODES
        ),
        lineage=params.choice(request, "lineage", design_time.LINEAGES, "all"),  # type: ignore[arg-type]
    )


def _graph_dict(graph: graph_request.Graph) -> dict[str, Any]:
    """The graph as GraphSerializer documents it, key for key and in its field order.

    catalog.lineage.graph builds nodes and edges in that shape already (datetimes in UTC, which the
    JSON renderer writes as DateTimeField would), so the answer skips the serializer: for
    a graph of 500 nodes, DRF's per-field walk cost ~30 ms of CPU, most of the request's
    Python. tests/api/test_lineage_rendering.py holds the two to the same bytes.
    """
    body: dict[str, Any] = {"root": str(graph.root), "nodes": graph.nodes, "edges": graph.edges}
    if graph.prebuilt is not None:  # PostgreSQL wrote them: passed through (ADR 0109)
        body["nodes"], body["edges"] = (RawJSON(text) for text in graph.prebuilt)
    if graph.column_edges is not None:
        body["column_edges"] = graph.column_edges
        body["dataset_dependencies"] = graph.dataset_dependencies
    body["truncated"] = graph.truncated
    body["cut"] = graph.cut
    return body


def _diff_dict(
    root: graph_request.NodeRef, start: Any, end: Any, diff: graph_diff.GraphDiff
) -> dict:
    """The diff as DiffSerializer documents it, in its field order ("from" is declared
    last, see above); as for the graph, without the serializer's per-field walk."""
    return {
        "root": str(root),
        "to": end,
        "nodes": {"added": diff.nodes_added, "removed": diff.nodes_removed},
        "edges": {"added": diff.edges_added, "removed": diff.edges_removed},
        "truncated": diff.before.truncated or diff.after.truncated,
        "from": start,
    }


class LineageGraph(ReadAPIView):
    # Static lineage (?lineage=, default all) shows declarations and their column edges.
    read_permissions = (JOB, DATASET, EDGE, COLUMN_EDGE, STATIC, STATIC_COLUMN)

    @extend_schema(
        operation_id="lineage_graph",
        summary="The lineage graph around a dataset or a job",
        description=(
            "Nodes are datasets and jobs; edges are `input` (dataset → job) and `output` "
            "(job → dataset), aggregated over every run. `depth` counts dataset hops, "
            "`max_nodes` datasets and jobs together; nearer nodes are kept first. When a "
            "bound cuts the graph, `truncated` is true and `cut` says what was cut. Cycles "
            "are walked once per depth and end at the bound."
        ),
        parameters=[
            *WALK_PARAMETERS,
            OpenApiParameter(
                "as_of", OpenApiTypes.DATETIME, description="The graph as it was known then."
            ),
            OpenApiParameter(
                "since", OpenApiTypes.DATETIME, description="Only edges seen at or after."
            ),
            OpenApiParameter(
                "columns",
                bool,
                description="Add column-level edges and dataset-level dependencies.",
            ),
            OpenApiParameter(
                "edges",
                str,
                description="Which edges, comma-separated: `data` (default: inputs, outputs, "
                "parent and through edges) and `control` (the drawn jobs' control edges from "
                "runs' jobDependencies facets, kind `control`; never data lineage, never "
                "walked; ADR 0090). `data,control` draws both. Any other value is a 400.",
            ),
        ],
        responses={200: GraphSerializer, **WITH_404},
        examples=[OpenApiExample("graph", value=GRAPH_EXAMPLE, response_only=True)],
    )
    def get(self, request: Request) -> Response:
        walk = _walk_request(request)
        walk.as_of = params.moment(request, "as_of")
        walk.since = params.moment(request, "since")
        walk.columns = params.boolean(request, "columns")
        walk.control = "control" in _edge_kinds(request)
        try:
            graph = lineage.lineage_graph(walk, prebuild=True)
        except graph_request.UnknownNode:
            raise not_found(f"No {walk.root.kind} has id {walk.root.id}.") from None
        return Response(_graph_dict(graph))


def _edge_kinds(request: Request) -> set[str]:
    """``edges=data,control``: the kinds asked for; data lineage is always drawn."""
    raw = request.query_params.get("edges") or "data"
    kinds = {kind.strip() for kind in raw.split(",")}
    unknown = sorted(kinds - set(graph_request.EDGE_KINDS))
    if unknown:
        raise bad_parameter(
            "edges",
            f"unknown edge kind {unknown[0][:40]!r}; expected a comma-separated list of "
            f"{', '.join(graph_request.EDGE_KINDS)}.",
        )
    return kinds


class LineageDiff(ReadAPIView):
    read_permissions = (JOB, DATASET, EDGE, STATIC)  # the diff walks static lineage too

    @extend_schema(
        operation_id="lineage_diff",
        summary="Nodes and edges added and removed around a node between two times",
        description=(
            "Added: in the graph as of `to` but not as of `from`. Removed: in the graph as "
            "of `from`, and its job produced lineage in (from, to] without producing this "
            "edge again (the job stopped reading or writing the dataset). A node is removed "
            "when all its edges are."
        ),
        parameters=[
            *WALK_PARAMETERS,
            OpenApiParameter("from", OpenApiTypes.DATETIME, required=True),
            OpenApiParameter("to", OpenApiTypes.DATETIME, required=True),
        ],
        responses={200: DiffSerializer, **WITH_404},
    )
    def get(self, request: Request) -> Response:
        walk = _walk_request(request)
        start = params.moment(request, "from")
        end = params.moment(request, "to")
        if start is None:
            raise bad_parameter("from", "this parameter is required.")
        if end is None:
            raise bad_parameter("to", "this parameter is required.")
        if end < start:
            raise bad_parameter("to", "must not be before `from`.")
        try:
            diff = graph_diff.lineage_diff(walk, start, end)
        except graph_request.UnknownNode:
            raise not_found(f"No {walk.root.kind} has id {walk.root.id}.") from None
        return Response(_diff_dict(walk.root, start, end, diff))
