"""The graph and diff answers skip their serializers (api/views/lineage.py): they must still
be, byte for byte, what GraphSerializer and DiffSerializer (the documented shape) render."""

from datetime import timedelta

import pytest
from rest_framework.renderers import JSONRenderer

from api.views.lineage import DiffSerializer, GraphSerializer, _graph_dict
from catalog.lineage import diff as graph_diff
from catalog.lineage import graph as lineage
from catalog.lineage import request as graph_request
from catalog.models import ColumnLineageEdge, LineageEdge
from tests.api.factories import (
    add_alias,
    at,
    iso,
    make_column_edge,
    make_dataset,
    make_edge,
    make_job,
    make_job_edge,
    make_run,
)

pytestmark = pytest.mark.django_db


def documented(serializer_class, body) -> bytes:
    return JSONRenderer().render(serializer_class(body).data)


@pytest.fixture
def region():
    """Aliases, an edge-API lineage type, column edges, a reader-only job, a job edge with
    no run rows, sub-second times, a cut by max_nodes: every field the answer can hold."""
    a, b, c = (make_dataset(f"shop.public.{name}") for name in "abc")
    add_alias(a, "hive://metastore", "warehouse.a", reason="symlink", detail="TABLE")
    job, other = make_job("load"), make_job("enrich")
    runs = [
        make_run(job, started=at(1) + timedelta(microseconds=123456)),
        make_run(job, started=at(30)),
    ]
    make_edge(a, b, job, first=at(1), last=at(30), runs=runs)
    make_edge(b, c, other, first=at(2), last=at(3))
    LineageEdge.objects.filter(job=other).update(lineage_type="TABLE")
    make_column_edge(a, "id", b, "id", job)
    dependency = make_column_edge(a, "status", b, "", job)  # a dataset-level dependency
    ColumnLineageEdge.objects.filter(id=dependency.id).update(
        dataset_level=True, transformation_type="INDIRECT", transformation_subtype="FILTER"
    )
    make_job_edge(make_job("check"), b, "input", at(4), at(4), runs=[])
    return a, b, job


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"columns": True},
        {"as_of": at(10)},
        {"since": at(2)},
        {"max_nodes": 3},
        {"direction": "upstream", "depth": 1},
    ],
)
def test_graph_is_what_its_serializer_renders(api, region, params):
    a, _, _ = region
    request = graph_request.GraphRequest(root=graph_request.NodeRef("dataset", a.id), **params)
    query = "&".join(
        f"{key}={iso(value) if key in ('as_of', 'since') else str(value).lower()}"
        for key, value in params.items()
    )
    response = api.get(f"/api/v1/lineage/graph?node=dataset:{a.id}&{query}")
    assert response.status_code == 200, response.content
    expected = documented(GraphSerializer, _graph_dict(lineage.lineage_graph(request)))
    assert response.content == expected


def test_graph_of_a_job_root_is_what_its_serializer_renders(api, region):
    _, _, job = region
    response = api.get(f"/api/v1/lineage/graph?node=job:{job.id}&columns=true")
    assert response.status_code == 200, response.content
    graph = lineage.lineage_graph(
        graph_request.GraphRequest(root=graph_request.NodeRef("job", job.id), columns=True)
    )
    assert response.content == documented(GraphSerializer, _graph_dict(graph))


def test_diff_is_what_its_serializer_renders(api, region):
    a, _, _ = region
    start, end = at(1.5), at(40)
    response = api.get(f"/api/v1/lineage/diff?node=dataset:{a.id}&from={iso(start)}&to={iso(end)}")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["nodes"]["added"] and body["edges"]["added"]  # the comparison is not vacuous
    diff = graph_diff.lineage_diff(
        graph_request.GraphRequest(root=graph_request.NodeRef("dataset", a.id)), start, end
    )
    expected = {
        "root": f"dataset:{a.id}",
        "from": start,
        "to": end,
        "nodes": {"added": diff.nodes_added, "removed": diff.nodes_removed},
        "edges": {"added": diff.edges_added, "removed": diff.edges_removed},
        "truncated": diff.before.truncated or diff.after.truncated,
    }
    assert response.content == documented(DiffSerializer, expected)
