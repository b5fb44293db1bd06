"""The CSR Graph: construction policies, derived graphs, degrees (property-based where possible)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravfm.errors import GraphFormatError, SpecError
from gravfm.graph import CleaningReport, Graph


@st.composite
def edge_lists(draw, max_vertices=12, max_edges=40, weighted=False):
    n = draw(st.integers(1, max_vertices))
    m = draw(st.integers(0, max_edges))
    ids = st.integers(0, n - 1)
    src = draw(st.lists(ids, min_size=m, max_size=m))
    dst = draw(st.lists(ids, min_size=m, max_size=m))
    weights = None
    if weighted:
        weights = np.array(draw(st.lists(st.integers(-5, 50), min_size=m, max_size=m)), dtype=np.int64)
    return n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), weights


def edge_multiset(graph):
    src, dst = graph.edges()
    return sorted(zip(src.tolist(), dst.tolist()))


@settings(max_examples=60, deadline=None)
@given(edge_lists(weighted=True))
def test_from_edges_round_trip_keeps_every_edge_with_its_weight(case):
    n, src, dst, weights = case
    g = Graph.from_edges(src, dst, n, weights)
    assert g.num_vertices == n and g.num_edges == src.size
    assert edge_multiset(g) == sorted(zip(src.tolist(), dst.tolist()))
    # Weights follow their edges: compare (src, dst, weight) multisets.
    s, d = g.edges()
    assert sorted(zip(s.tolist(), d.tolist(), g.weights.tolist())) == \
        sorted(zip(src.tolist(), dst.tolist(), weights.tolist()))
    # CSR invariants.
    assert g.offsets[0] == 0 and g.offsets[-1] == g.num_edges
    assert np.all(np.diff(g.offsets) >= 0)
    keys = s.astype(np.int64) * n + d
    assert np.all(np.diff(keys) >= 0), "edges must be sorted by (source, target)"
    assert g.targets.dtype == np.int32 and g.offsets.dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(edge_lists(), st.sampled_from(["keep", "drop"]), st.sampled_from(["keep", "merge"]))
def test_policy_counts_add_up(case, self_loops, duplicates):
    n, src, dst, _ = case
    g = Graph.from_edges(src, dst, n, self_loops=self_loops, duplicates=duplicates)
    report = g.cleaning
    assert report.input_edges == src.size
    assert report.input_edges + report.mirrored_edges == \
        report.edges + report.self_loops_removed + report.duplicates_removed
    assert report.edges == g.num_edges
    loops = int(np.count_nonzero(src == dst))
    if self_loops == "drop":
        assert report.self_loops_removed == loops and report.self_loops_kept == 0
    else:
        assert report.self_loops_removed == 0
        distinct_loops = len({u for u, v in zip(src.tolist(), dst.tolist()) if u == v})
        assert report.self_loops_kept == (loops if duplicates == "keep" else distinct_loops)
    pairs = edge_multiset(g)
    if duplicates == "merge":
        assert len(set(pairs)) == len(pairs)
        expected = {(u, v) for u, v in zip(src.tolist(), dst.tolist()) if self_loops == "keep" or u != v}
        assert set(pairs) == expected


@settings(max_examples=60, deadline=None)
@given(edge_lists(weighted=True))
def test_reverse_twice_is_identity(case):
    n, src, dst, weights = case
    g = Graph.from_edges(src, dst, n, weights)
    back = g.reverse().reverse()
    np.testing.assert_array_equal(back.offsets, g.offsets)
    np.testing.assert_array_equal(back.targets, g.targets)
    assert sorted(zip(*back.edges(), back.weights)) == sorted(zip(*g.edges(), g.weights))
    np.testing.assert_array_equal(g.reverse().out_degree(), g.in_degree())


@settings(max_examples=60, deadline=None)
@given(edge_lists())
def test_symmetrize_is_symmetric_and_minimal(case):
    n, src, dst, _ = case
    g = Graph.from_edges(src, dst, n)
    sym = g.symmetrize()
    assert sym.is_symmetric()
    pairs = edge_multiset(sym)
    assert len(set(pairs)) == len(pairs), "symmetrize merges the duplicates it makes"
    expected = {(u, v) for u, v in zip(src.tolist(), dst.tolist())} | \
        {(v, u) for u, v in zip(src.tolist(), dst.tolist())}
    assert set(pairs) == expected
    np.testing.assert_array_equal(sym.out_degree(), sym.in_degree())


@settings(max_examples=40, deadline=None)
@given(edge_lists())
def test_degrees_sources_and_neighbors_agree(case):
    n, src, dst, _ = case
    g = Graph.from_edges(src, dst, n)
    np.testing.assert_array_equal(g.out_degree(), np.bincount(src, minlength=n))
    np.testing.assert_array_equal(g.in_degree(), np.bincount(dst, minlength=n))
    s, d = g.edges()
    for v in range(n):
        np.testing.assert_array_equal(g.neighbors(v), np.sort(dst[src == v]))
        assert np.all(s[g.offsets[v]:g.offsets[v + 1]] == v)


def test_relabel_compact_maps_back_to_original_ids():
    g = Graph.from_edges([100, 7, 7], [7, 42, 100], relabel="compact")
    assert g.num_vertices == 3 and g.cleaning.relabelled
    np.testing.assert_array_equal(g.original_ids, [7, 42, 100])
    s, d = g.edges()
    assert sorted(zip(g.original_ids[s].tolist(), g.original_ids[d].tolist())) == [(7, 42), (7, 100), (100, 7)]


def test_hub_is_the_first_vertex_of_most_out_edges_as_the_input_names_it():
    assert Graph.from_edges([0, 2, 2, 1, 1], [1, 0, 1, 0, 2]).hub() == 1
    relabelled = Graph.from_edges([100, 7, 7], [7, 42, 100], relabel="compact")
    assert relabelled.hub() == 7


def test_relabel_auto_only_when_ids_have_gaps():
    dense = Graph.from_edges([0, 1], [1, 2], relabel="auto")
    assert not dense.cleaning.relabelled and dense.original_ids is None
    sparse = Graph.from_edges([1, 5], [5, 9], relabel="auto")
    assert sparse.cleaning.relabelled and sparse.num_vertices == 3


def test_mirror_adds_reverse_edges_but_not_self_loops():
    g = Graph.from_edges([0, 1, 2], [1, 2, 2], mirror=True)
    assert g.cleaning.mirrored_edges == 2
    assert edge_multiset(g) == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 2)]


def test_merge_keeps_the_first_weight():
    g = Graph.from_edges([0, 0, 0], [1, 1, 2], weights=[5.0, 7.0, 1.0], duplicates="merge")
    assert g.weights.tolist() == [5.0, 1.0] and g.cleaning.duplicates_removed == 1


def test_arrays_are_read_only():
    g = Graph.from_edges([0], [1])
    with pytest.raises(ValueError):
        g.targets[0] = 0


def test_empty_and_isolated():
    empty = Graph.from_edges([], [])
    assert empty.num_vertices == 0 and empty.num_edges == 0 and empty.offsets.tolist() == [0]
    isolated = Graph.from_edges([], [], num_vertices=4)
    assert isolated.out_degree().tolist() == [0, 0, 0, 0]
    assert isolated.cleaning == CleaningReport()


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(src=[0, -1], dst=[1, 0]), GraphFormatError, "non-negative"),
    (dict(src=[0, 5], dst=[1, 0], num_vertices=3), GraphFormatError, "vertex id 5 is out of range"),
    (dict(src=[0, 1], dst=[1]), GraphFormatError, "2 sources but 1 destinations"),
    (dict(src=[0], dst=[1], self_loops="remove"), SpecError, "self_loops policy"),
    (dict(src=[0], dst=[1], duplicates="drop"), SpecError, "duplicates policy"),
    (dict(src=[0], dst=[1], weights=[1, 2]), GraphFormatError, "2 weights for 1 edges"),
])
def test_bad_input_names_the_problem(kwargs, error, words):
    with pytest.raises(error, match=words):
        Graph.from_edges(**kwargs)


def test_neighbors_out_of_range():
    with pytest.raises(GraphFormatError, match="vertex 3 is out of range"):
        Graph.from_edges([0], [1], num_vertices=3).neighbors(3)


def test_constructor_checks_csr_arrays():
    g = Graph([0, 2, 3, 3], [0, 2, 1])
    assert g.num_vertices == 3 and g.edges()[0].tolist() == [0, 0, 1]
    with pytest.raises(GraphFormatError, match="sorted within"):
        Graph([0, 2, 3], [1, 0, 0])
    with pytest.raises(GraphFormatError, match="rise from 0"):
        Graph([0, 3, 2], [0, 1])
    with pytest.raises(GraphFormatError, match="must lie in 0..1"):
        Graph([0, 1, 1], [2])


def test_relabel_by_appearance_numbers_in_first_seen_order():
    # fpgagraphlib's loader numbers ids as they are first met: source, then target, line by line.
    g = Graph.from_edges([50, 7, 50, 9], [7, 50, 3, 9], relabel="appearance")
    assert g.original_ids.tolist() == [50, 7, 3, 9]
    s, d = g.edges()
    assert sorted(zip(g.original_ids[s].tolist(), g.original_ids[d].tolist())) == \
        [(7, 50), (9, 9), (50, 3), (50, 7)]


@pytest.mark.parametrize("size", [0, 3])
def test_from_edges_never_freezes_or_aliases_the_callers_arrays(size):
    src = np.arange(size, dtype=np.int64)
    dst = np.zeros(size, dtype=np.int64)
    weights = np.ones(size)
    g = Graph.from_edges(src, dst, max(size, 1), weights)
    assert src.flags.writeable and dst.flags.writeable and weights.flags.writeable
    assert not np.shares_memory(g.targets, dst) and not np.shares_memory(g.weights, weights)
