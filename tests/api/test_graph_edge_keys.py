"""A graph without its edges' figures (ADR 0125): what the Marquez mount's ``/lineage`` walks.

Marquez draws which edges there are, never their figures (first and last seen, run counts,
last run, currency), so ``catalog.lineage.drawn`` asks ``lineage_graph(figures=False)``,
whose job-edge read (``job_edges.edge_keys``) reads no reference run, last run or currency.
The edges must be the same as the full read's, in the same order, now and as of T, since
T, with retirements; a drawn temporary dataset, whose fold composes its halves' figures
(ADR 0089), has them read as for any graph. The Marquez answers themselves are held byte
for byte by tests/marquez/test_lineage_snapshot.py.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.lineage import graph as lineage
from catalog.lineage import job_edges
from catalog.lineage.request import GraphRequest, NodeRef
from catalog.models import JobLineageEdge
from catalog.services import retirement
from catalog.services.retirement import Actor
from tests.api.factories import at, make_dataset, make_edge, make_job, make_run

pytestmark = pytest.mark.django_db

TEMPORARY = {"datasetType": {"datasetType": "JOB_OUTPUT", "subType": "TEMPORARY"}}
FIGURES = ("first_seen", "last_seen", "last_run_id", "run_count", "completed_run_count")


def _store(temporary: bool = False) -> list:
    """a → [first] → b → [second] → c → [third] → d, runs at hours 1 and 2; ``b`` typed a
    temporary job output when asked."""
    a, c, d = make_dataset(), make_dataset(), make_dataset()
    b = make_dataset(facets=TEMPORARY) if temporary else make_dataset()
    first, second, third = make_job(), make_job(), make_job()
    make_edge(a, b, first, first=at(1), last=at(2), runs=[make_run(first, started=at(1))])
    make_edge(b, c, second, first=at(2), last=at(2), runs=[make_run(second, started=at(2))])
    make_edge(c, d, third, first=at(1), last=at(1), runs=[make_run(third, "FAIL", started=at(1))])
    return [a, b, c, d, first, second, third]


def _keys() -> set[tuple[str, int, int]]:
    return {(edge.direction, edge.dataset_id, edge.job_id) for edge in JobLineageEdge.objects.all()}


@pytest.mark.parametrize(
    ("as_of", "since"), [(None, None), (at(1), None), (None, at(2)), (at(3), at(2))]
)
@pytest.mark.parametrize("retired", [False, True])
def test_edge_keys_are_the_job_edges_without_figures(as_of, since, retired):
    nodes = _store()
    retirement.retire(nodes[-1], Actor("token:ci"), "switched off")  # the third job
    keys = _keys() | {("input", nodes[0].id, nodes[-2].id)}  # a key with no job edge
    full = job_edges.job_edges(keys, as_of, since, retired)
    bare = job_edges.edge_keys(keys, as_of, since, retired)
    assert [row[:4] for row in bare] == [row[:4] for row in full]
    assert all(row[4:] == (None,) * 7 for row in bare)
    assert full, "the window keeps some edges"
    if retired:  # the retired job's edges are left out by both
        assert nodes[-1].id not in {row[1] for row in bare}
    assert job_edges.edge_keys(set(), as_of, since, retired) == []


def _graph(root: NodeRef, figures: bool):
    request = GraphRequest(root=root, direction="both", depth=5, max_nodes=500)
    with CaptureQueriesContext(connection) as captured:
        graph = lineage.lineage_graph(request, figures=figures)
    return graph, [query["sql"] for query in captured]


@pytest.mark.parametrize("root", ["dataset", "job"])
def test_a_graph_without_figures_draws_the_same_edges_and_nodes(root):
    nodes = _store()
    node = NodeRef("dataset", nodes[1].id) if root == "dataset" else NodeRef("job", nodes[5].id)
    full, _ = _graph(node, figures=True)
    bare, statements = _graph(node, figures=False)
    assert bare.nodes == full.nodes and bare.cut == full.cut
    assert bare.edge_sources == full.edge_sources and len(bare.edges) == len(full.edges) > 0
    for kept, whole in zip(bare.edges, full.edges, strict=True):
        assert {k: v for k, v in kept.items() if k not in (*FIGURES, "via", "current")} == {
            k: v for k, v in whole.items() if k not in (*FIGURES, "via", "current")
        }
        assert all(kept[name] is None for name in (*FIGURES, "via", "current"))
    assert not [sql for sql in statements if "reference" in sql]
    assert len(statements) == len(_graph(node, figures=True)[1])  # the same count


def test_a_drawn_temporary_dataset_has_its_figures_read_and_folds_the_same():
    nodes = _store(temporary=True)
    root = NodeRef("dataset", nodes[0].id)
    full, full_statements = _graph(root, figures=True)
    bare, statements = _graph(root, figures=False)
    assert bare.folded == full.folded == {nodes[1].id}
    assert bare.edges == full.edges and bare.nodes == full.nodes
    assert [edge["kind"] for edge in bare.edges].count("through") == 1
    assert [sql for sql in statements if "reference" in sql]
    assert len(statements) == len(full_statements)
