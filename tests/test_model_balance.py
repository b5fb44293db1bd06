"""The busiest PE of every superstep (gravfm.model.balance): counted by hand on a star, and, as
the generated design's superstep-aware prediction, against a simulated hybrid run."""

import numpy as np
import pytest

from gravfm.algorithms import BFS
from gravfm.algorithms.reference import bfs
from gravfm.architectures import GRAVF, GRAVFM, HYBRID
from gravfm.graph.tiny import tiny_graph
from gravfm.model.balance import busiest_unit_items
from conftest import check_run, run_flow


def test_a_hub_is_one_scatter_units_work_but_every_gravfm_pes_intake():
    graph = tiny_graph("out_star")                  # vertex 0 -> every other vertex
    n = graph.num_vertices
    pe_of_vertex = np.arange(n) % 4
    reference = bfs(graph, 0)
    assert [s.tolist() for s in reference.senders_per_superstep] == [[0], list(range(1, n)), []]
    gathered = np.bincount(pe_of_vertex[1:], minlength=4).max()         # messages into the busiest PE
    counts = dict(updates_per_superstep=reference.updates_per_superstep,
                  senders_per_superstep=reference.senders_per_superstep)
    # Round 0: the hub's PE streams all its edges (hybrid, GraVF); GraVF-M's PEs scatter the
    # edges of their own destinations. Round 1: leaves without edges; GraVF-M's PEs still take
    # every update, one a cycle per lane.
    assert busiest_unit_items(HYBRID, graph, pe_of_vertex, 4, **counts) == [n - 1, 0, 0]
    assert busiest_unit_items(GRAVF, graph, pe_of_vertex, 4, **counts) == [n - 1, 0, 0]
    assert busiest_unit_items(GRAVFM, graph, pe_of_vertex, 4, **counts) == [gathered, n - 1, 0]
    two_lanes = busiest_unit_items(GRAVFM, graph, pe_of_vertex, 4, update_lanes=2, **counts)
    assert two_lanes == [gathered, -(-(n - 1) // 2), 0]


def test_the_references_name_every_rounds_senders():
    """WCC and SSSP (min-propagation) and BFS keep each round's senders, as many as its updates
    (the generic engine: tests/test_algorithms_engine.py); PageRank, where every vertex sends,
    keeps none."""
    from gravfm.algorithms import get_algorithm
    from gravfm.algorithms.reference import pagerank, wcc
    graph = tiny_graph("grid")
    for result in (wcc(graph), bfs(graph, 0)):
        assert [s.size for s in result.senders_per_superstep] == list(result.updates_per_superstep)
        assert all(s.dtype == np.uint32 for s in result.senders_per_superstep)
    assert wcc(graph).senders_per_superstep[0].tolist() == list(range(graph.num_vertices))
    assert pagerank(graph, supersteps=3).senders_per_superstep is None
    engine = get_algorithm("sssp").reference(graph, {"root": 0})
    assert [s.size for s in engine.senders_per_superstep] == list(engine.updates_per_superstep)


def test_every_vertex_emits_where_the_reference_names_no_senders():
    graph = tiny_graph("cycle")
    items = busiest_unit_items(HYBRID, graph, np.zeros(graph.num_vertices, dtype=int), 1, [graph.num_vertices, 0], None)
    assert items == [graph.num_edges, 0]


def test_the_design_model_follows_the_partition_of_a_hybrid_run(build_cache):
    """BFS on RMAT scale 10, 1 FPGA x 4 PEs: the prediction within 10% of the simulated cycles for
    both partitions (messages over PEs in place of the busiest PE: 20% short), and the hybrid's default (largest
    first) predicted and measured the faster."""
    runs = {method: check_run(run_flow(BFS, "rmat:scale=10,ef=16,seed=1", pes=4, arch=HYBRID.name,
                                       backend="verilator", cache_dir=build_cache, partition=method))
            for method in ("greedy", "sorted_greedy")}
    predicted = {method: report.superstep_model["design"]["cycles"] for method, report in runs.items()}
    for method, report in runs.items():
        assert report.cycles == pytest.approx(predicted[method], rel=0.10), method
    assert predicted["sorted_greedy"] < predicted["greedy"]
    assert runs["sorted_greedy"].cycles < runs["greedy"].cycles
