"""Partition container, partitioners and the partition report."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gravfm.errors import ConfigError, SpecError
from gravfm.graph import Graph
from gravfm.graph.tiny import tiny_graph
from gravfm.partition import (
    METHODS,
    Partition,
    greedy,
    greedy_bins,
    metis,
    partition,
    partition_report,
    round_robin,
    sorted_greedy,
)


def grid_graph(side):
    """Undirected side x side grid: METIS cuts it far better than a location-agnostic rule."""
    v = np.arange(side * side).reshape(side, side)
    pairs = np.concatenate([np.stack([v[:, :-1].ravel(), v[:, 1:].ravel()], 1),
                            np.stack([v[:-1, :].ravel(), v[1:, :].ravel()], 1)])
    return Graph.from_edges(np.concatenate([pairs[:, 0], pairs[:, 1]]),
                            np.concatenate([pairs[:, 1], pairs[:, 0]]), side * side)


def naive_greedy(weights, num_bins):
    loads, counts, result = [0] * num_bins, [0] * num_bins, []
    for w in weights:
        b = min(range(num_bins), key=lambda i: (loads[i], counts[i], i))
        loads[b] += w
        counts[b] += 1
        result.append(b)
    return result


# --- Partition ---------------------------------------------------------------------------------

def test_partition_ids():
    part = Partition(np.array([1, 0, 1, 3, 0, 1, 2]), fpgas=2, pes_per_fpga=2)
    assert part.num_pes == 4
    np.testing.assert_array_equal(part.vertices_per_pe, [2, 3, 1, 1])
    np.testing.assert_array_equal(part.fpga_of_vertex, [0, 0, 0, 1, 0, 0, 1])
    np.testing.assert_array_equal(part.local_index, [0, 0, 1, 0, 1, 2, 0])
    np.testing.assert_array_equal(part.vertices_of_pe(1), [0, 2, 5])
    assert part.min_local_bits == 2
    assert part.pe_bits == 2
    hw = part.hw_ids(local_bits=2)
    np.testing.assert_array_equal(hw, [4, 0, 5, 12, 1, 6, 8])
    np.testing.assert_array_equal(part.vertex_of_hw_id(hw, 2), np.arange(7))
    np.testing.assert_array_equal(part.vertex_of_hw_id([3, 7, 13, 16, -1], 2), [-1, -1, -1, -1, -1])
    assert not part.pe_of_vertex.flags.writeable


def test_partition_rejects_bad_input():
    with pytest.raises(ConfigError, match="vertex 2 is on PE 4"):
        Partition(np.array([0, 1, 4]), 2, 2)
    with pytest.raises(ConfigError, match="fpgas must be a positive integer"):
        Partition(np.array([0]), 0, 2)
    with pytest.raises(ConfigError, match="1-D integer"):
        Partition(np.array([0.5]), 1, 2)
    part = Partition(np.array([0, 0, 0, 1]), 1, 2)
    with pytest.raises(ConfigError, match="PE 0 holds 3 vertices.*local_bits >= 2"):
        part.hw_ids(local_bits=1)
    with pytest.raises(ConfigError, match="PE 5 does not exist"):
        part.vertices_of_pe(5)


# --- partitioners ------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=60), st.integers(1, 7))
def test_greedy_bins_is_the_sequential_rule(weights, num_bins):
    bins = greedy_bins(weights, num_bins)
    assert bins.tolist() == naive_greedy(weights, num_bins)
    if weights:
        loads = np.bincount(bins, weights=weights, minlength=num_bins)
        # List scheduling guarantee: the lightest and heaviest bins differ by at most one item.
        assert loads.max() - loads.min() <= max(weights)


def test_greedy_balances_out_edges_of_a_skewed_graph():
    rng = np.random.default_rng(7)
    n = 3000
    degree = np.minimum(rng.zipf(1.8, n), 300)  # heavy-tailed, no vertex above 1/8 of the edges
    src = np.repeat(np.arange(n), degree)
    graph = Graph.from_edges(src, rng.integers(0, n, src.size), n)
    part = greedy(graph, 2, 4)
    report = partition_report(graph, part)
    loads = report.out_edges_per_pe
    assert loads.max() - loads.min() <= graph.out_degree().max()  # the greedy guarantee
    assert report.out_edge_imbalance < 1.1
    rr = partition_report(graph, round_robin(graph, 2, 4))
    assert rr.vertex_imbalance <= 1.01
    assert report.out_edge_imbalance < rr.out_edge_imbalance
    np.testing.assert_array_equal(part.pe_of_vertex, naive_greedy(graph.out_degree(), 8))


def test_sorted_greedy_fills_the_largest_vertices_first():
    rng = np.random.default_rng(7)
    n = 3000
    degree = np.minimum(rng.zipf(1.8, n), 300)
    src = np.repeat(np.arange(n), degree)
    graph = Graph.from_edges(src, rng.integers(0, n, src.size), n)
    part = sorted_greedy(graph, 2, 4)
    assert part.method == "sorted_greedy"
    # The greedy rule over the vertices by decreasing degree (ties in id order).
    order = sorted(range(n), key=lambda v: (-int(degree[v]), v))
    expected = np.empty(n, dtype=np.int64)
    expected[order] = naive_greedy([int(degree[v]) for v in order], 8)
    np.testing.assert_array_equal(part.pe_of_vertex, expected)
    # Largest first ends with the smallest items: the loads end closer than in id order.
    loads = partition_report(graph, part).out_edges_per_pe
    assert loads.max() - loads.min() <= 1
    assert partition_report(graph, part).out_edge_imbalance <= partition_report(graph, greedy(graph, 2, 4)).out_edge_imbalance
    # Every PE gets a like mix of degrees: each PE holds about an eighth of the 100 largest vertices.
    hubs = np.bincount(part.pe_of_vertex[order[:100]], minlength=8)
    assert hubs.max() - hubs.min() <= 2


def test_round_robin():
    part = round_robin(tiny_graph("binary_tree"), 2, 3)
    np.testing.assert_array_equal(part.pe_of_vertex, np.arange(15) % 6)
    np.testing.assert_array_equal(part.vertices_per_pe, [3, 3, 3, 2, 2, 2])
    assert part.method == "round_robin"


def test_metis_cuts_fewer_edges_and_stays_balanced():
    graph = grid_graph(30)
    part = metis(graph, 4, 3, seed=1)
    report = partition_report(graph, part)
    greedy_report = partition_report(graph, greedy(graph, 4, 3))
    assert report.crossing_fraction < greedy_report.crossing_fraction / 5
    per_fpga = np.bincount(part.fpga_of_vertex, weights=graph.out_degree(), minlength=4)
    assert per_fpga.max() / per_fpga.mean() < 1.05
    # Inside every FPGA the PEs are filled by the greedy rule, in increasing vertex id.
    for f in range(4):
        members = np.flatnonzero(part.fpga_of_vertex == f)
        expected = f * 3 + np.array(naive_greedy(graph.out_degree()[members], 3))
        np.testing.assert_array_equal(part.pe_of_vertex[members], expected)


def test_metis_single_fpga_and_edgeless_graph():
    graph = grid_graph(4)
    part = metis(graph, 1, 4)
    np.testing.assert_array_equal(part.pe_of_vertex, greedy(graph, 1, 4).pe_of_vertex)
    edgeless = Graph.from_edges([], [], 8)
    part = metis(edgeless, 2, 2)
    assert part.vertices_per_pe.sum() == 8


def test_partition_dispatch_and_errors():
    graph = tiny_graph("grid")
    assert partition(graph, 2, 2).method == "greedy"
    assert partition(graph, 2, 2, method="metis", ufactor=30).method == "metis"
    for method in METHODS:  # one spelling: the function's name, also in the result
        assert partition(graph, 2, 2, method=method).method == method
    for old in ("roundrobin", "sortedgreedy", "lpt"):
        with pytest.raises(SpecError, match=f"unknown method '{old}'"):
            partition(graph, 2, 2, method=old)
    with pytest.raises(SpecError, match="unknown method 'spectral'"):
        partition(graph, 2, 2, method="spectral")
    with pytest.raises(SpecError, match="takes no option 'ufactor'"):
        partition(graph, 2, 2, method="greedy", ufactor=5)
    with pytest.raises(ConfigError, match="17 PEs is more than the graph's 16 vertices"):
        partition(graph, 1, 17)
    with pytest.raises(ConfigError, match="pes_per_fpga"):
        partition(graph, 1, 0)
    with pytest.raises(ConfigError, match="ufactor"):
        partition(graph, 2, 1, method="metis", ufactor=0)


# --- report ------------------------------------------------------------------------------------

def test_report_by_hand():
    # out_star: 0 -> 1..6. Vertices 0, 2, 4, 6 on FPGA 0 (PEs 0, 1); 1, 3, 5 on FPGA 1.
    graph = tiny_graph("out_star")
    part = Partition(np.array([0, 2, 1, 3, 0, 2, 1]), fpgas=2, pes_per_fpga=2)
    report = partition_report(graph, part)
    np.testing.assert_array_equal(report.vertices_per_pe, [2, 2, 2, 1])
    np.testing.assert_array_equal(report.out_edges_per_pe, [6, 0, 0, 0])
    np.testing.assert_array_equal(report.in_edges_per_pe, [1, 2, 2, 1])
    assert report.out_edge_imbalance == 4.0
    assert report.in_edge_imbalance == 4 / 3
    assert report.crossing_edges == 3
    assert report.crossing_fraction == 0.5
    assert report.remote_update_copies == 1  # vertex 0 sends one copy to FPGA 1
    figures = report.to_dict()
    assert figures["crossing_fraction"] == 0.5
    assert figures["vertices_per_pe"] == [2, 2, 2, 1]
