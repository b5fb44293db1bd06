"""Generators: RMAT, uniform, the w x d graphs and the tiny named graphs."""

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.csgraph
from hypothesis import given, settings
from hypothesis import strategies as st

from gravfm.errors import SpecError
from gravfm.graph import TINY_GRAPHS, Graph, rmat, rmat_edges, tiny_graph, uniform, uniform_edges, wd, wd_levels


def bfs_levels(graph, root=0):
    matrix = scipy.sparse.csr_matrix((np.ones(graph.num_edges), graph.targets, graph.offsets),
                                     shape=(graph.num_vertices,) * 2)
    order, predecessors = scipy.sparse.csgraph.breadth_first_order(matrix, root, directed=True)
    levels = np.full(graph.num_vertices, -1)
    levels[root] = 0
    for v in order[1:]:
        levels[v] = levels[predecessors[v]] + 1
    return levels


@pytest.mark.parametrize("scale, ef", [(1, 1), (6, 4), (10, 16)])
def test_rmat_edge_count_before_cleaning(scale, ef):
    src, dst, n = rmat_edges(scale, ef, seed=3)
    assert n == 2**scale and src.size == dst.size == ef * 2**scale
    assert src.min() >= 0 and max(src.max(), dst.max()) < n
    g = rmat(scale, ef, seed=3)
    assert g.cleaning.input_edges == ef * 2**scale and g.num_vertices == 2**scale


def test_rmat_seed_reproducible_and_distinct():
    a = rmat_edges(8, 8, seed=5)
    b = rmat_edges(8, 8, seed=5)
    c = rmat_edges(8, 8, seed=6)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_rmat_quadrant_probabilities():
    # Without permutation the top bit of an endpoint is 1 with probability c + d (source) and
    # b + d (destination): 0.24 each for graph500 parameters.
    src, dst, n = rmat_edges(12, 16, seed=1, permute=False)
    half = n // 2
    assert abs((src >= half).mean() - 0.24) < 0.01
    assert abs((dst >= half).mean() - 0.24) < 0.01
    assert abs(((src >= half) & (dst >= half)).mean() - 0.05) < 0.005
    # Skewed: the busiest vertex has far more than the average degree.
    assert np.bincount(src, minlength=n).max() > 20 * 16


def test_rmat_permute_keeps_degree_distribution():
    plain = np.sort(np.bincount(rmat_edges(9, 8, seed=2, permute=False)[0], minlength=512))
    shuffled = np.sort(np.bincount(rmat_edges(9, 8, seed=2, permute=True)[0], minlength=512))
    assert plain.sum() == shuffled.sum() == 8 * 512
    assert plain.max() > 5 * 8 and shuffled.max() > 5 * 8


def test_rmat_bad_parameters():
    with pytest.raises(SpecError, match="a\\+b\\+c"):
        rmat_edges(4, 4, a=0.6, b=0.3, c=0.3)
    with pytest.raises(SpecError, match="rmat scale must be"):
        rmat_edges(-1, 4)


def test_uniform_counts_and_reproducibility():
    src, dst, n = uniform_edges(1000, 8, seed=2)
    assert src.size == 8000 and n == 1000
    g = uniform(1000, 8, seed=2)
    assert g.cleaning.input_edges == 8000
    assert g.num_edges == 8000 - g.cleaning.self_loops_removed - g.cleaning.duplicates_removed
    np.testing.assert_array_equal(uniform(1000, 8, seed=2).targets, g.targets)
    # Uniform: no vertex far above the mean (Poisson(8) max over 1000 vertices stays small).
    assert g.out_degree().max() < 30


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 10), st.integers(0, 1000))
def test_wd_has_exactly_d_plus_one_bfs_levels(w, d, degree, seed):
    g = wd(w, d, degree, seed=seed)
    assert g.num_vertices == 1 + w * d
    levels = bfs_levels(g)
    np.testing.assert_array_equal(levels, wd_levels(w, d))
    assert levels.max() == d  # levels 0 .. d: d + 1 of them
    assert np.all(np.bincount(levels)[1:] == w)
    # Undirected variant: same levels from the root.
    np.testing.assert_array_equal(bfs_levels(wd(w, d, degree, seed=seed, undirected=True)), wd_levels(w, d))


def test_wd_average_degree():
    g = wd(64, 32, 8, seed=1, duplicates="keep")
    assert g.num_edges == 8 * g.num_vertices
    src, dst = g.edges()
    levels = wd_levels(64, 32)
    same_rank = levels[src] == levels[dst]
    tree = levels[dst] == levels[src] + 1
    assert np.all(same_rank | tree)
    assert np.count_nonzero(tree) == 64 * 32  # one parent per non-root vertex
    assert not np.any(src == dst)


@pytest.mark.parametrize("name", sorted(TINY_GRAPHS))
def test_tiny_graphs_are_well_formed(name):
    g = tiny_graph(name)
    assert isinstance(g, Graph) and g.name == f"tiny:{name}"
    assert g.offsets[-1] == g.num_edges
    assert TINY_GRAPHS[name].__doc__


def test_tiny_graphs_have_their_feature():
    assert tiny_graph("self_loop").cleaning.self_loops_kept == 2
    assert tiny_graph("isolated").num_vertices == 6
    assert np.count_nonzero((tiny_graph("isolated").out_degree() == 0)) == 4
    assert tiny_graph("duplicates").num_edges == 5
    assert tiny_graph("complete").num_edges == 20
    assert tiny_graph("weighted").weights is not None
    n_components, _ = scipy.sparse.csgraph.connected_components(
        scipy.sparse.csr_matrix((np.ones(14), tiny_graph("two_components").targets,
                                 tiny_graph("two_components").offsets), shape=(7, 7)))
    assert n_components == 2
    dag = tiny_graph("dag")
    matrix = scipy.sparse.csr_matrix((np.ones(dag.num_edges), dag.targets, dag.offsets), shape=(8, 8))
    n_strong, _ = scipy.sparse.csgraph.connected_components(matrix, directed=True, connection="strong")
    assert n_strong == dag.num_vertices  # acyclic: every strongly connected component is one vertex
    with pytest.raises(SpecError, match="unknown tiny graph 'nope'"):
        tiny_graph("nope")
