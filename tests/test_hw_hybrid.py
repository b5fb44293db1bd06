"""The hybrid architecture (arch="hybrid") end to end: answers and counts checked against the reference.

Every run goes through the flow (which verifies the answer) and :func:`conftest.check_run` (supersteps,
messages and updates per superstep, per-PE counters against the round log). Compiled (Verilator) runs
share builds through fixed capacities (:data:`SMALL`); the Amaranth simulator runs the smallest systems.
Links: ideal, reordering, stalling, slow, and all of these at once (the multi-FPGA suite's ``HOSTILE``).
"""

import numpy as np
import pytest

from gravfm.algorithms import BFS, WCC, get_algorithm
from gravfm.errors import ConfigError
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import SystemConfig
from gravfm.hw.link import LinkConfig
from conftest import check_pagerank_run, check_run, random_graph, run_flow
from test_hw_example import WIDEST, load_example
from test_hw_multi_system import HOSTILE

#: Capacities shared by the compiled runs of one algorithm and system size, so that they share a build.
SMALL = dict(local_bits=6, edges_per_pe=1024)
LINKS = {
    "ideal": LinkConfig(),
    "reorder": LinkConfig(reorder_window=4, seed=3),
    "stall": LinkConfig(stall_probability=0.4, seed=4),
    "slow": LinkConfig(bits_per_cycle=3.5, latency_cycles=9, fifo_depth=2),
    "hostile": HOSTILE,
}


def hybrid(algorithm, graph, *, build_cache=None, check=check_run, **options):
    """Run ``algorithm`` on ``graph`` on a hybrid system through the flow; check and return the report."""
    if build_cache is not None:
        options = {"backend": "verilator", "cache_dir": str(build_cache), **SMALL, **options}
    report = check(run_flow(algorithm, graph, arch="hybrid", **options))
    config = (report[0] if isinstance(report, tuple) else report).plan.config
    assert config.arch == "hybrid"
    return report


def algorithm_named(name):
    return load_example(WIDEST, "WIDEST_PATH") if name == "widest_path" else get_algorithm(name)


def check(name):
    return (lambda report: check_pagerank_run(report)[0]) if name == "pagerank" else check_run


def params_of(name):
    return {"root": 0} if name in ("bfs", "sssp", "widest_path") else None


# --- Amaranth's simulator: the smallest systems --------------------------------------------------

@pytest.mark.parametrize("name", ["grid", "binary_tree", "two_components", "star", "isolated", "self_loop"])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
@pytest.mark.parametrize("pes", [1, 2])
def test_tiny_graphs(algorithm, name, pes):
    graph = tiny_graph(name)
    if graph.num_vertices < pes:
        pytest.skip("fewer vertices than PEs")
    hybrid(algorithm, graph, pes=pes)


@pytest.mark.parametrize("link", ["ideal", "hostile"])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
def test_two_fpgas_in_amaranth(algorithm, link):
    hybrid(algorithm, random_graph(16, 36, 2), fpgas=2, pes=1, link=LINKS[link], network_fifo_depth=1,
           link_fifo_depth=1, message_fifo_depth=1)


def test_same_answers_and_messages_as_gravfm():
    graph = random_graph(20, 60, 7)
    ours = hybrid(WCC, graph, pes=2)
    theirs = check_run(run_flow(WCC, graph, pes=2))
    assert ours.readback.messages_per_superstep == theirs.readback.messages_per_superstep
    assert np.array_equal(np.asarray(ours.readback.state["label"]), np.asarray(theirs.readback.state["label"]))


def test_pes_per_fpga_must_be_a_power_of_two():
    with pytest.raises(ConfigError, match="pes_per_fpga = 3: the hybrid architecture needs a power of two"):
        SystemConfig.of(algorithm=WCC, pes_per_fpga=3, arch="hybrid")


# --- compiled: every algorithm, 1-4 FPGAs, every link, on and off chip ----------------------------

def test_wcc_on_four_pes_compiled(build_cache):
    hybrid(WCC, "rmat:scale=7,ef=8,seed=1", pes=4, build_cache=build_cache)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wcc", "bfs", "pagerank", "sssp", "widest_path"])
@pytest.mark.parametrize("edge_memory", ["onchip", "offchip"])
def test_every_algorithm_on_one_fpga(name, edge_memory, build_cache):
    graph = "rmat:scale=7,ef=6,seed=2" if name != "pagerank" else "uniform:n=100,deg=4,seed=3"
    hybrid(algorithm_named(name), graph, pes=4, edge_memory=edge_memory, params=params_of(name),
           build_cache=build_cache, check=check(name))


@pytest.mark.slow
@pytest.mark.parametrize("link", list(LINKS))
@pytest.mark.parametrize("fpgas, pes, link_lanes", [(2, 2, 1), (3, 1, 1), (4, 2, 1), (2, 4, 2), (4, 2, 2)])
@pytest.mark.parametrize("name", ["wcc", "bfs"])
def test_several_fpgas_and_links(name, fpgas, pes, link_lanes, link, build_cache):
    """One and two link lanes (tests/test_hw_hybrid_lanes.py)."""
    hybrid(algorithm_named(name), "uniform:n=96,deg=3,seed=5", fpgas=fpgas, pes=pes, link=LINKS[link],
           link_lanes=link_lanes, params=params_of(name), build_cache=build_cache, network_fifo_depth=2,
           link_fifo_depth=2)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pagerank", "sssp", "widest_path"])
@pytest.mark.parametrize("edge_memory", ["onchip", "offchip"])
@pytest.mark.parametrize("pes, link_lanes", [(2, 1), (4, 2)])
def test_other_algorithms_on_two_fpgas_over_a_hostile_link(name, edge_memory, pes, link_lanes, build_cache):
    graph = "rmat:scale=6,ef=6,seed=4" if name != "pagerank" else "uniform:n=64,deg=4,seed=6"
    hybrid(algorithm_named(name), graph, fpgas=2, pes=pes, link=HOSTILE, link_lanes=link_lanes,
           edge_memory=edge_memory, params=params_of(name), build_cache=build_cache, check=check(name))
