"""SSSP with integer edge weights in the edge memory, checked exactly against the reference."""

import numpy as np
import pytest

from gravfm.algorithms.sssp import SSSP, UNREACHED, WEIGHT_BITS, attach_weights
from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import SystemConfig
from gravfm.partition import partition
from gravfm.hw.protocol import HostMem
from gravfm.sim.loader import build_load
from conftest import check_run, run_flow


def check_sssp_run(report):
    """The answer is exact and every superstep's counts match the reference; returns
    ``(report, state)``."""
    check_run(report)
    return report, report.readback.state


@pytest.mark.parametrize("name, pes", [("weighted", 1), ("weighted", 2), ("dag", 3), ("path", 2)])
def test_weights_from_the_graph(name, pes):
    graph = tiny_graph(name)
    report, _ = check_sssp_run(run_flow(SSSP, graph, pes=pes))
    if graph.weights is not None:
        # The prepared graph keeps the file's weights (no generated ones).
        assert np.array_equal(report.prepared.graph.weights, graph.weights)


def test_weighted_tiny_graph_takes_the_cheaper_route():
    report, state = check_sssp_run(run_flow(SSSP, tiny_graph("weighted"), pes=1))
    # 0 -> 2 -> 3 -> 4 costs 1 + 2 + 3 = 6, cheaper than 0 -> 1 -> 4 (5 + 6), though longer.
    assert state["distance"][4] == 6
    # Vertex 4 is reached twice (11 after round 1, 6 after round 2), so it and 5 emit twice.
    assert report.readback.updates_per_superstep == (1, 2, 2, 2, 1, 0)


@pytest.mark.parametrize("pes", [1, 3])
def test_generated_weights_on_a_grid(pes):
    report, state = check_sssp_run(run_flow(SSSP, tiny_graph("grid"), pes=pes,
                                            params={"root": 5, "weight_seed": 7, "max_weight": 9}))
    assert state["distance"][5] == 0
    weights = report.prepared.graph.weights
    assert weights.min() >= 1 and weights.max() <= 9


def test_unreachable_vertices_read_back_as_minus_one_in_the_check():
    report, state = check_sssp_run(run_flow(SSSP, tiny_graph("isolated"), pes=2, params={"root": 1}))
    assert (report.prepared.reference.distance == -1).tolist() == [True, False, True, False, True, True]
    assert state["distance"][0] == UNREACHED


def test_random_weighted_graph_several_pes():
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 20, 70), rng.integers(0, 20, 70)
    graph = Graph.from_edges(src, dst, num_vertices=20, weights=rng.integers(0, 50, 70))
    check_sssp_run(run_flow(SSSP, graph, pes=4, params={"root": 3}))


def test_heavy_weights_saturate_instead_of_wrapping():
    """distance(1) + weight(1, 2) exceeds 32 bits: wrapped, it would beat the true 100."""
    far = UNREACHED - 10
    graph = Graph.from_edges([0, 1, 0, 2], [1, 2, 2, 3], num_vertices=4, weights=[far, 20, 100, 7])
    _, state = check_sssp_run(run_flow(SSSP, graph, pes=2))
    assert state["distance"].tolist() == [0, far, 100, 107]
    assert state["parent"].tolist() == [0, 0, 0, 2]


def test_a_wrong_answer_is_rejected():
    graph = SSSP.prepare(tiny_graph("weighted"), SSSP.params())
    reference = SSSP.reference(graph, SSSP.params())
    distance = np.where(reference.distance < 0, UNREACHED, reference.distance)
    distance[4] += 1
    ok, detail = SSSP.check(graph, SSSP.params(), {"distance": distance}, reference)
    assert not ok and "vertex 4" in detail


def test_a_wrong_parent_is_rejected():
    params = SSSP.params()
    graph = SSSP.prepare(tiny_graph("weighted"), params)
    reference = SSSP.reference(graph, params)
    distance = np.where(reference.distance < 0, UNREACHED, reference.distance)
    parent = np.array([0, 0, 0, 2, 3, 4])  # the tree of the cheaper route 0 -> 2 -> 3 -> 4
    ok, detail = SSSP.check(graph, params, {"distance": distance, "parent": parent}, reference)
    assert ok, detail
    parent[4] = 1  # the edge 1 -> 4 exists but is not tight
    ok, detail = SSSP.check(graph, params, {"distance": distance, "parent": parent}, reference)
    assert not ok and "vertex 4 (distance 6): parent 1 is not the source of a tight edge" in detail


def test_weights_are_written_beside_each_destination():
    graph = SSSP.prepare(tiny_graph("weighted"), SSSP.params())
    parts = partition(graph, 1, 1, method="round_robin")
    config = SystemConfig.of(algorithm=SSSP, local_bits=3, edges_per_pe=8)
    plan = build_load(SSSP, graph, parts, config)
    edge_words = plan.data[plan.mem == HostMem.EDGES].astype(np.int64)
    # Edge word = {dst: local_bits, weight: WEIGHT_BITS}, LSB first; CSR order on one PE.
    assert sorted((edge_words >> config.pe.local_bits).tolist()) == sorted(graph.weights.tolist())


def test_generated_weights_depend_on_the_seed_only():
    graph = tiny_graph("grid")
    a, b = attach_weights(graph, seed=3), attach_weights(graph, seed=3)
    c = attach_weights(graph, seed=4)
    assert np.array_equal(a.weights, b.weights)
    assert not np.array_equal(a.weights, c.weights)


@pytest.mark.parametrize("weights, message", [
    ([1.5, 1.0], r"edge 0 has weight 1.5; the hardware stores integer weights"),
    ([1, -2], r"edge 1 has weight -2"),
    ([1, 1 << WEIGHT_BITS], r"edge 1 has weight 4294967296; the edge memory holds integers 0 .. 4294967295"),
])
def test_bad_weights_are_rejected(weights, message):
    graph = Graph.from_edges([0, 1], [1, 2], num_vertices=3, weights=np.array(weights))
    with pytest.raises(ConfigError, match=message):
        SSSP.prepare(graph, SSSP.params())


def test_bad_root_and_parameters():
    with pytest.raises(ConfigError, match="root 9 is out of range"):
        SSSP.prepare(tiny_graph("weighted"), SSSP.params({"root": 9}))
    with pytest.raises(ConfigError, match="max_weight must be an integer"):
        SSSP.prepare(tiny_graph("grid"), SSSP.params({"max_weight": 0}))
    with pytest.raises(ConfigError, match="has no parameter 'seed'"):
        SSSP.params({"seed": 1})


def test_distances_too_long_for_the_state_are_rejected():
    half = 1 << (WEIGHT_BITS - 1)
    graph = Graph.from_edges([0, 1], [1, 2], num_vertices=3, weights=[half, half])
    with pytest.raises(ConfigError, match="does not fit below"):
        SSSP.reference(SSSP.prepare(graph, SSSP.params()), SSSP.params())


@pytest.mark.slow
def test_weighted_rmat_graph_in_the_compiled_simulator(build_cache):
    """Generated weights on a 128-vertex RMAT graph, 2 PEs, through Verilator: exact distances."""
    report, _ = check_sssp_run(run_flow(SSSP, "rmat:scale=7,ef=8,seed=2", pes=2, backend="verilator",
                                        cache_dir=build_cache,
                                        params={"root": 1, "weight_seed": 5, "max_weight": 1000}))
    assert report.status == "done"
    reference = report.prepared.reference
    assert (reference.distance == -1).any() and (reference.distance > 0).any()
    assert report.messages == reference.total_messages


def test_sparse_apply_visits_only_reached_vertices():
    """SSSP declares sparse_apply: after round 0, apply visits only vertices gathered into."""
    import dataclasses

    graph = tiny_graph("binary_tree")
    sparse, sparse_state = check_sssp_run(run_flow(SSSP, graph, pes=1))
    dense, dense_state = check_sssp_run(run_flow(dataclasses.replace(SSSP, sparse_apply=False), graph, pes=1))
    assert np.array_equal(sparse_state["distance"], dense_state["distance"])
    # A full pass costs vertices_per_pe (16) cycles per round; a sparse one, the touched vertices.
    saved = dense.cycles - sparse.cycles
    assert saved >= (sparse.supersteps - 1) * 4, (dense.cycles, sparse.cycles)
