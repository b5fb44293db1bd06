"""The superstep engine: the built-in references are its specialisations, counts included."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravfm.algorithms.engine import run_supersteps, state_check
from gravfm.algorithms.reference import bfs, pagerank, sssp, wcc
from gravfm.algorithms.sssp import UNREACHED
from gravfm.errors import ConfigError
from gravfm.graph import Graph, load_graph
from gravfm.graph.tiny import TINY_GRAPHS, tiny_graph

NONEMPTY_TINY = [name for name in TINY_GRAPHS if tiny_graph(name).num_vertices > 0]


@st.composite
def graphs(draw, max_vertices=14, max_edges=45, weighted=False):
    """Small directed multigraphs (self-loops and duplicates allowed), optionally weighted."""
    n = draw(st.integers(1, max_vertices))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=max_edges))
    weights = None
    if weighted:
        weights = np.array(draw(st.lists(st.integers(0, 20), min_size=len(edges), max_size=len(edges))),
                           dtype=np.int64)
    return Graph.from_edges(np.array([u for u, _ in edges], dtype=np.int64),
                            np.array([v for _, v in edges], dtype=np.int64), num_vertices=n, weights=weights)


# --- the built-ins written for the engine (as a user would) ---------------------------------------

def emit_if_active(field_names):
    """EmitIfActiveApply: an active vertex sends the named fields once and goes quiet."""
    def apply(i):
        return {"active": 0}, i.state.active == 1, {name: i.state[name] for name in field_names}
    return apply


def keep_min(field):
    """ExtremumGather(keep="min"): a smaller value replaces the state's and activates the vertex."""
    def gather(i):
        kept = i.reduce(i.message[field], "min", start=i.state[field])
        return {field: kept, "active": i.state.active | (kept < i.state[field])}
    return gather


def wcc_engine(graph, *, sparse=True):
    n = graph.num_vertices
    return run_supersteps(graph, initial={"label": np.arange(n), "active": np.ones(n, dtype=np.int64)},
                          gather=keep_min("label"), apply=emit_if_active(["label"]), sparse=sparse)


def bfs_engine(graph, root):
    n = graph.num_vertices
    parent, visited = np.full(n, -1), np.zeros(n, dtype=np.int64)
    parent[root], visited[root] = root, 1

    def gather(i):  # the first message makes its sender the parent (here: the lowest sender)
        fresh = i.received & (i.state.visited == 0)
        return {"parent": np.where(fresh, i.reduce(i.sender, "min"), i.state.parent),
                "visited": i.state.visited | fresh, "active": i.state.active | fresh}

    return run_supersteps(graph, initial={"parent": parent, "visited": visited, "active": visited.copy()},
                          gather=gather, apply=emit_if_active([]), sparse=True,
                          initially_active=visited == 1)


def sssp_engine(graph, root):
    n = graph.num_vertices
    distance, active = np.full(n, UNREACHED), np.zeros(n, dtype=np.int64)
    distance[root], active[root] = 0, 1

    def scatter(i):  # the SSSP kernel's saturating sum
        return {"distance": np.minimum(i.update.distance + i.edge.weight, UNREACHED)}

    return run_supersteps(graph, initial={"distance": distance, "active": active}, edge={"weight": graph.weights},
                          gather=keep_min("distance"), apply=emit_if_active(["distance"]), scatter=scatter,
                          sparse=True)


def pagerank_engine(graph, supersteps, damping=0.85):
    n = graph.num_vertices
    divisor = np.maximum(graph.out_degree(), 1).astype(np.float32)
    base, d = np.float32((1 - damping) / n), np.float32(damping)

    def apply(i):
        rank = i.state.rank if i.round == 0 else base + d * i.state.sum
        return ({"rank": rank, "sum": np.float32(0)}, i.round < supersteps - 1,
                {"contribution": rank / divisor[i.nodeid]})

    def gather(i):
        return {"sum": i.reduce(i.message.contribution, "sum", start=i.state.sum)}

    initial = {"rank": np.full(n, 1 / n, dtype=np.float32), "sum": np.zeros(n, dtype=np.float32)}
    return run_supersteps(graph, initial=initial, gather=gather, apply=apply)


def same_counts(result, expected):
    assert result.supersteps == expected.supersteps
    assert result.messages_per_superstep == expected.messages_per_superstep
    assert result.updates_per_superstep == expected.updates_per_superstep
    if expected.senders_per_superstep is not None:  # the same vertices send, round by round
        assert [s.tolist() for s in result.senders_per_superstep] == \
            [sorted(s.tolist()) for s in expected.senders_per_superstep]


# --- the engine reproduces every built-in reference ---------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(graphs())
def test_engine_reproduces_wcc(graph):
    symmetric = graph.symmetrize()
    expected = wcc(symmetric)
    for sparse in (True, False):  # apply on every vertex or on the touched ones: the same run
        result = wcc_engine(symmetric, sparse=sparse)
        np.testing.assert_array_equal(result.state.label, expected.labels)
        same_counts(result, expected)
    same_counts(wcc_engine(graph), wcc(graph))  # directed graphs too


@settings(max_examples=60, deadline=None)
@given(graphs(), st.data())
def test_engine_reproduces_bfs(graph, data):
    root = data.draw(st.integers(0, graph.num_vertices - 1))
    result, expected = bfs_engine(graph, root), bfs(graph, root)
    np.testing.assert_array_equal(result.state.parent, expected.parent)
    same_counts(result, expected)


@settings(max_examples=60, deadline=None)
@given(graphs(weighted=True), st.data())
def test_engine_reproduces_sssp(graph, data):
    root = data.draw(st.integers(0, graph.num_vertices - 1))
    result, expected = sssp_engine(graph, root), sssp(graph, root)
    distance = np.where(result.state.distance == UNREACHED, -1, result.state.distance)
    np.testing.assert_array_equal(distance, expected.distance)
    same_counts(result, expected)


@settings(max_examples=30, deadline=None)
@given(graphs(), st.integers(1, 8))
def test_engine_reproduces_pagerank(graph, supersteps):
    result, expected = pagerank_engine(graph, supersteps), pagerank(graph, supersteps, dtype=np.float32)
    assert result.state.rank.dtype == np.float32
    np.testing.assert_allclose(result.state.rank, expected.rank, rtol=1e-6)
    same_counts(result, expected)


@pytest.mark.parametrize("name", NONEMPTY_TINY)
def test_engine_reproduces_the_references_on_tiny_graphs(name):
    graph = tiny_graph(name)
    same_counts(wcc_engine(graph.symmetrize()), wcc(graph.symmetrize()))
    root = graph.num_vertices - 1
    result, expected = bfs_engine(graph, root), bfs(graph, root)
    np.testing.assert_array_equal(result.state.parent, expected.parent)
    same_counts(result, expected)
    weighted = Graph(graph.offsets, graph.targets, (np.arange(graph.num_edges) % 5 + 1).astype(np.int64))
    same_counts(sssp_engine(weighted, 0), sssp(weighted, 0))


def test_engine_on_a_dataset_matches_and_is_quick():
    import time

    graph = load_graph("facebook_combined.txt")  # 4,039 vertices, 88,234 edges; symmetric: 176,468
    symmetric = graph.symmetrize()
    started = time.perf_counter()
    result = wcc_engine(symmetric)
    tree = bfs_engine(graph, 0)
    ranks = pagerank_engine(graph, 30)
    elapsed = time.perf_counter() - started
    np.testing.assert_array_equal(result.state.label, wcc(symmetric).labels)
    same_counts(result, wcc(symmetric))
    same_counts(tree, bfs(graph, 0))
    np.testing.assert_allclose(ranks.state.rank, pagerank(graph, 30, dtype=np.float32).rank, rtol=1e-5)
    assert ranks.total_messages == 29 * graph.num_edges
    assert elapsed < 10, f"{elapsed:.1f} s"


# --- the engine's own rules ---------------------------------------------------------------------------

def test_counts_by_hand_and_the_final_state():
    # Path 0 -> 1 -> 2 -> 3 with 1 -> 2 three times (duplicates count): label 0 travels one hop
    # per round; round r's senders are the vertices lowered in round r - 1.
    result = wcc_engine(tiny_graph("duplicates"))
    assert result.updates_per_superstep == (4, 3, 2, 1, 0)  # {0,1,2,3}, {1,2,3}, {2,3}, {3}
    assert result.messages_per_superstep == (5, 4, 1, 0, 0)  # out-degrees 1, 3, 1, 0
    assert result.total_messages == 10 and result.supersteps == 5
    np.testing.assert_array_equal(result.state.label, [0, 0, 0, 0])
    assert result.state["label"] is result.state.label
    with pytest.raises(ValueError):
        result.state.label[0] = 7  # the answer is read-only


def test_reduce_combines_per_destination():
    seen = {}

    def gather(i):
        seen["min"] = i.reduce(i.message.x, "min")
        seen["max_from_state"] = i.reduce(i.message.x, "max", start=i.state.x)
        seen["sum"] = i.reduce(1, "sum")  # a scalar counts messages
        seen["or"] = i.reduce(i.message.x, np.bitwise_or, start=0)
        seen["received"] = i.received
        return {}

    graph = Graph.from_edges(np.array([0, 1, 2, 2]), np.array([1, 1, 1, 0]), num_vertices=4)
    run_supersteps(graph, initial={"x": np.array([5, 2, 9, 4])}, gather=gather,
                   apply=lambda i: ({}, i.round == 0, {"x": i.state.x}))
    big = np.iinfo(np.int64).max
    np.testing.assert_array_equal(seen["min"], [9, 2, big, big])  # no message: the identity
    np.testing.assert_array_equal(seen["max_from_state"], [9, 9, 9, 4])
    np.testing.assert_array_equal(seen["sum"], [1, 3, 0, 0])
    np.testing.assert_array_equal(seen["or"], [9, 5 | 2 | 9, 0, 0])
    np.testing.assert_array_equal(seen["received"], [True, True, False, False])


def test_scatter_sees_the_edge_and_gather_the_round():
    rounds = []

    def scatter(i):
        assert i.update.hops.shape == i.edge.w.shape == i.neighbor.shape
        return {"hops": i.update.hops + i.edge.w}

    def gather(i):
        rounds.append(i.round)
        hops = i.reduce(i.message.hops, "min", start=i.state.hops)
        return {"hops": hops, "active": hops < i.state.hops}

    result = run_supersteps(tiny_graph("path"), initial={"hops": [0, 99, 99, 99, 99, 99], "active": [1, 0, 0, 0, 0, 0]},
                            edge={"w": np.array([1, 2, 3, 4, 5])}, gather=gather, scatter=scatter,
                            apply=emit_if_active(["hops"]), sparse=True)
    np.testing.assert_array_equal(result.state.hops, [0, 1, 3, 6, 10, 15])
    assert rounds == [0, 1, 2, 3, 4] and result.updates_per_superstep == (1, 1, 1, 1, 1, 1, 0)


@pytest.mark.parametrize("apply, gather, message", [
    (lambda i: ({"lable": 0}, True, {}), None, "apply (<lambda>) state names 'lable', which is not a field"),
    (lambda i: ({}, True), None, "must return (state, emit, update)"),
    (lambda i: ({}, np.ones(3, dtype=bool), {}), None, "emit must be booleans, one per vertex"),
    (lambda i: ({}, i.round == 0, {"x": i.state.label}), lambda i: {"label": 0.5},
     "field 'label' is float64, which does not fit the state's int64"),
    (lambda i: ({}, i.round == 0, {"x": np.zeros(2)}), None, "update field 'x' has shape (2,), expected (6,)"),
    (lambda i: ({}, True, {}), None, "does not end within max_supersteps=50"),
])
def test_malformed_functions_get_one_line(apply, gather, message):
    with pytest.raises(ConfigError) as error:
        run_supersteps(tiny_graph("undirected_path"), initial={"label": np.arange(6)}, apply=apply,
                       gather=gather or (lambda i: {}), max_supersteps=50)
    assert message in str(error.value) and "\n" not in str(error.value)
    if "max_supersteps" not in message:  # at the user's line, as errors in user code are
        assert str(error.value).startswith(f"{__file__}:")


def test_a_misspelt_field_names_the_fields():
    def gather(i):
        return {"label": i.message.lable}

    with pytest.raises(AttributeError, match=r"no field 'lable' \(fields: label\)"):
        run_supersteps(tiny_graph("undirected_path"), initial={"label": np.arange(6)}, gather=gather,
                       apply=lambda i: ({}, i.round == 0, {"label": i.state.label}))


def test_state_check_names_the_first_difference():
    graph = tiny_graph("two_components")
    result = wcc_engine(graph)
    check = state_check("label")
    assert check(graph, {}, {"label": result.state.label.copy()}, result) == (True, "")
    wrong = result.state.label.copy()
    wrong[5] = 5
    assert check(graph, {}, {"label": wrong}, result) == (
        False, "label: 1 of 7 vertices differ; first is vertex 5: got 5, expected 3")
    close = state_check("label", rtol=1.0)  # |5 - 3| <= 1.0 * 3
    assert close(graph, {}, {"label": wrong}, result)[0]
    with pytest.raises(ConfigError, match="name the vertex fields"):
        state_check()


def test_a_field_named_like_a_mapping_method_is_the_field():
    def apply(i):
        assert isinstance(i.state.values, np.ndarray) and list(i.state) == ["values", "items"]
        return {}, False, {}

    result = run_supersteps(tiny_graph("path"), initial={"values": np.arange(6), "items": np.zeros(6)},
                            gather=lambda i: {}, apply=apply)
    np.testing.assert_array_equal(result.state.values, np.arange(6))
    assert dict(result.state).keys() == {"values", "items"}
