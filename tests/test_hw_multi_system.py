"""Multi-FPGA systems in Amaranth's simulator: exact answers over plain, reordering and stalling links.

Every run is checked against the software reference (answer, messages and updates per
superstep, supersteps, per-PE counters) and its link counters against what the neighbor filter
says each link must carry.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gravfm.algorithms import BFS, WCC, get_algorithm
from gravfm.errors import ConfigError
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import SystemConfig
from gravfm.hw.link import LinkConfig
from gravfm.hw.multi import MultiFpgaSystem
from gravfm.hw.protocol import peers_of
from gravfm.partition import neighbor_filter, partition
from conftest import check_run, random_graph, run_flow

# A link that reorders within 4 items, stalls a third of the cycles, is slow and shallow.
HOSTILE = LinkConfig(reorder_window=4, stall_probability=0.3, latency_cycles=9, fifo_depth=2,
                     bits_per_cycle=3.5, seed=5)


@pytest.mark.parametrize("fpgas, pes", [(2, 1), (3, 1), pytest.param(2, 2, marks=pytest.mark.slow),
                                        pytest.param(4, 1, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", ["grid", "binary_tree", "two_components"])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
def test_tiny_graphs(algorithm, name, fpgas, pes):
    check_run(run_flow(algorithm, tiny_graph(name), fpgas=fpgas, pes=pes))


@pytest.mark.parametrize("fpgas", [2, 3, 4])
@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
def test_reordering_stalling_link_gives_exact_results(algorithm, seed, fpgas):
    graph = random_graph(20, 45, seed)
    link = LinkConfig(reorder_window=4, stall_probability=0.3, latency_cycles=9, fifo_depth=2,
                      bits_per_cycle=3.5, seed=seed)
    result = check_run(run_flow(algorithm, graph, fpgas=fpgas, pes=1, link=link,
                                          network_fifo_depth=1, link_fifo_depth=1, message_fifo_depth=1))
    if algorithm is WCC:   # every vertex updates in round 0: the links must have been the bottleneck
        assert result.readback.links["bound_cycles"].sum() > 0


@pytest.mark.parametrize("fpgas, pes", [(2, 2), pytest.param(3, 2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("algorithm", [WCC, BFS, get_algorithm("sssp")], ids=lambda a: a.name)
def test_two_update_lanes_give_exact_results(algorithm, fpgas, pes):
    """PEs taking two updates per cycle (most with empty edge lists here), over a hostile link;
    deep link FIFOs let the PEs run ahead of it."""
    graph = tiny_graph("weighted") if algorithm.name == "sssp" else random_graph(24, 50, 7)
    result = check_run(run_flow(algorithm, graph, fpgas=fpgas, pes=pes, link=HOSTILE,
                                          update_lanes=2, network_fifo_depth=1, link_fifo_depth=16,
                                          message_fifo_depth=1))
    assert result.plan.config.pe.update_lanes == 2


@pytest.mark.parametrize("method", ["round_robin", "greedy", "metis"])
def test_fpga_level_partition_methods(method):
    check_run(run_flow(WCC, random_graph(18, 40, 3), fpgas=3, pes=1, partition=method,
                                 link=HOSTILE))


def test_bfs_link_traffic_is_what_the_filter_allows():
    """BFS: each reached vertex updates once; link a->b carries the reached vertices of FPGA a
    with a neighbour on FPGA b, plus one barrier per superstep."""
    graph = BFS.prepare(random_graph(24, 40, 4), BFS.params({}))
    fpgas = 3
    result = check_run(run_flow(BFS, graph, fpgas=fpgas, pes=1))
    parts = partition(graph, fpgas, 1, method="greedy")
    bitmap = neighbor_filter(graph, parts).bitmap
    reached = result.prepared.reference.level >= 0
    links = result.readback.links
    items = links["items"]
    for a in range(fpgas):
        for k, b in enumerate(peers_of(a, fpgas)):
            senders = reached & (parts.fpga_of_vertex == a) & bitmap[:, b]
            assert items[a, k] == senders.sum() + result.supersteps, (a, b)
    vid = result.plan.config.vertexid_bits
    item_bits = vid + sum(vid if width == "vertexid" else width for width in BFS.update.values())
    assert (links["bits"] == items * item_bits).all()
    # Items packed back to back into the link's 128-bit words.
    assert [row["words"] for row in result.links["per_link"]] == list((-(-items * item_bits // 128)).ravel())


def test_without_filter_every_update_crosses_every_link():
    graph = random_graph(16, 24, 6)
    filtered = check_run(run_flow(BFS, graph, fpgas=2, pes=1))
    unfiltered = check_run(run_flow(BFS, graph, fpgas=2, pes=1, use_filter=False))
    updates = sum(unfiltered.prepared.reference.updates_per_superstep)
    items = unfiltered.readback.links["items"]
    # Every update of FPGA a crosses a's link; the two FPGAs' updates add up to all of them.
    assert items.sum() == updates + 2 * unfiltered.supersteps
    assert filtered.readback.links["items"].sum() <= items.sum()


def test_one_fpga_multi_system_matches_the_reference():
    check_run(run_flow(WCC, tiny_graph("grid"), fpgas=1, pes=2))


def test_more_pes_than_vertices_is_refused():
    with pytest.raises(ConfigError, match="2 PEs is more than the graph's 1 vertices"):
        run_flow(WCC, tiny_graph("single_vertex"), fpgas=2, pes=1)


def test_multi_system_needs_a_system_config():
    with pytest.raises(TypeError, match="MultiFpgaSystem needs a SystemConfig"):
        MultiFpgaSystem({"fpgas": 2})
    with pytest.raises(TypeError, match="link must be a LinkConfig"):
        MultiFpgaSystem(SystemConfig.of(algorithm=WCC, fpgas=2), link={"latency_cycles": 3})


def test_sssp_with_edge_data_over_a_reordering_link():
    check_run(run_flow(get_algorithm("sssp"), tiny_graph("weighted"), fpgas=2, pes=1,
                                 link=LinkConfig(reorder_window=3, stall_probability=0.2)))


@pytest.mark.slow
def test_pagerank_on_three_fpgas():
    from gravfm.algorithms import get_algorithm
    check_run(run_flow(get_algorithm("pagerank"), tiny_graph("binary_tree"), fpgas=3, pes=1,
                                 link=HOSTILE))


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_graphs_and_links(data):
    fpgas = data.draw(st.integers(2, 4))
    vertices = data.draw(st.integers(fpgas, 16))
    edges = data.draw(st.integers(0, 40))
    graph = random_graph(vertices, edges, data.draw(st.integers(0, 1000)))
    link = LinkConfig(reorder_window=data.draw(st.integers(1, 6)),
                      stall_probability=data.draw(st.sampled_from([0.0, 0.25, 0.5])),
                      latency_cycles=data.draw(st.integers(0, 12)), fifo_depth=data.draw(st.integers(1, 4)),
                      bits_per_cycle=data.draw(st.sampled_from([None, 2.0, 7.5])),
                      seed=data.draw(st.integers(0, 99)))
    algorithm = data.draw(st.sampled_from([WCC, BFS]))
    check_run(run_flow(algorithm, graph, fpgas=fpgas, pes=1, link=link, network_fifo_depth=1,
                                 partition=data.draw(st.sampled_from(["greedy", "round_robin"])),
                                 update_lanes=data.draw(st.sampled_from([1, 2]))))
