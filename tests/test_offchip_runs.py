"""Off-chip edge memory end to end: the same answer and message counts as the reference on every
algorithm and both architectures, under memory faults, with a stuck memory named, and graphs that
do not fit refused before any work."""

import sys
from pathlib import Path

import pytest

from conftest import check_run, cli_error, run_flow

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY / "examples"))

#: Fixed capacities, so that the runs of one configuration share a build.
SIZES = dict(local_bits=8, edges_per_pe=256)
GRAPH = "rmat:scale=8,ef=8,seed=2"


def offchip(algorithm, *, fpgas, pes, build_cache, graph=GRAPH, backend="verilator", memory=None, **options):
    options.setdefault("params", {"root": 0} if algorithm in ("bfs", "sssp") else None)
    return run_flow(algorithm, graph, fpgas=fpgas, pes=pes, backend=backend, cache_dir=build_cache,
                    edge_memory="offchip", memory=memory or {}, **{**SIZES, **options})


@pytest.mark.parametrize("algorithm, arch, fpgas, pes", [
    ("wcc", "gravfm", 2, 2),
    ("bfs", "gravf", 2, 2),
    ("pagerank", "gravfm", 1, 2),
    ("sssp", "gravfm", 2, 1),
])
def test_offchip_runs_match_the_reference_per_superstep(algorithm, arch, fpgas, pes, build_cache):
    report = check_run(offchip(algorithm, fpgas=fpgas, pes=pes, arch=arch, build_cache=build_cache))
    memory = report.memory
    assert report.edge_memory == "offchip"
    # Bursts: a list of several words is one request; every request answered.
    assert 0 < memory["requests"] == memory["responses"] <= memory["words"]
    assert memory["bytes"] == 16 * memory["words"]
    assert memory["gib_s"] > 0 and memory["wait_cycles"] > 0     # 190 cycles of latency are felt
    assert report.to_dict()["memory"]["requests"] == memory["requests"]


@pytest.mark.parametrize("memory", [
    {"latency_jitter_cycles": 60, "banks": 1},
    {"reorder": True, "latency_jitter_cycles": 30, "bandwidth_gib_s": 0.5},
    {"latency_cycles": 1, "bank_depth": 1},
])
def test_offchip_is_exact_under_jitter_one_bank_reordering_and_low_bandwidth(memory, build_cache):
    check_run(offchip("wcc", fpgas=2, pes=2, build_cache=build_cache, memory=memory))


def test_one_request_in_flight_is_slow_but_exact(build_cache):
    one = check_run(offchip("bfs", fpgas=1, pes=2, build_cache=build_cache, memory={"requests_in_flight": 1}))
    many = check_run(offchip("bfs", fpgas=1, pes=2, build_cache=build_cache))
    assert one.cycles > 2 * many.cycles


def test_a_stuck_memory_stops_at_the_watchdog_naming_each_waiting_pe(build_cache):
    report = offchip("wcc", fpgas=2, pes=2, build_cache=build_cache, memory={"stuck": True},
                     watchdog_cycles=20000)
    assert report.status == "stalled" and not report.verified
    waits = [line for line in report.diagnosis if "off-chip memory request" in line]
    assert waits and all(line.startswith("PE ") and "0 of" in line for line in waits)


@pytest.mark.parametrize("arch", ["gravfm", "gravf"])
def test_amaranth_backend_serves_the_memory_too(arch):
    check_run(run_flow("bfs", "tiny:binary_tree", fpgas=2, pes=1, arch=arch, edge_memory="offchip",
                       params={"root": 0}, memory={"latency_cycles": 4, "reorder": True}))


def test_a_list_that_fits_its_index_word_costs_one_request():
    """The binary tree's lists (at most 3 edges of 8-bit slots) travel inline in their index
    words: one single-word request per update (BFS reaches each vertex once), no list request."""
    report = check_run(run_flow("bfs", "tiny:binary_tree", edge_memory="offchip", params={"root": 0},
                                memory={"latency_cycles": 4, "reorder": True}))
    updates = sum(report.prepared.reference.updates_per_superstep)
    assert updates == 15
    assert report.memory["requests"] == report.memory["words"] == updates


def test_the_model_is_told_the_words_the_layout_reads():
    """BFS on the binary tree activates every vertex once: the run reads exactly the words of one
    all-active pass, which the prediction's layout L_mem takes from the partition."""
    report = check_run(run_flow("bfs", "tiny:binary_tree", fpgas=2, edge_memory="offchip", params={"root": 0},
                                memory={"latency_cycles": 4}))
    details = report.prediction.details
    assert details["layout_words_source"] == "partition"
    assert sum(details["layout_words_per_pass"]) == report.memory["words"]


def test_a_user_algorithm_runs_off_chip():
    from hop_distance import HOP_DISTANCE

    check_run(run_flow(HOP_DISTANCE, "tiny:grid", pes=2, edge_memory="offchip", params={"root": 0},
                       memory={"latency_cycles": 3, "latency_jitter_cycles": 5}))


def _platform(tmp_path, replacements):
    from gravfm.model.platform import PLATFORM_DIR

    text = (PLATFORM_DIR / "ac510x4.toml").read_text()
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "small.toml"
    path.write_text(text)
    return path


def test_edges_beyond_the_platforms_memory_are_refused_naming_the_figure(tmp_path, capsys):
    platform = _platform(tmp_path, [("capacity_mib = 4096.0", "capacity_mib = 0.01")])
    line = cli_error(capsys, "run", "wcc", "--graph", "rmat:scale=10,ef=16,seed=1", "--platform", platform,
                     "--backend", "amaranth")
    assert "FPGA 0's edges need" in line and "[memory] capacity_mib is 0.01 (10,485 bytes)" in line
    needed = int(line.split("edges need ")[1].split(" bytes")[0].replace(",", ""))
    assert needed > 10_485                      # the figures do not contradict each other


def test_vertex_state_beyond_block_ram_is_refused_naming_the_figure(tmp_path, capsys):
    platform = _platform(tmp_path, [("block_ram_kib = 4860.0", "block_ram_kib = 0.5")])
    line = cli_error(capsys, "run", "wcc", "--graph", "rmat:scale=10,ef=16,seed=1", "--platform", platform,
                     "--backend", "amaranth")
    assert "vertex state of one FPGA needs" in line and "[fpga] block_ram_kib is 0.5" in line


@pytest.mark.parametrize("option, value, words", [
    ("--memory-fault", "sideways", "invalid choice"),
    ("--memory-bandwidth", "0", "must be positive"),
    ("--requests-in-flight", "0", ""),
    ("--edge-memory", "hbm", "invalid choice"),
])
def test_bad_memory_options_are_one_line(option, value, words, capsys):
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", option, value)
    assert option in line and words in line


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["gravfm", "gravf"])
@pytest.mark.parametrize("fpgas", [1, 2, 3, 4])
@pytest.mark.parametrize("algorithm", ["wcc", "bfs", "pagerank", "sssp"])
def test_offchip_everywhere(algorithm, fpgas, arch, build_cache):
    check_run(offchip(algorithm, fpgas=fpgas, pes=2, arch=arch, build_cache=build_cache,
                      memory={"latency_jitter_cycles": 40, "reorder": True}))
