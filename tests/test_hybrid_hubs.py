"""The hybrid's hub path: hub senders numbered first on their PE, their edges into their FPGA
dealt over every scatter unit, their updates taken by every unit (gravfm.hw.hybrid.network)."""

import numpy as np
import pytest

from gravfm.algorithms import BFS, WCC, get_algorithm
from gravfm.architectures import architecture_info
from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.hw import SystemConfig
from gravfm.model.balance import busiest_unit_items
from gravfm.partition import Partition, edge_stores, partition
from conftest import check_pagerank_run, check_run, cli_error, random_graph, run_flow
from test_hw_multi_system import HOSTILE

SMALL = dict(local_bits=6, edges_per_pe=1024)


def star_graph(leaves=40):
    """Vertex 0 points at every other vertex; a few small edges besides."""
    sources = np.r_[np.zeros(leaves, dtype=np.int64), 3, 7, 9]
    targets = np.r_[np.arange(1, leaves + 1), 5, 2, 11]
    return Graph.from_edges(sources, targets, num_vertices=leaves + 1)


# --- numbering and edge layout ---------------------------------------------------------------------

def test_each_pe_numbers_its_hubs_first_and_hw_ids_round_trip():
    graph = random_graph(60, 400, 3)
    parts = partition(graph, 2, 2, "greedy")
    hubs = graph.out_degree() > 8
    assert 0 < hubs.sum() < 60
    with_hubs = parts.with_hubs(hubs)
    assert np.array_equal(with_hubs.pe_of_vertex, parts.pe_of_vertex)
    assert with_hubs.hub_senders.tolist() == np.bincount(parts.pe_of_vertex[hubs], minlength=4).tolist()
    local = with_hubs.local_index
    for pe in range(4):
        members = with_hubs.vertices_of_pe(pe)
        count = with_hubs.hub_senders[pe]
        assert hubs[members[:count]].all() and not hubs[members[count:]].any()
        assert (np.diff(members[:count]) > 0).all() and (np.diff(members[count:]) > 0).all()
        assert local[members].tolist() == list(range(members.size))
    hw = with_hubs.hw_ids(5)
    assert with_hubs.vertex_of_hw_id(hw, 5).tolist() == list(range(60))
    assert parts.hub_senders.tolist() == [0, 0, 0, 0]


def test_hubs_must_be_one_flag_per_vertex():
    with pytest.raises(ConfigError, match="hubs must be one bool per vertex"):
        Partition(np.zeros(4, dtype=np.int64), 1, 1, hubs=np.ones(3, dtype=bool))


def test_a_hubs_local_edges_are_dealt_over_every_unit_and_the_rest_stay_with_their_owner():
    graph = star_graph(40)
    parts = Partition(np.arange(41) % 8, 2, 4)   # vertex 0 on FPGA 0, PE 0
    hubs = np.zeros(41, dtype=bool)
    hubs[0] = True
    plain = edge_stores(graph, parts, 4, layout="hybrid")
    dealt = edge_stores(graph, parts.with_hubs(hubs), 4, layout="hybrid")
    hub_hw = parts.hw_ids(4)[0]
    fpga = parts.fpga_of_vertex

    def hub_edges(stores, unit):
        store = stores[unit]
        return int(store.length[hub_hw]) if store.length.size > hub_hw else 0
    # Without hubs the hub's 20 edges into FPGA 0 are unit 0's; with them each unit of FPGA 0 has 5.
    local_edges = int((fpga[np.arange(1, 41)] == 0).sum())
    assert [hub_edges(plain, u) for u in range(4)] == [local_edges, 0, 0, 0]
    assert [hub_edges(dealt, u) for u in range(4)] == [local_edges // 4] * 4
    # Its edges into FPGA 1 stay with the owner there (unit 0 of FPGA 1, slot 4).
    assert [hub_edges(dealt, u) for u in range(4, 8)] == [hub_edges(plain, u) for u in range(4, 8)]
    assert hub_edges(dealt, 4) == 40 - local_edges
    assert sum(s.num_edges for s in dealt) == sum(s.num_edges for s in plain) == graph.num_edges


# --- the hardware: every answer verified -----------------------------------------------------------

@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
def test_one_fpga_in_amaranth(algorithm):
    report = check_run(run_flow(algorithm, random_graph(24, 90, 3), pes=2, arch="hybrid", hub_degree=4,
                                params={"root": 0} if algorithm is BFS else None))
    assert report.plan.config.network.hub_path
    assert report.plan.partition.hub_senders.sum() > 0


def test_a_star_hub_on_two_fpgas_over_a_hostile_link_in_amaranth():
    report = check_run(run_flow(BFS, star_graph(30), fpgas=2, pes=2, arch="hybrid", hub_degree=3, params={"root": 0},
                                link=HOSTILE, network_fifo_depth=1, link_fifo_depth=1, message_fifo_depth=1))
    assert report.plan.partition.hub_senders.tolist() == [1, 0, 0, 0]


def test_bfs_with_hubs_compiled_beats_the_same_build_without(build_cache):
    """Compiled, 1 x 4: a graph whose hub holds most edges; the hub path verifies and its run is
    shorter by at least half of the 180 edges the hub's unit no longer streams alone (240 -> 60)."""
    graph = star_graph(240)
    options = dict(arch="hybrid", pes=4, params={"root": 0}, partition="round_robin", backend="verilator",
                   cache_dir=build_cache, **SMALL)
    with_hubs = check_run(run_flow(BFS, graph, hub_degree=16, **options))
    without = check_run(run_flow(BFS, graph, hub_path=True, **options))   # the same build, no hub loaded
    assert with_hubs.plan.partition.hub_senders.sum() == 1 and without.plan.partition.hubs is None
    assert without.cycles - with_hubs.cycles >= 0.5 * (240 - 240 // 4)


@pytest.mark.slow
@pytest.mark.parametrize("name, fpgas, pes, lanes", [("wcc", 1, 4, 1), ("bfs", 2, 4, 2), ("pagerank", 2, 4, 2),
                                                     ("sssp", 4, 2, 1)])
def test_every_kind_of_system_compiled(name, fpgas, pes, lanes, build_cache):
    graph = "rmat:scale=7,ef=8,seed=3" if name != "pagerank" else "uniform:n=64,deg=6,seed=6"
    check = (lambda r: check_pagerank_run(r)[0]) if name == "pagerank" else check_run
    report = check(run_flow(get_algorithm(name), graph, fpgas=fpgas, pes=pes, arch="hybrid", hub_degree=6,
                            link=HOSTILE if fpgas > 1 else None, link_lanes=lanes,
                            params={"root": 0} if name in ("bfs", "sssp") else None, backend="verilator",
                            cache_dir=build_cache, **SMALL))
    assert report.plan.partition.hub_senders.sum() > 0


# --- refusals ----------------------------------------------------------------------------------------

def test_the_hub_path_is_the_hybrids():
    with pytest.raises(ConfigError, match="hub_path: the gravfm architecture has no hub path"):
        SystemConfig.of(algorithm=WCC, pes_per_fpga=2, hub_path=True)
    with pytest.raises(ConfigError, match="--hub-degree 4: the GraVF-M architecture has no hub path"):
        run_flow(WCC, random_graph(8, 20, 1), pes=2, hub_degree=4)


def test_a_partition_with_hubs_needs_the_hub_path():
    graph = random_graph(16, 60, 2)
    hubs = graph.out_degree() > 3
    parts = partition(graph, 1, 2, "greedy").with_hubs(hubs)
    with pytest.raises(ConfigError, match="the partition has hub senders but the system has no hub path"):
        run_flow(WCC, graph, pes=2, arch="hybrid", partition=parts)


def test_the_command_line_names_the_option(capsys):
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--pes", "2", "--hub-degree", "4",
                     "--backend", "amaranth", "--edge-memory", "onchip")
    assert line.endswith("--hub-degree 4: the GraVF-M architecture has no hub path (the hybrid's: --arch hybrid)")
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--pes", "2", "--arch", "hybrid",
                     "--hub-degree", "-1", "--backend", "amaranth", "--edge-memory", "onchip")
    assert line.endswith("hub_degree must be a non-negative integer, not -1")


# --- the model ---------------------------------------------------------------------------------------

def test_the_balance_model_deals_a_hubs_edges():
    graph = star_graph(400)
    pe_of_vertex = np.arange(401) % 4
    hubs = np.zeros(401, dtype=bool)
    hubs[0] = True
    arch = architecture_info("hybrid")
    senders = [np.array([0])]
    plain = busiest_unit_items(arch, graph, pe_of_vertex, 4, [1], senders)
    dealt = busiest_unit_items(arch, graph, pe_of_vertex, 4, [1], senders, hubs=hubs)
    assert plain == [400] and dealt == [100]
