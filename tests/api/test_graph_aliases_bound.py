"""A graph's dataset node shows its first aliases by name, and ``alias_count`` only when it
has more (ADR 0184), both ways the graph is written (PostgreSQL's JSON, ADR 0109, and the
Python assembly): a table symlinked under a new name by every run gathers tens of
thousands, and each was in every graph that drew it (50,000 made one answer 4.1 MB)."""

import itertools

import pytest

from catalog.lineage import prebuilt
from catalog.lineage.assembly import NODE_ALIASES
from catalog.models import DatasetAlias
from tests.api.factories import add_symlink_aliases, make_dataset, make_edge, make_job

pytestmark = pytest.mark.django_db

MORE = NODE_ALIASES + 57  # and the dataset's own name: MORE + 1 aliases


def _by_name(dataset) -> list[tuple[str, str]]:
    aliases = DatasetAlias.objects.filter(dataset=dataset).order_by("namespace", "name", "id")
    return list(aliases.values_list("namespace", "name"))


def _store(symlinks: int):
    """big → copy → small; big has ``symlinks`` aliases besides its own name."""
    big, small = make_dataset("shop.public.big"), make_dataset("shop.public.small")
    make_edge(big, small, make_job("copy"))
    add_symlink_aliases(big, symlinks)
    return big, small


def _both_ways(api, monkeypatch, path):
    """The graph as PostgreSQL writes it (counted: it must be taken), then as the Python
    assembly does; the two are the same bytes."""
    taken = []
    build = prebuilt.build

    def counting(*args):
        taken.append(build(*args))
        return taken[-1]

    monkeypatch.setattr(prebuilt, "build", counting)
    fast = api.get(path)
    monkeypatch.setattr(prebuilt, "applies", lambda *args: False)
    slow = api.get(path)
    assert [fast.status_code, slow.status_code] == [200, 200]
    assert taken and taken[0] is not None
    assert fast.content == slow.content
    return fast.json()


def _nodes(body) -> dict[str, dict]:
    return {node["id"]: node for node in body["nodes"]}


def test_a_node_shows_its_first_aliases_by_name_and_how_many_it_has(api, monkeypatch):
    big, small = _store(MORE)
    body = _both_ways(api, monkeypatch, f"/api/v1/lineage/graph?node=dataset:{small.id}")
    node = _nodes(body)[f"dataset:{big.id}"]
    assert [(a["namespace"], a["name"]) for a in node["aliases"]] == _by_name(big)[:NODE_ALIASES]
    assert node["aliases"][0] == {
        "namespace": "hive://meta:9083",
        "name": "snap_000000",
        "reason": "symlink",
    }
    assert node["alias_count"] == MORE + 1
    keys = list(node)
    assert keys[keys.index("aliases") + 1] == "alias_count"
    assert "alias_count" not in _nodes(body)[f"dataset:{small.id}"]


def test_a_node_at_the_bound_shows_every_alias_and_no_count(api, monkeypatch):
    big, _ = _store(NODE_ALIASES - 1)
    body = _both_ways(api, monkeypatch, f"/api/v1/lineage/graph?node=dataset:{big.id}")
    node = _nodes(body)[f"dataset:{big.id}"]
    assert [(a["namespace"], a["name"]) for a in node["aliases"]] == _by_name(big)
    assert len(node["aliases"]) == NODE_ALIASES
    assert "alias_count" not in node


def test_the_diff_and_the_marquez_graph_read_the_bounded_nodes(api):
    big, small = _store(MORE)
    diff = api.get(  # big is drawn as of `to`, not as of `from`: added
        f"/api/v1/lineage/diff?node=dataset:{small.id}"
        "&from=2026-10-01T00:00:00Z&to=2026-12-01T00:00:00Z"
    ).json()
    node = _nodes({"nodes": diff["nodes"]["added"]})[f"dataset:{big.id}"]
    assert (len(node["aliases"]), node["alias_count"]) == (NODE_ALIASES, MORE + 1)
    # Marquez's dataset node shows no alias list (its symlinks are a facet, ADR 0180).
    marquez = api.get(
        f"/marquez/api/v1/lineage?nodeId=dataset:{big.namespace}:{big.name}&depth=2"
    ).json()
    assert "aliases" not in str(marquez)
    assert len(marquez["graph"]) == 3


def test_the_graph_of_a_node_past_the_bound_keeps_its_queries(api, django_assert_num_queries):
    datasets = [make_dataset(f"chain.t{index}") for index in range(40)]
    job = make_job("chain.job")
    for source, target in itertools.pairwise(datasets):
        make_edge(source, target, job)
    add_symlink_aliases(datasets[20], MORE)
    # As tests/api/test_graph.py pins this graph: the nodes, their aliases and the count of
    # a node past the bound are in the statement that writes them (ADR 0109, 0184).
    path = f"/api/v1/lineage/graph?node=dataset:{datasets[20].id}&depth=3&lineage=observed"
    with django_assert_num_queries(6):
        body = api.get(path).json()
    assert _nodes(body)[f"dataset:{datasets[20].id}"]["alias_count"] == MORE + 1
