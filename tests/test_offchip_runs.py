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


def _u280(tmp_path, channels=32, capacity="8192.0"):
    """The u280 platform (32 HBM pseudo-channels), or a copy of it with fewer channels or less memory."""
    from gravfm.model.platform import PLATFORM_DIR

    path = PLATFORM_DIR / "u280.toml"
    if (channels, capacity) == (32, "8192.0"):
        return str(path)
    copy = tmp_path / f"u280_{channels}.toml"
    copy.write_text(path.read_text().replace("count = 32", f"count = {channels}")
                    .replace("capacity_mib = 8192.0", f"capacity_mib = {capacity}"))
    return str(copy)


@pytest.mark.parametrize("arch", ["gravfm", pytest.param("hybrid", marks=pytest.mark.slow)])
def test_hbm_runs_each_pe_in_its_own_channel(arch, build_cache):
    """On u280 (32 pseudo-channels) 4 PEs (or scatter units) read their edges each from its own
    channel, verified; the busiest channel drew at most one channel's bandwidth."""
    report = check_run(offchip("wcc", fpgas=1, pes=4, arch=arch, build_cache=build_cache, platform=_u280(None)))
    memory = report.to_dict()["memory"]
    assert memory["channels"] == 32 and memory["pes_per_channel"] == 1
    assert memory["words"] / 4 / 2 < memory["busiest_channel_words"] < memory["words"]   # spread over the 4
    assert 0 < memory["busiest_channel_gib_s"] <= 6.69 * 1.01


def test_hbm_bandwidth_is_per_channel(tmp_path, build_cache):
    """Measured, memory-bound at 0.5 GiB/s a channel: 4 PEs in 4 channels of u280 read twice as
    fast as in 2 channels of 2 PEs each, whose busiest channel runs at its bandwidth."""
    rates = {}
    for channels in (32, 2):
        report = check_run(offchip("wcc", fpgas=1, pes=4, build_cache=build_cache, platform=_u280(tmp_path, channels),
                                   memory={"bandwidth_gib_s": 0.5 * channels}))
        memory = report.memory
        assert memory["channels"] == channels and memory["busiest_channel_gib_s"] <= 0.5 * 1.01
        rates[channels] = memory["gib_s"]
    assert memory["busiest_channel_gib_s"] > 0.45          # two PEs keep their channel busy
    assert 1.6 < rates[32] / rates[2] <= 2.05


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


def test_edges_beyond_a_memory_channel_are_refused_naming_the_figures(tmp_path, capsys):
    """2 PEs on 32 channels of 3,276 bytes each: the image's two channels fit the 0.1 MiB, one does not."""
    line = cli_error(capsys, "run", "wcc", "--graph", GRAPH, "--pes", "2", "--edge-memory", "offchip",
                     "--platform", _u280(tmp_path, capacity="0.1"), "--backend", "amaranth")
    assert "a memory channel's edges need" in line and "capacity_mib / [memory.channels] count is 3,276 bytes" in line
    needed = int(line.split("edges need ")[1].split(" bytes")[0].replace(",", ""))
    assert 3_276 < needed <= 0.1 * 2 ** 20 / 2


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
