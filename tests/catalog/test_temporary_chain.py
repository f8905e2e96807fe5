"""The one composition loop of temporary folding (catalog.lineage.temporary._chain, ADR
0089), which the graph's column fold and Marquez's field walk share: composed through a
run of folded datasets, first kept, cut by its edge limit and its depth, and saying so."""

import itertools

from catalog.lineage.temporary import MAX_FOLD_DEPTH, _chain

Edge = tuple[str, str]


def _fold(edges: list[Edge], folded: set[str], limit: int) -> tuple[list[Edge], bool]:
    out_of: dict[str, list[Edge]] = {}
    for edge in edges:
        if edge[0] in folded:
            out_of.setdefault(edge[0], []).append(edge)
    return _chain(
        [edge for edge in edges if edge[0] not in folded and edge[1] in folded],
        lambda first: out_of.get(first[1], []),
        lambda first, second: (first[0], second[1]),
        lambda edge: edge,
        lambda edge: edge[1] in folded,
        limit,
    )


def test_a_run_of_folded_datasets_composes_to_its_end() -> None:
    edges = [("a", "t1"), ("t1", "t2"), ("t2", "b"), ("t2", "c")]
    composed, cut = _fold(edges, {"t1", "t2"}, limit=10)
    assert (composed, cut) == ([("a", "t2"), ("a", "b"), ("a", "c")], False)


def test_the_edge_limit_cuts_and_says_so() -> None:
    edges = [("a", "t"), ("t", "b"), ("t", "c")]
    assert _fold(edges, {"t"}, limit=1) == ([("a", "b")], True)
    assert _fold(edges, {"t"}, limit=2) == ([("a", "b"), ("a", "c")], False)


def _line(length: int) -> tuple[list[Edge], set[str]]:
    """a → t0 → … → t(length - 1) → b, every t folded."""
    names = [f"t{n}" for n in range(length)]
    return [("a", names[0]), *itertools.pairwise(names), (names[-1], "b")], set(names)


def test_a_chain_longer_than_the_depth_is_cut() -> None:
    composed, cut = _fold(*_line(MAX_FOLD_DEPTH), limit=1000)
    assert not cut and ("a", "b") in composed
    composed, cut = _fold(*_line(MAX_FOLD_DEPTH + 1), limit=1000)
    assert cut and ("a", "b") not in composed
