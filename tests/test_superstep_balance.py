"""benchmarks/superstep_balance.py's floors on graphs small enough to count by hand."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from superstep_balance import (balance, edges_per_scatter_unit, intake_floor, messages_per_pe,  # noqa: E402
                               scatter_floor, with_barriers)

from gravfm.graph.csr import Graph  # noqa: E402

# Two FPGAs of one PE: vertices 0-3 on PE 0, 4-7 on PE 1.
PE_OF_VERTEX = np.array([0, 0, 0, 0, 1, 1, 1, 1])


def test_the_busiest_pe_sets_the_floor_when_every_update_carries_edges():
    graph = Graph.from_edges([0, 1, 2, 3], [4, 5, 6, 7], num_vertices=8)
    senders = [np.arange(8) < 4]
    per_pe = messages_per_pe(graph, senders, PE_OF_VERTEX, 2)
    assert balance(per_pe) == (0.5, [2.0])
    # PE 1 takes 4 edges (mean 2); each FPGA takes 4 updates, 2 cycles at 2 lanes.
    floor, intake = intake_floor(graph, senders, per_pe, PE_OF_VERTEX, 1, lanes=2)
    assert (floor, intake) == (2.0, [2.0])
    # Two supersteps whose barriers cross a 3-cycle link: the first takes its 4 edge cycles (the
    # longer), the second, silent, the crossing: 7 cycles against the 2 ideal ones.
    assert with_barriers(per_pe, intake, supersteps=2, barrier_cycles=3) == 7 / 2
    # A link slower than the work: every superstep is the crossing.
    assert with_barriers(per_pe, intake, supersteps=2, barrier_cycles=5) == 10 / 2


def test_updates_without_edges_still_pass_their_fpgas_intake():
    graph = Graph.from_edges([0], [4], num_vertices=8)
    senders = [np.arange(8) < 4]
    # One edge (mean 0.5 per PE), but FPGA 0 takes its four senders' updates at one per cycle.
    per_pe = messages_per_pe(graph, senders, PE_OF_VERTEX, 2)
    floor, intake = intake_floor(graph, senders, per_pe, PE_OF_VERTEX, 1, lanes=1)
    assert intake == [4.0] and floor == 4.0 / 0.5


def test_pagerank_sends_from_every_vertex_in_every_superstep_but_the_last():
    from superstep_balance import active_senders

    from gravfm.algorithms import get_algorithm
    from gravfm.graph import load_graph

    algorithm = get_algorithm("pagerank")
    params = algorithm.params({})
    graph = algorithm.prepare(load_graph("tiny:grid"), params)
    reference = algorithm.reference(graph, params)
    steps = active_senders("pagerank", graph, reference)
    counted = [int(active[graph.sources()].sum()) for active in steps]
    assert counted == [int(count) for count in reference.messages_per_superstep if count]
    assert len(steps) == len(reference.messages_per_superstep) - 1


def test_a_hub_is_one_scatter_units_until_its_edges_are_dealt():
    # One FPGA of two PEs: vertices 0-3 on PE 0, 4-7 on PE 1. Vertex 0 sends to 1, 2, 4, 5, 6, 7;
    # vertex 4 to 0. Both send in the one superstep.
    pe_of_vertex = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    graph = Graph.from_edges([0, 0, 0, 0, 0, 0, 4], [1, 2, 4, 5, 6, 7, 0], num_vertices=8)
    senders = [np.isin(np.arange(8), [0, 4])]
    per_pe = messages_per_pe(graph, senders, pe_of_vertex, 2)
    assert per_pe[0].tolist() == [3, 4]
    # Vertex 0's scatter unit (PE 0's) streams its six edges, PE 1's unit vertex 4's one.
    per_unit = edges_per_scatter_unit(graph, senders, pe_of_vertex, 2)
    assert per_unit[0].tolist() == [6, 1]
    assert scatter_floor(per_pe, per_unit) == 6 / 3.5
    # Dealt over both units (degree above 2), vertex 0's edges are three each: PE 1's unit holds
    # 4, the busiest PE's messages 4.
    dealt = edges_per_scatter_unit(graph, senders, pe_of_vertex, 2, hub_degree=2)
    assert dealt[0].tolist() == [3, 4]
    assert scatter_floor(per_pe, dealt) == 4 / 3.5
