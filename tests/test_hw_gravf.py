"""The GraVF baseline architecture (arch="gravf"): answers and message counts vs the reference."""

import numpy as np
import pytest

from gravfm.algorithms import BFS, WCC
from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import FpgaTop, SystemConfig
from gravfm.hw.multi import build_system
from conftest import check_run, run_flow


def run_gravf(algorithm, graph, *, pes, params=None, **options):
    """Run ``algorithm`` on a one-FPGA GraVF-baseline system through the flow; return the report."""
    report = run_flow(algorithm, graph, pes=pes, params=params, arch="gravf", max_cycles=50_000, **options)
    assert report.plan.config.arch == "gravf" and report.plan.config.fpgas == 1
    return report


def test_build_system_gives_the_gravf_top_for_one_fpga():
    """The top run_gravf's runs get (build_system's choice for arch="gravf" on one FPGA)."""
    from amaranth.hdl import Fragment

    top = build_system(SystemConfig.of(algorithm=WCC, pes_per_fpga=2, local_bits=2, edges_per_pe=8, arch="gravf"))
    assert isinstance(top, FpgaTop) and top.architecture.name == "gravf"
    Fragment.get(top, None)


TINY = ["path", "undirected_path", "star", "out_star", "cycle", "two_components", "self_loop",
        "isolated", "duplicates", "complete", "binary_tree", "grid", "single_vertex"]


@pytest.mark.parametrize("name", TINY)
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=["wcc", "bfs"])
def test_tiny_graphs_one_pe(algorithm, name):
    check_run(run_gravf(algorithm, tiny_graph(name), pes=1))


@pytest.mark.parametrize("name", ["path", "star", "out_star", "two_components", "complete", "grid"])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=["wcc", "bfs"])
@pytest.mark.parametrize("pes", [2, 3])
def test_tiny_graphs_several_pes(algorithm, name, pes):
    graph = tiny_graph(name)
    if graph.num_vertices < pes:
        pytest.skip("fewer vertices than PEs")
    check_run(run_gravf(algorithm, graph, pes=pes))


def test_bfs_from_another_root_and_an_unreachable_part():
    report = check_run(run_gravf(BFS, tiny_graph("two_components"), pes=2, params={"root": 1}))
    assert np.asarray(report.readback.state["visited"]).tolist() == [1, 1, 1, 0, 0, 0, 0]   # 3..6 unreached


@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=["wcc", "bfs"])
def test_same_answer_as_gravfm(algorithm):
    rng = np.random.default_rng(7)
    graph = Graph.from_edges(rng.integers(0, 20, 60), rng.integers(0, 20, 60), num_vertices=20)
    baseline = check_run(run_gravf(algorithm, graph, pes=3))
    gravfm = check_run(run_flow(algorithm, graph, pes=3))
    assert gravfm.readback.messages_per_superstep == baseline.readback.messages_per_superstep
    for name, values in gravfm.readback.state.items():
        if algorithm is WCC or name != "parent":   # BFS may pick another valid parent
            assert np.array_equal(np.asarray(values), np.asarray(baseline.readback.state[name])), name


@pytest.mark.parametrize("seed", range(4))
def test_random_graphs_with_small_queues(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 16))
    edges = int(rng.integers(1, 3 * n))
    graph = Graph.from_edges(rng.integers(0, n, edges), rng.integers(0, n, edges), num_vertices=n)
    algorithm = (WCC, BFS)[seed % 2]
    params = {"root": int(rng.integers(0, n))} if algorithm is BFS else None
    check_run(run_gravf(algorithm, graph, pes=1 + seed % 3, params=params,
                    network_fifo_depth=1, message_fifo_depth=1))


def test_bad_architecture_is_refused():
    with pytest.raises(ConfigError, match="arch"):
        SystemConfig.of(algorithm=WCC, arch="gravx")


def test_gravfm_run_reports_the_architecture(tmp_path):
    import json

    from gravfm.cli import main

    out = tmp_path / "run.json"
    status = main(["run", "wcc", "--graph", "tiny:binary_tree", "--pes", "2", "--arch", "gravf", "--edge-memory", "onchip",
                   "--backend", "amaranth", "--quiet", "--json", str(out)])
    report = json.loads(out.read_text())
    assert status == 0
    assert report["arch"] == "gravf" and report["verified"] is True
    assert report["messages"] == report["reference"]["messages"]
    assert [row["messages"] for row in report["per_superstep"]] == \
        list(WCC.reference(WCC.prepare(tiny_graph("binary_tree"), {}), {}).messages_per_superstep)


def test_run_options_refuse_a_bad_architecture():
    from gravfm.flow import RunOptions

    with pytest.raises(ConfigError, match="architecture"):
        RunOptions(algorithm="wcc", graph="tiny:grid", arch="gravx")


def test_edge_data_travels_with_the_edge_list():
    from gravfm.algorithms import get_algorithm

    sssp = get_algorithm("sssp")
    check_run(run_gravf(sssp, tiny_graph("weighted"), pes=2))
