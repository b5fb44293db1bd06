"""The GraVF baseline on several FPGAs: exact answers over hostile links, one message per crossing edge.

Every run is checked against the software reference (answer, messages and updates per
superstep, supersteps), and its link counters against the traffic the partition and the
reference imply: link a->b carries one message per traversed edge from a vertex on FPGA a to a
vertex on FPGA b, plus one barrier per superstep.
"""

import numpy as np
import pytest

from gravfm.algorithms import BFS, WCC
from gravfm.graph import load_graph
from gravfm.graph.tiny import tiny_graph
from gravfm.hw import SystemConfig
from gravfm.hw.link import LinkConfig
from gravfm.hw.multi import MultiFpgaSystem, build_system
from gravfm.hw.protocol import peers_of
from gravfm.hw.multi.link_report import bytes_per_edge_theory, crossing_fraction, diagnose_links
from gravfm.partition import partition
from conftest import check_run as check_counts
from conftest import random_graph, run_flow
# The multi-FPGA suite's hostile link (reorders within 4 items, stalls 30% of the cycles, 3.5 bits
# per cycle, 2 items of buffering; tests/ is on sys.path).
from test_hw_multi_system import HOSTILE


def updates_per_vertex(algorithm, graph, params):
    """How often each vertex emits an update over the run (the superstep semantics of docs/interfaces.md), recomputed
    here so that the traversed edges of every vertex are known (the reference counts per round)."""
    n = graph.num_vertices
    sources, targets = graph.sources(), graph.targets
    counts = np.zeros(n, dtype=np.int64)
    if algorithm is WCC:
        labels, active = np.arange(n), np.ones(n, dtype=bool)
        while active.any():
            counts += active
            sent = active[sources]
            lowered = labels.copy()
            np.minimum.at(lowered, targets[sent], labels[sources[sent]])
            active = lowered < labels
            labels = lowered
    else:
        level = algorithm.reference(graph, params).level
        counts[level >= 0] = 1
    return counts


def crossing_messages(graph, counts, fpga_of_vertex, a, b):
    """Traversed edges from a vertex on FPGA a to one on FPGA b."""
    sources, targets = graph.sources(), graph.targets
    crossing = (fpga_of_vertex[sources] == a) & (fpga_of_vertex[targets] == b)
    return int(counts[sources[crossing]].sum())


def check_run(report):
    """The suite's check, for a GraVF-baseline run."""
    assert report.plan.config.arch == "gravf"
    return check_counts(report)


def expected_link_messages(algorithm, graph, params, parts):
    """Messages link a->b must carry (array (fpgas, fpgas - 1)): traversed edges from FPGA a to b."""
    n = parts.fpgas
    counts = updates_per_vertex(algorithm, graph, params)
    assert int((counts * graph.out_degree()).sum()) == algorithm.reference(graph, params).total_messages
    return np.array([[crossing_messages(graph, counts, parts.fpga_of_vertex, a, b) for b in peers_of(a, n)]
                     for a in range(n)], dtype=np.int64).reshape(n, n - 1)


def check_link_traffic(algorithm, report, params, method="greedy"):
    """Link a->b: the traversed edges that cross from FPGA a to b, plus one barrier per round."""
    graph, config = report.prepared.graph, report.plan.config
    parts = partition(graph, config.fpgas, config.pes_per_fpga, method=method)
    links = report.readback.links
    expected = expected_link_messages(algorithm, graph, params, parts)
    assert (links["items"] == expected + report.supersteps).all()
    assert (links["barriers_sent"] == report.supersteps).all()
    assert (links["barriers_delivered"] == report.supersteps).all()
    assert (links["delivered"] == links["items"]).all()
    item_bits = 2 * config.vertexid_bits + sum(
        config.vertexid_bits if w == "vertexid" else w for w in algorithm.message.values())
    assert (links["bits"] == links["items"] * item_bits).all()


@pytest.mark.parametrize("fpgas", [2, 3, 4])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
def test_hostile_link_gives_exact_results_and_one_message_per_crossing_edge(algorithm, seed, fpgas):
    graph = random_graph(20, 45, seed)
    params = {"root": seed} if algorithm is BFS else None
    link = LinkConfig(reorder_window=4, stall_probability=0.3, latency_cycles=9, fifo_depth=2,
                      bits_per_cycle=3.5, seed=seed)
    result = check_run(run_flow(algorithm, graph, fpgas=fpgas, pes=1, params=params, link=link,
                                          arch="gravf", network_fifo_depth=1, message_fifo_depth=1))
    check_link_traffic(algorithm, result, algorithm.params(params))
    if algorithm is WCC:   # every vertex sends in round 0: the slow links must have held it up
        assert result.readback.links["bound_cycles"].sum() > 0


@pytest.mark.parametrize("name", ["grid", "binary_tree", "two_components"])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
def test_tiny_graphs_on_two_fpgas_of_two_pes(algorithm, name):
    result = check_run(run_flow(algorithm, tiny_graph(name), fpgas=2, pes=2, link=HOSTILE,
                                          arch="gravf", network_fifo_depth=1))
    check_link_traffic(algorithm, result, algorithm.params(None))


@pytest.mark.parametrize("method", ["round_robin", "metis"])
def test_other_fpga_partitions(method):
    result = check_run(run_flow(WCC, random_graph(18, 40, 3), fpgas=3, pes=1, link=HOSTILE,
                                          partition=method, arch="gravf"))
    check_link_traffic(WCC, result, WCC.params(None), method=method)


def test_gravf_sends_more_than_gravfm_on_a_dense_graph():
    """Per edge vs once per remote FPGA: GraVF-M's links carry fewer items on a graph of degree 6."""
    graph = random_graph(16, 96, 8)
    gravf = check_run(run_flow(WCC, graph, fpgas=2, pes=1, arch="gravf"))
    gravfm = check_counts(run_flow(WCC, graph, fpgas=2, pes=1))
    barriers = 2 * gravf.supersteps
    assert gravfm.readback.links["items"].sum() - barriers < \
        (gravf.readback.links["items"].sum() - barriers) / 2


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_and_links(seed):
    rng = np.random.default_rng(100 + seed)
    fpgas = int(rng.integers(2, 5))
    graph = random_graph(int(rng.integers(2 * fpgas, 24)), int(rng.integers(0, 60)), seed)
    link = LinkConfig(reorder_window=int(rng.integers(1, 7)), stall_probability=float(rng.choice([0, 0.25, 0.5])),
                      latency_cycles=int(rng.integers(0, 12)), fifo_depth=int(rng.integers(1, 5)),
                      bits_per_cycle=[None, 2.0, 7.5][seed % 3], seed=seed)
    algorithm = (WCC, BFS)[seed % 2]
    result = check_run(run_flow(algorithm, graph, fpgas=fpgas, pes=int(rng.integers(1, 3)), link=link,
                                          arch="gravf", network_fifo_depth=1, message_fifo_depth=1))
    check_link_traffic(algorithm, result, algorithm.params(None))


def test_build_system_gives_a_multi_fpga_gravf_top():
    config = SystemConfig.of(algorithm=WCC, fpgas=3, local_bits=2, edges_per_pe=8, arch="gravf")
    top = build_system(config, platform="ac510x4")
    assert isinstance(top, MultiFpgaSystem) and top.config.arch == "gravf"
    # m_message: destination id + sender id + the message payload.
    assert top.item_bits == 2 * config.vertexid_bits + config.vertexid_bits
    assert top.link_config == LinkConfig.from_platform("ac510x4", 3)
    from amaranth.hdl import Fragment
    Fragment.get(top, None)


def test_link_diagnosis_names_the_stuck_link():
    """Constructed counters of a 3-FPGA run that stopped: link 2->0 lost two items and the
    barrier of round 4 never came out; FPGA 0 waits for it, the others are fine."""
    items = np.array([[10, 10], [12, 12], [14, 9]])
    delivered = items.copy()
    delivered[2, 0] = 12                                  # link 2->0 (k = 0 on FPGA 2)
    barriers_sent = np.full((3, 2), 5)
    barriers_delivered = barriers_sent.copy()
    barriers_delivered[2, 0] = 4
    counters = {"items": items, "delivered": delivered, "barriers_sent": barriers_sent,
                "barriers_delivered": barriers_delivered}
    lines = diagnose_links(counters, fpgas=3, supersteps=[5, 5, 5])
    assert lines == ("link 2->0: 14 items sent, 12 received, 5 barriers sent, 4 received; 2 in flight; "
                     "barrier of round 4 from fpga 2 missing (sent, not delivered)",)
    # FPGA 1 waits one round further: every link into it lacks a barrier the peers have not sent.
    lines = diagnose_links({**counters, "delivered": items, "barriers_delivered": barriers_sent},
                           fpgas=3, supersteps=[5, 6, 5])
    assert [line.split(":")[0] for line in lines] == ["link 0->1", "link 2->1"]
    assert all("barrier of round 5" in line and "not sent yet" in line for line in lines)
    assert diagnose_links({**counters, "delivered": items, "barriers_delivered": barriers_sent},
                          fpgas=3, supersteps=[5, 5, 5]) == ()


def test_bytes_per_edge_theory():
    graph = random_graph(20, 45, 1)
    parts = partition(graph, 2, 1, method="greedy")
    crossing = crossing_fraction(graph, parts.fpga_of_vertex)
    assert 0 < crossing < 1
    assert crossing == pytest.approx(np.mean(parts.fpga_of_vertex[graph.sources()]
                                             != parts.fpga_of_vertex[graph.targets]))
    assert bytes_per_edge_theory("gravf", fpgas=2, vertices=20, edges=45, item_bits=16,
                                 crossing=crossing) == pytest.approx(2 * crossing)
    assert bytes_per_edge_theory("gravfm", fpgas=3, vertices=20, edges=40, item_bits=16,
                                 crossing=crossing) == pytest.approx(2 * 2 * 0.5)
    assert bytes_per_edge_theory("gravfm", fpgas=1, vertices=20, edges=40, item_bits=16, crossing=0) == 0


# --- the compiled simulator -------------------------------------------------------------------

@pytest.mark.parametrize("seed", [11, 12])
def test_compiled_simulator_over_a_hostile_link(seed, build_cache):
    """3 FPGAs x 2 PEs (one Verilator build for both graphs), reordering and stalling links, tiny FIFOs."""
    report = run_flow(WCC, random_graph(30, 50, seed), fpgas=3, pes=2, backend="verilator", link=HOSTILE,
                      arch="gravf", local_bits=3, edges_per_pe=64, max_rounds=64, network_fifo_depth=1,
                      message_fifo_depth=1, cache_dir=build_cache, watchdog_cycles=20_000)
    assert report.status == "done", report.diagnosis
    check_run(report)
    graph, reference, links = report.prepared.graph, report.prepared.reference, report.readback.links
    assert [row.messages for row in report.rounds] == list(reference.messages_per_superstep)
    expected = expected_link_messages(WCC, graph, {}, report.plan.partition)
    assert (links["items"] == expected + reference.supersteps).all()
    assert (links["delivered"] == links["items"]).all()
    assert links["bound_cycles"].sum() > 0


def test_gravfm_run_on_two_fpgas_reports_link_figures(tmp_path):
    """``gravfm run --arch gravf --fpgas 2`` on the compiled simulator: verified, with link figures
    in the JSON that agree with the partition (one message per crossing edge) and the theory."""
    import json

    from gravfm.cli import main

    spec = "uniform:n=40,deg=3,seed=4"
    graph = BFS.prepare(load_graph(spec), BFS.params({}))
    params = BFS.params({"root": int(np.argmax(graph.out_degree()))})
    out = tmp_path / "run.json"
    status = main(["run", "bfs", "--edge-memory", "onchip", "--graph", spec, "--root", str(params["root"]), "--fpgas", "2", "--pes", "1",
                   "--arch", "gravf", "--cache", str(tmp_path / "cache"), "--quiet", "--json", str(out)])
    report = json.loads(out.read_text())
    assert status == 0 and report["verified"] is True and report["arch"] == "gravf"
    assert report["messages"] > 20
    links = report["links"]
    parts = partition(graph, 2, 1, method="greedy")
    expected = expected_link_messages(BFS, graph, params, parts)
    assert [row["items"] for row in links["per_link"]] == list(expected.ravel() + report["supersteps"])
    assert links["barriers"] == 2 * report["supersteps"]
    assert links["bytes_per_edge"] == pytest.approx(links["bits"] / 8 / report["messages"])
    assert links["bytes_per_edge_theory"] == pytest.approx(
        links["item_bits"] / 8 * crossing_fraction(graph, parts.fpga_of_vertex))


def test_a_stalled_run_names_the_link_it_waits_on():
    """The run's stall diagnosis (gravfm.sim.readback) takes each FPGA's round from its PEs'
    counters and adds the link lines after the PE lines."""
    from types import SimpleNamespace

    from gravfm.hw.protocol import COUNTER_NAMES
    from gravfm.sim.readback import diagnose_stall

    config = SystemConfig.of(algorithm=WCC, fpgas=2, pes_per_fpga=2, local_bits=2, edges_per_pe=8, arch="gravf")
    rounds = {0: 3, 1: 4, 2: 3, 3: 3}          # every FPGA waits in round 3 for round 2's messages
    watch = {f"pe{g}.{name}": (rounds[g] if name == "supersteps" else 5) for g in rounds for name in COUNTER_NAMES}
    outcome = SimpleNamespace(watch=watch, watch_before=dict(watch), scan_gap_cycles=4096, superstep=3)
    links = {"items": np.array([[9], [7]]), "delivered": np.array([[9], [6]]),
             "barriers_sent": np.array([[3], [3]]), "barriers_delivered": np.array([[3], [2]])}
    lines = diagnose_stall(outcome, config, links)
    assert lines[0].startswith("no progress") and len(lines) == 1 + 4 + 1
    assert lines[-1] == ("link 1->0: 7 items sent, 6 received, 3 barriers sent, 2 received; 1 in flight; "
                         "barrier of round 2 from fpga 1 missing (sent, not delivered)")
    drained = {**links, "delivered": links["items"], "barriers_delivered": np.array([[3], [3]])}
    assert diagnose_stall(outcome, config, drained)[-1].startswith("every link is drained")
