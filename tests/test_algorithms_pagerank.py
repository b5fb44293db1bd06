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
from gravfm.graph.tiny import tiny_graph
from gravfm.hw.fp import FPAdder, FPDivider, FPMultiplier
from conftest import check_pagerank_run, random_graph, run_flow

SHORT = make_pagerank(supersteps=6)


@pytest.mark.parametrize("name", ["star", "cycle", "dag", "duplicates", "self_loop", "single_vertex"])
def test_tiny_graphs_one_pe(name):
    report, rank = check_pagerank_run(run_flow(SHORT, tiny_graph(name), pes=1))
    assert (rank == report.prepared.reference.rank).all()


@pytest.mark.parametrize("pes", [2, 3, 4])
def test_random_graph_several_pes(pes):
    check_pagerank_run(run_flow(SHORT, random_graph(14, 40, 5), pes=pes))


def test_thirty_supersteps_one_pe_is_bit_identical():
    """The paper's configuration. On one PE messages arrive in sender order, the reference's
    summation order, and every unit rounds like numpy float32: the ranks are bit-identical."""
    report, rank = check_pagerank_run(run_flow(PAGERANK, random_graph(12, 40, 2), pes=1))
    assert report.supersteps == 30
    assert (rank == report.prepared.reference.rank).all()


def test_dangling_vertices_emit_without_messages():
    """Leaves without out-edges send an update (counted) that reaches nobody."""
    graph = tiny_graph("out_star")
    report, _ = check_pagerank_run(run_flow(SHORT, graph, pes=2))
    assert report.readback.updates_per_superstep[0] == graph.num_vertices
    assert report.readback.messages_per_superstep[0] == graph.num_edges


def test_one_superstep_keeps_the_initial_rank():
    graph = tiny_graph("cycle")
    report, rank = check_pagerank_run(run_flow(make_pagerank(supersteps=1), graph, pes=1))
    assert report.supersteps == 1
    assert (rank == np.float32(1 / graph.num_vertices)).all()


@pytest.mark.parametrize("damping", [0.5, 1.0])
def test_other_damping_factors(damping):
    algorithm = make_pagerank(supersteps=4, damping=damping)
    report, _ = check_pagerank_run(run_flow(algorithm, tiny_graph("dag"), pes=2))
    assert report.prepared.reference.damping == damping


def test_full_hazard_window_sustains_one_message_per_cycle():
    """With hazard_slots >= adder latency + 1, a round costs about its edges plus its apply pass.

    On the complete graph every sender's list has distinct destinations, so only the pipeline
    latencies (apply's chain and its queue's head, the rest as for WCC: SUPERSTEP_OVERHEAD = 24
    in test_hw_system, up from 16 since the memory-output and skid registers of the timing work)
    add to edges + vertices per round: 30 cycles a round beside apply's latency. A vertex's
    messages come four apart here, closer than the combining adder's latency: measured 1 stall
    per vertex and round with a 4-cycle adder, 1.5 with today's 5-cycle one; the bound is 2.
    """
    apply_latency = FPMultiplier.latency + FPAdder.latency + FPDivider.latency + 1
    graph = tiny_graph("complete")
    report, _ = check_pagerank_run(run_flow(SHORT, graph, pes=1, hazard_slots=6))
    rounds = report.supersteps
    ideal = graph.num_edges * (rounds - 1) + rounds * report.plan.config.pe.vertices_per_pe
    assert report.stalls["stall_hazard"] <= 2 * rounds * graph.num_vertices
    assert report.cycles <= ideal + rounds * (30 + apply_latency), (report.cycles, ideal)


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
def test_rmat_graph_in_the_compiled_simulator(build_cache):
    """A 64-vertex RMAT graph on 3 PEs through Verilator: ranks within tolerance, counts exact."""
    report, _ = check_pagerank_run(run_flow(make_pagerank(supersteps=10), "rmat:scale=6,ef=8,seed=3", pes=3,
                                            backend="verilator", cache_dir=build_cache))
    reference = report.prepared.reference
    assert report.status == "done"
    assert report.supersteps == reference.supersteps
    assert report.messages == reference.total_messages
    assert [row.messages for row in report.rounds] == list(reference.messages_per_superstep)
