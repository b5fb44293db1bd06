"""Software references: answers against networkx, superstep counts against a per-vertex loop."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravfm import datasets
from gravfm.algorithms.reference import (
    bfs,
    bfs_levels,
    check_bfs_parent,
    pagerank,
    sssp,
    wcc,
    wcc_components,
)
from gravfm.errors import ConfigError, GravfmError
from gravfm.graph import Graph
from gravfm.graph.tiny import TINY_GRAPHS, tiny_graph

NONEMPTY_TINY = [name for name in TINY_GRAPHS if tiny_graph(name).num_vertices > 0]


# --- helpers ---------------------------------------------------------------------------------

@st.composite
def graphs(draw, max_vertices=12, max_edges=40, weighted=False):
    """Small directed graphs, with self-loops and duplicate edges allowed."""
    n = draw(st.integers(1, max_vertices))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          max_size=max_edges))
    src = [u for u, _ in edges]
    dst = [v for _, v in edges]
    weights = None
    if weighted:
        weights = np.array(draw(st.lists(st.integers(0, 20), min_size=len(edges),
                                         max_size=len(edges))), dtype=np.int64)
    return Graph.from_edges(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                            num_vertices=n, weights=weights)


def pregel(graph, apply, scatter):
    """Plain per-vertex superstep loop of docs/interfaces.md §2, written independently.

    ``apply(v, state_v, received, round) -> (state_v, update or None)``, where ``received`` is the
    list of messages gathered since the last apply (gather folded into the next apply);
    ``scatter(update, edge_index) -> message``. Returns the states and the count lists.
    """
    n = graph.num_vertices
    state = [None] * n
    inbox = [[] for _ in range(n)]
    updates, messages = [], []
    r = 0
    while True:
        emitted = []
        for v in range(n):
            state[v], update = apply(v, state[v], inbox[v], r)
            if update is not None:
                emitted.append((v, update))
        inbox = [[] for _ in range(n)]
        sent = 0
        for v, update in emitted:
            for e in range(graph.offsets[v], graph.offsets[v + 1]):
                inbox[graph.targets[e]].append(scatter(update, e))
                sent += 1
        updates.append(len(emitted))
        messages.append(sent)
        if not emitted:
            return state, updates, messages
        r += 1


def loop_wcc(graph):
    def apply(v, label, received, r):
        if r == 0:
            return v, v
        new = min([label] + received)
        return new, (new if new < label else None)
    return pregel(graph, apply, lambda update, e: update)


def loop_bfs(graph, root):
    def apply(v, parent, received, r):
        if r == 0:
            return (v, v) if v == root else (-1, None)
        if parent == -1 and received:
            return min(received), v
        return parent, None
    return pregel(graph, apply, lambda update, e: update)


def loop_pagerank(graph, supersteps, damping):
    n = graph.num_vertices
    degree = graph.out_degree()

    def apply(v, rank, received, r):
        rank = 1.0 / n if r == 0 else (1 - damping) / n + damping * math.fsum(received)
        emits = r < supersteps - 1
        return rank, (rank / degree[v] if degree[v] else 0.0) if emits else None
    return pregel(graph, apply, lambda update, e: update)


def loop_sssp(graph, root, weights):
    def apply(v, dist, received, r):
        if r == 0:
            return (0, 0) if v == root else (math.inf, None)
        new = min([dist] + received)
        return new, (new if new < dist else None)
    return pregel(graph, apply, lambda update, e: update + weights[e])


def to_networkx(graph, weights=None):
    g = nx.DiGraph()
    g.add_nodes_from(range(graph.num_vertices))
    src, dst = graph.edges()
    if weights is None:
        g.add_edges_from(zip(src.tolist(), dst.tolist()))
    else:
        # Parallel edges: only the lightest matters for shortest paths.
        for u, v, w in zip(src.tolist(), dst.tolist(), weights.tolist()):
            if not g.has_edge(u, v) or g[u][v]["weight"] > w:
                g.add_edge(u, v, weight=w)
    return g


def check_counts(result):
    assert result.supersteps == len(result.messages_per_superstep)
    assert result.supersteps == len(result.updates_per_superstep)
    assert result.messages_per_superstep[-1] == 0
    assert result.updates_per_superstep[-1] == 0
    assert all(u > 0 for u in result.updates_per_superstep[:-1])


# --- WCC -------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(graphs())
def test_wcc_matches_networkx_and_loop(graph):
    symmetric = graph.symmetrize()
    result = wcc(symmetric)
    expected = np.empty(graph.num_vertices, dtype=np.int64)
    for component in nx.weakly_connected_components(to_networkx(graph)):
        expected[list(component)] = min(component)
    np.testing.assert_array_equal(result.labels, expected)
    np.testing.assert_array_equal(wcc_components(graph), expected)
    labels, updates, messages = loop_wcc(symmetric)
    np.testing.assert_array_equal(result.labels, labels)
    assert list(result.updates_per_superstep) == updates
    assert list(result.messages_per_superstep) == messages
    check_counts(result)


@settings(max_examples=40, deadline=None)
@given(graphs())
def test_wcc_on_directed_graph_is_min_ancestor(graph):
    result = wcc(graph)
    g = to_networkx(graph)
    expected = [min(nx.ancestors(g, v) | {v}) for v in range(graph.num_vertices)]
    np.testing.assert_array_equal(result.labels, expected)
    _, updates, messages = loop_wcc(graph)
    assert list(result.messages_per_superstep) == messages
    assert list(result.updates_per_superstep) == updates


@pytest.mark.parametrize("name", list(TINY_GRAPHS))
def test_wcc_tiny(name):
    graph = tiny_graph(name)
    result = wcc(graph.symmetrize())
    np.testing.assert_array_equal(result.labels, wcc_components(graph))
    assert result.updates_per_superstep[0] == graph.num_vertices
    assert result.messages_per_superstep[0] == graph.symmetrize().num_edges


def test_wcc_two_components_by_hand():
    result = wcc(tiny_graph("two_components"))
    np.testing.assert_array_equal(result.labels, [0, 0, 0, 3, 3, 3, 3])
    # Round 0: all 7 vertices emit over all 14 edges; round 1: 1 and 2 hear 0, 4 and 5 hear 3,
    # 6 hears 4; round 2: 6 hears 3 from 4; round 3 is silent.
    assert result.updates_per_superstep == (7, 5, 1, 0)
    assert result.supersteps == 4


# --- BFS -------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(graphs(), st.data())
def test_bfs_matches_networkx_and_loop(graph, data):
    root = data.draw(st.integers(0, graph.num_vertices - 1))
    result = bfs(graph, root)
    distances = nx.single_source_shortest_path_length(to_networkx(graph), root)
    expected = np.full(graph.num_vertices, -1)
    expected[list(distances)] = list(distances.values())
    np.testing.assert_array_equal(result.level, expected)
    np.testing.assert_array_equal(bfs_levels(graph, root), expected)
    assert check_bfs_parent(graph, root, result.parent) == (True, "")
    parents, updates, messages = loop_bfs(graph, root)
    np.testing.assert_array_equal(result.parent, parents)
    assert list(result.updates_per_superstep) == updates
    assert list(result.messages_per_superstep) == messages
    reachable = expected >= 0
    assert result.total_messages == graph.out_degree()[reachable].sum()
    assert result.total_updates == reachable.sum()
    assert result.supersteps == expected.max() + 2
    check_counts(result)


@settings(max_examples=40, deadline=None)
@given(graphs(), st.data())
def test_check_bfs_parent_accepts_any_valid_tree(graph, data):
    root = data.draw(st.integers(0, graph.num_vertices - 1))
    level = bfs(graph, root).level
    parent = np.full(graph.num_vertices, -1)
    parent[root] = root
    src, dst = graph.edges()
    # Build another valid tree: the HIGHEST-id parent one level up, where the reference takes
    # the lowest.
    for u, v in zip(src.tolist(), dst.tolist()):
        if v != root and level[u] >= 0 and level[v] == level[u] + 1:
            parent[v] = max(parent[v], u)
    assert check_bfs_parent(graph, root, parent) == (True, "")


def test_check_bfs_parent_names_the_first_bad_vertex():
    graph = tiny_graph("dag")  # 0->2, 0->3, 1->3, 2->4, 3->4, 3->5, 4->6, 5->6, 6->7, 1->7
    good = bfs(graph, 0).parent
    np.testing.assert_array_equal(good, [0, -1, 0, 0, 2, 3, 4, 6])
    assert check_bfs_parent(graph, 0, good)[0]
    assert check_bfs_parent(graph, 0, [0, -1, 0, 0, 3, 3, 5, 6])[0]  # other valid parents

    cases = {
        "vertex 1: unreachable": [0, 0, 0, 0, 2, 3, 4, 6],
        "vertex 5: reachable": [0, -1, 0, 0, 2, -1, 4, 6],
        "vertex 4: parent 9 is not": [0, -1, 0, 0, 9, 3, 4, 6],
        "vertex 6: level 3 but its parent 3 is at level 1": [0, -1, 0, 0, 2, 3, 3, 6],
        "vertex 5: parent 2 but the graph has no edge (2, 5)": [0, -1, 0, 0, 2, 2, 4, 6],
        "vertex 0 (root)": [2, -1, 0, 0, 2, 3, 4, 6],
    }
    for expected, parent in cases.items():
        ok, detail = check_bfs_parent(graph, 0, parent)
        assert not ok
        assert detail.startswith(expected), detail
    assert not check_bfs_parent(graph, 0, [0, 1])[0]  # wrong length


@pytest.mark.parametrize("name", NONEMPTY_TINY)
def test_bfs_tiny(name):
    graph = tiny_graph(name)
    result = bfs(graph, 0)
    assert check_bfs_parent(graph, 0, result.parent) == (True, "")
    _, updates, messages = loop_bfs(graph, 0)
    assert list(result.messages_per_superstep) == messages
    assert list(result.updates_per_superstep) == updates


def test_bfs_path_by_hand():
    result = bfs(tiny_graph("path"), 0)  # 0 -> 1 -> ... -> 5
    np.testing.assert_array_equal(result.parent, [0, 0, 1, 2, 3, 4])
    assert result.messages_per_superstep == (1, 1, 1, 1, 1, 0, 0)
    assert result.supersteps == 7


# --- PageRank --------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(graphs(), st.integers(1, 12))
def test_pagerank_matches_per_vertex_loop(graph, supersteps):
    result = pagerank(graph, supersteps=supersteps, damping=0.85)
    ranks, updates, messages = loop_pagerank(graph, supersteps, 0.85)
    np.testing.assert_allclose(result.rank, ranks, rtol=1e-12, atol=0)
    assert list(result.updates_per_superstep) == updates
    assert list(result.messages_per_superstep) == messages
    assert result.supersteps == supersteps
    assert result.rank.dtype == np.float64


@settings(max_examples=30, deadline=None)
@given(graphs())
def test_pagerank_float32_close_to_float64(graph):
    single = pagerank(graph, dtype=np.float32)
    double = pagerank(graph, dtype=np.float64)
    assert single.rank.dtype == np.float32
    np.testing.assert_allclose(single.rank, double.rank, rtol=2e-5, atol=1e-9)


def test_pagerank_fixed_point_matches_networkx():
    # networkx redistributes the rank of dangling vertices; Pregel PageRank does not. On a graph
    # without dangling vertices both converge to the same fixed point (ranks sum to 1).
    rng = np.random.default_rng(3)
    n = 40
    src = np.concatenate([np.arange(n), rng.integers(0, n, 200)])
    dst = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, 200)])
    graph = Graph.from_edges(src, dst, n, self_loops="drop", duplicates="merge")
    assert graph.out_degree().min() > 0
    result = pagerank(graph, supersteps=300, damping=0.85)
    expected = nx.pagerank(to_networkx(graph), alpha=0.85, tol=1e-14, max_iter=1000)
    np.testing.assert_allclose(result.rank, [expected[v] for v in range(n)], rtol=1e-9)
    assert result.rank.sum() == pytest.approx(1.0)


def test_pagerank_counts_every_vertex_every_round():
    graph = tiny_graph("out_star")  # leaves have no out-edges but still emit updates
    result = pagerank(graph, supersteps=30)
    assert result.updates_per_superstep == (7,) * 29 + (0,)
    assert result.messages_per_superstep == (6,) * 29 + (0,)
    n, d = 7, 0.85
    assert result.rank[0] == pytest.approx((1 - d) / n)
    assert result.rank[1] == pytest.approx((1 - d) / n + d * ((1 - d) / n) / 6)


# --- SSSP ------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(graphs(weighted=True), st.data())
def test_sssp_matches_dijkstra_and_loop(graph, data):
    root = data.draw(st.integers(0, graph.num_vertices - 1))
    result = sssp(graph, root)
    lengths = nx.single_source_dijkstra_path_length(to_networkx(graph, graph.weights), root)
    expected = np.full(graph.num_vertices, -1)
    expected[list(lengths)] = list(lengths.values())
    np.testing.assert_array_equal(result.distance, expected)
    assert result.distance.dtype == np.int64
    distances, updates, messages = loop_sssp(graph, root, graph.weights.tolist())
    np.testing.assert_array_equal(result.distance, [-1 if d == math.inf else d for d in distances])
    assert list(result.updates_per_superstep) == updates
    assert list(result.messages_per_superstep) == messages
    check_counts(result)


@settings(max_examples=30, deadline=None)
@given(graphs(), st.data())
def test_sssp_float_weights_and_unweighted(graph, data):
    root = data.draw(st.integers(0, graph.num_vertices - 1))
    weights = data.draw(st.lists(st.floats(0, 10), min_size=graph.num_edges,
                                 max_size=graph.num_edges))
    weights = np.array(weights, dtype=np.float64)
    result = sssp(graph, root, weights=weights)
    lengths = nx.single_source_dijkstra_path_length(to_networkx(graph, weights), root)
    expected = np.full(graph.num_vertices, np.inf)
    expected[list(lengths)] = list(lengths.values())
    np.testing.assert_allclose(result.distance, expected, rtol=1e-12)
    # Without weights every edge weighs 1: distances are BFS levels, and the first round sends
    # the same messages.
    unit = sssp(graph, root)
    np.testing.assert_array_equal(unit.distance, bfs(graph, root).level)


def test_sssp_weighted_tiny_by_hand():
    result = sssp(tiny_graph("weighted"), 0)  # 0-1 (5), 1-4 (6), 0-2 (1), 2-3 (2), 3-4 (3), 4-5 (1)
    np.testing.assert_array_equal(result.distance, [0, 5, 1, 3, 6, 7])
    # Round 0: root; 1: {1, 2}; 2: {3, 4 via 1 = 11}; 3: {4 via 3 = 6, 5 = 12}; 4: {5 = 7}.
    assert result.updates_per_superstep == (1, 2, 2, 2, 1, 0)


# --- bad input -------------------------------------------------------------------------------

def test_bad_input_raises_gravfm_errors():
    graph = tiny_graph("path")
    with pytest.raises(ConfigError, match="root 6 is out of range"):
        bfs(graph, 6)
    with pytest.raises(ConfigError, match="root"):
        sssp(graph, -1)
    with pytest.raises(ConfigError, match="integer"):
        bfs(graph, "0")
    with pytest.raises(ConfigError, match="negative weight"):
        sssp(graph, 0, weights=np.array([1, 2, -3, 4, 5]))
    with pytest.raises(ConfigError, match="5 edge weights"):
        sssp(graph, 0, weights=np.array([1, 2]))
    with pytest.raises(ConfigError, match="supersteps"):
        pagerank(graph, supersteps=0)
    with pytest.raises(ConfigError, match="damping"):
        pagerank(graph, damping=1.5)
    with pytest.raises(GravfmError, match="no vertices"):
        pagerank(tiny_graph("empty"))


def test_empty_graph_wcc():
    result = wcc(tiny_graph("empty"))
    assert result.supersteps == 1
    assert result.messages_per_superstep == (0,)
    assert wcc_components(tiny_graph("empty")).size == 0


# --- comparison helpers ------------------------------------------------------------------------

def test_compare_helpers_name_the_first_difference():
    from gravfm.algorithms.checks import compare_close, compare_counts, compare_exact

    assert compare_exact("label", [0, 0, 2], np.array([0, 0, 2])) == (True, "")
    ok, detail = compare_exact("label", [0, 1, 3], [0, 0, 2])
    assert not ok and detail == "label: 2 of 3 vertices differ; first is vertex 1: got 1, expected 0"
    assert not compare_exact("label", [0, 1], [0, 1, 2])[0]

    assert compare_close("rank", [1.0, 2.0000001, np.inf], [1.0, 2.0, np.inf])[0]
    ok, detail = compare_close("rank", [1.0, 2.1], [1.0, 2.0], rtol=1e-3)
    assert not ok and "first is vertex 1: got 2.1, expected 2.0" in detail
    assert not compare_close("distance", [np.inf], [3.0])[0]

    assert compare_counts("messages", (5, 2, 0), [5, 2, 0]) == (True, "")
    assert compare_counts("messages", [5, 3, 0], [5, 2, 0]) == (
        False, "messages in superstep 1: got 3, expected 2")
    ok, detail = compare_counts("updates", [5, 2], [5, 2, 0])
    assert not ok and "got 2 supersteps, expected 3" in detail


# --- real datasets -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["facebook_combined.txt", "Wiki-Vote.txt.gz", "GRCite.graph"])
def test_references_on_datasets(name):
    from gravfm.graph import load_graph

    graph = load_graph(datasets.path(name))
    symmetric = graph.symmetrize()
    components = wcc(symmetric)
    np.testing.assert_array_equal(components.labels, wcc_components(graph))
    assert components.messages_per_superstep[0] == symmetric.num_edges
    root = int(np.argmax(graph.out_degree()))
    tree = bfs(graph, root)
    assert check_bfs_parent(graph, root, tree.parent) == (True, "")
    np.testing.assert_array_equal(tree.level, bfs_levels(graph, root))
    reachable = tree.level >= 0
    assert tree.total_messages == graph.out_degree()[reachable].sum()
    np.testing.assert_array_equal(sssp(graph, root).distance, tree.level)
    ranks = pagerank(graph, dtype=np.float32)
    assert ranks.total_messages == 29 * graph.num_edges
    assert 0 < ranks.rank.sum() <= 1.0 + 1e-4
