"""The GraVF baseline architecture (arch="gravf"): answers and message counts vs the reference."""

import numpy as np
import pytest

from gravfm.algorithms import BFS, WCC
from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import SystemConfig
from gravfm.hw import FpgaTop
from gravfm.hw.multi import build_system
from gravfm.partition import gravf_edge_stores, partition
from gravfm.sim.amaranth_backend import run_amaranth, simulate
from gravfm.sim.loader import build_load


def run_gravf(algorithm, graph, *, pes, params=None, **options):
    """Simulate ``algorithm`` on a GraVF-baseline system; return (ok, detail, result dict)."""
    params = algorithm.params(params)
    prepared = algorithm.prepare(graph, params)
    parts = partition(prepared, 1, pes, method="greedy")
    local_bits = parts.min_local_bits
    stores = gravf_edge_stores(prepared, parts, local_bits)
    reference = algorithm.reference(prepared, params)
    config = SystemConfig.of(algorithm=algorithm, pes_per_fpga=pes, local_bits=local_bits,
                          edges_per_pe=max(1, int(stores.edges_per_pe.max())),
                          max_rounds=max(4, reference.supersteps), arch="gravf", **options)
    system = build_system(config)
    assert isinstance(system, FpgaTop) and system.architecture.name == "gravf"
    plan = build_load(algorithm, prepared, parts, config, params, data_bits=len(system.host_wr_data))
    sim = simulate(system, plan, max_cycles=50_000)
    state = plan.decode_states(sim.state_words)
    ok, detail = algorithm.check(prepared, params, state, reference)
    supersteps = int(sim.counters["supersteps"].max())
    rounds = min(supersteps, config.pe.max_rounds)
    log = {name: [int(v) for v in sim.round_log[name][:, :rounds].sum(axis=0)]
           for name in ("messages", "updates")}
    assert (sim.counters["supersteps"] == supersteps).all()
    return ok, detail, {"state": state, "reference": reference, "supersteps": supersteps,
                        "messages": log["messages"], "updates": log["updates"],
                        "counted_messages": int(sim.counters["messages"].sum()), "cycles": sim.cycles}


def check(result):
    """Assert the answer, supersteps and per-superstep messages and updates equal the reference's."""
    ok, detail, run = result
    assert ok, detail
    reference = run["reference"]
    assert run["supersteps"] == reference.supersteps
    assert run["messages"] == list(reference.messages_per_superstep)
    assert run["updates"] == list(reference.updates_per_superstep)
    assert run["counted_messages"] == sum(reference.messages_per_superstep)
    return run


TINY = ["path", "undirected_path", "star", "out_star", "cycle", "two_components", "self_loop",
        "isolated", "duplicates", "complete", "binary_tree", "grid", "single_vertex"]


@pytest.mark.parametrize("name", TINY)
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=["wcc", "bfs"])
def test_tiny_graphs_one_pe(algorithm, name):
    check(run_gravf(algorithm, tiny_graph(name), pes=1))


@pytest.mark.parametrize("name", ["path", "star", "out_star", "two_components", "complete", "grid"])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=["wcc", "bfs"])
@pytest.mark.parametrize("pes", [2, 3])
def test_tiny_graphs_several_pes(algorithm, name, pes):
    graph = tiny_graph(name)
    if graph.num_vertices < pes:
        pytest.skip("fewer vertices than PEs")
    check(run_gravf(algorithm, graph, pes=pes))


def test_bfs_from_another_root_and_an_unreachable_part():
    run = check(run_gravf(BFS, tiny_graph("two_components"), pes=2, params={"root": 1}))
    assert np.asarray(run["state"]["visited"]).tolist() == [1, 1, 1, 0, 0, 0, 0]   # 3..6 unreached


@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=["wcc", "bfs"])
def test_same_answer_as_gravfm(algorithm):
    rng = np.random.default_rng(7)
    graph = Graph.from_edges(rng.integers(0, 20, 60), rng.integers(0, 20, 60), num_vertices=20)
    baseline = check(run_gravf(algorithm, graph, pes=3))
    gravfm = run_amaranth(algorithm, graph, pes=3)
    assert gravfm.ok, gravfm.detail
    assert gravfm.messages_per_superstep == baseline["messages"]
    for name, values in gravfm.state.items():
        if algorithm is WCC or name != "parent":   # BFS may pick another valid parent
            assert np.array_equal(np.asarray(values), np.asarray(baseline["state"][name])), name


@pytest.mark.parametrize("seed", range(4))
def test_random_graphs_with_small_queues(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 16))
    edges = int(rng.integers(1, 3 * n))
    graph = Graph.from_edges(rng.integers(0, n, edges), rng.integers(0, n, edges), num_vertices=n)
    algorithm = (WCC, BFS)[seed % 2]
    params = {"root": int(rng.integers(0, n))} if algorithm is BFS else None
    check(run_gravf(algorithm, graph, pes=1 + seed % 3, params=params,
                    network_fifo_depth=1, message_fifo_depth=1))


def test_bad_architecture_is_refused():
    with pytest.raises(ConfigError, match="arch"):
        SystemConfig.of(algorithm=WCC, arch="gravx")


def test_an_fpga_outside_the_system_is_refused():
    config = SystemConfig.of(algorithm=WCC, fpgas=2, arch="gravf")
    with pytest.raises(ConfigError, match="FPGA 2 does not exist in a system of 2"):
        FpgaTop(config, fpga=2)


def test_gravfm_run_reports_the_architecture(tmp_path):
    import json

    from gravfm.cli import main

    out = tmp_path / "run.json"
    status = main(["run", "wcc", "--graph", "tiny:binary_tree", "--pes", "2", "--arch", "gravf",
                   "--backend", "amaranth", "--quiet", "--json", str(out)])
    report = json.loads(out.read_text())
    assert status == 0
    assert report["arch"] == "gravf" and report["verified"] is True
    assert report["messages"] == report["reference"]["messages"]
    assert [row["messages"] for row in report["per_superstep"]] == \
        list(WCC.reference(WCC.prepare(tiny_graph("binary_tree"), {}), {}).messages_per_superstep)


def test_run_options_refuse_a_bad_architecture():
    from gravfm.run import RunOptions

    with pytest.raises(ConfigError, match="architecture"):
        RunOptions(algorithm="wcc", graph="tiny:grid", arch="gravx")


def test_edge_data_travels_with_the_edge_list():
    from gravfm.algorithms import get_algorithm

    sssp = get_algorithm("sssp")
    check(run_gravf(sssp, tiny_graph("weighted"), pes=2))
