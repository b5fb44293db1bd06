"""PageRank in binary32 hardware against the float32 software reference.

The hardware sums each vertex's messages in arrival order, the reference in sender order, so
ranks are compared within :data:`gravfm.algorithms.pagerank.RANK_RTOL`; everything else (the
number of supersteps, updates and messages of each) must match exactly.
"""

import numpy as np
import pytest

from gravfm.algorithms import PAGERANK, make_pagerank
from gravfm.algorithms.pagerank import RANK_RTOL, bits_float, float_bits
from gravfm.algorithms.reference import pagerank
from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.graph.tiny import tiny_graph
from gravfm.sim.amaranth_backend import run_amaranth

SHORT = make_pagerank(supersteps=6)


def check_pagerank_run(result):
    assert result.ok, result.detail
    reference = result.reference
    assert result.supersteps == reference.supersteps
    assert tuple(result.messages_per_superstep) == reference.messages_per_superstep
    assert tuple(result.updates_per_superstep) == reference.updates_per_superstep
    rank = bits_float(result.state["rank"])
    assert rank.dtype == np.float32
    assert np.allclose(rank, reference.rank, rtol=RANK_RTOL, atol=0)
    # The accumulator is left at +0 by the last apply.
    assert (result.state["sum"] == 0).all()
    return result


def random_graph(seed, n, m):
    rng = np.random.default_rng(seed)
    return Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n)


@pytest.mark.parametrize("name", ["star", "cycle", "dag", "duplicates", "self_loop", "single_vertex"])
def test_tiny_graphs_one_pe(name):
    result = check_pagerank_run(run_amaranth(SHORT, tiny_graph(name), pes=1))
    assert (bits_float(result.state["rank"]) == result.reference.rank).all()


@pytest.mark.parametrize("pes", [2, 3, 4])
def test_random_graph_several_pes(pes):
    check_pagerank_run(run_amaranth(SHORT, random_graph(5, 14, 40), pes=pes))


def test_thirty_supersteps_one_pe_is_bit_identical():
    """The paper's configuration. On one PE messages arrive in sender order, the reference's
    summation order, and every unit rounds like numpy float32: the ranks are bit-identical."""
    result = check_pagerank_run(run_amaranth(PAGERANK, random_graph(2, 12, 40), pes=1))
    assert result.supersteps == 30
    assert (bits_float(result.state["rank"]) == result.reference.rank).all()


def test_dangling_vertices_emit_without_messages():
    """Leaves without out-edges send an update (counted) that reaches nobody."""
    graph = tiny_graph("out_star")
    result = check_pagerank_run(run_amaranth(SHORT, graph, pes=2))
    assert result.updates_per_superstep[0] == graph.num_vertices
    assert result.messages_per_superstep[0] == graph.num_edges


def test_one_superstep_keeps_the_initial_rank():
    graph = tiny_graph("cycle")
    result = check_pagerank_run(run_amaranth(make_pagerank(supersteps=1), graph, pes=1))
    assert result.supersteps == 1
    assert (bits_float(result.state["rank"]) == np.float32(1 / graph.num_vertices)).all()


@pytest.mark.parametrize("damping", [0.5, 1.0])
def test_other_damping_factors(damping):
    algorithm = make_pagerank(supersteps=4, damping=damping)
    result = check_pagerank_run(run_amaranth(algorithm, tiny_graph("dag"), pes=2))
    assert result.reference.damping == damping


def test_full_hazard_window_sustains_one_message_per_cycle():
    """With hazard_slots >= adder latency + 1, a round costs about its edges plus its apply pass.

    On the complete graph every sender's list has distinct destinations, so only the pipeline
    latencies (apply ~25, the rest as for WCC: SUPERSTEP_OVERHEAD = 24 in test_hw_system, up
    from 16 since the memory-output and skid registers of the timing work) add to edges +
    vertices per round.
    """
    graph = tiny_graph("complete")
    result = check_pagerank_run(run_amaranth(SHORT, graph, pes=1, hazard_slots=6))
    rounds = result.supersteps
    ideal = graph.num_edges * (rounds - 1) + rounds * result.config.pe.vertices_per_pe
    assert result.sim.counters["stall_hazard"].sum() <= rounds * graph.num_vertices
    assert result.sim.cycles <= ideal + rounds * 58, (result.sim.cycles, ideal)


def test_initial_state_carries_the_constants():
    graph = tiny_graph("out_star")
    state = PAGERANK.initial_state_arrays(graph, {})
    n = graph.num_vertices
    assert (bits_float(state["rank"]) == np.float32(1.0 / n)).all()
    assert (bits_float(state["sum"]) == np.float32(0.15 / n)).all()
    degree = bits_float(state["degree"])
    assert degree[0] == 6 and (degree[1:] == 1).all()  # leaves divide by 1 as in the reference


def test_float_bits_round_trip():
    values = np.array([0.0, 1.0, 0.85, 1e-30, 3.0e38], dtype=np.float32)
    assert (bits_float(float_bits(values)) == values).all()
    assert float_bits(1.0) == 0x3F800000


def test_a_wrong_rank_is_rejected():
    graph = tiny_graph("cycle")
    reference = pagerank(graph, supersteps=30, dtype=np.float32)
    rank = reference.rank.copy()
    rank[3] *= np.float32(1 + 10 * RANK_RTOL)
    ok, detail = PAGERANK.check(graph, {}, {"rank": float_bits(rank)}, reference)
    assert not ok and "vertex 3" in detail
    ok, _ = PAGERANK.check(graph, {}, {"rank": float_bits(reference.rank)}, reference)
    assert ok


@pytest.mark.parametrize("kwargs, message", [
    ({"supersteps": 0}, "supersteps must be a positive integer, not 0"),
    ({"supersteps": 2.5}, "supersteps must be a positive integer"),
    ({"damping": 1.5}, "damping must be a number between 0 and 1, not 1.5"),
    ({"damping": "0.85"}, "damping must be a number"),
])
def test_bad_constants_are_rejected(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        make_pagerank(**kwargs)


def test_no_runtime_parameters():
    with pytest.raises(ConfigError, match="has no parameter 'supersteps'"):
        PAGERANK.params({"supersteps": 10})


@pytest.mark.slow
def test_rmat_graph_in_the_compiled_simulator(tmp_path):
    """A 64-vertex RMAT graph on 3 PEs through Verilator: ranks within tolerance, counts exact."""
    from gravfm.graph import load_graph
    from gravfm.hw import FpgaTop
    from gravfm.partition import partition
    from gravfm.run import plan_hardware, simulate_verilator
    from gravfm.sim.loader import build_load

    algorithm = make_pagerank(supersteps=10)
    graph = algorithm.prepare(load_graph("rmat:scale=6,ef=8,seed=3"), {})
    parts = partition(graph, 1, 3, method="greedy")
    reference = algorithm.reference(graph, {})
    config = plan_hardware(algorithm, graph, parts, reference.supersteps)
    system = FpgaTop(config)
    plan = build_load(algorithm, graph, parts, config, {}, data_bits=len(system.host_wr_data))
    outcome = simulate_verilator(system, plan, cache_dir=tmp_path)
    assert outcome.status == "done"
    ok, detail = algorithm.check(graph, {}, outcome.state, reference)
    assert ok, detail
    assert outcome.supersteps == reference.supersteps
    assert outcome.messages == reference.total_messages
    assert [row.messages for row in outcome.rounds] == list(reference.messages_per_superstep)
