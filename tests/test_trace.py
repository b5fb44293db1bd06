"""Waveforms on demand (issue 22 item 8): ``gravfm run --trace FILE.vcd|.fst [--trace-window A:B]``.

A traced build is a cache entry of its own; an untraced build's sources and key do not change.
The dump is opened with a waveform reader (pywellen reads VCD and FST), and must hold the top's
ports and exactly the window's clock edges (cycle c at 10 c and 10 c + 5).
"""

import pytest
from conftest import cli_error

from gravfm.errors import ConfigError
from gravfm.flow import RunOptions, elaborate, plan, prepare, run
from gravfm.model.platform import load_platform
from gravfm.sim.trace import TIME_PER_CYCLE, TraceRequest, parse_window
from gravfm.sim.harness_inputs import HEADER_NAME
from gravfm.sim.verilator_build import HARNESS_FILES, check_fst_headers, simulator_sources

pywellen = pytest.importorskip("pywellen")

#: The smallest system: one FPGA, one PE, the tiny grid, edges on chip (one small traced build).
TINY = dict(algorithm="wcc", graph="tiny:grid", fpgas=1, pes=1, edge_memory="onchip")
PORTS = {"clk", "rst", "start", "done", "superstep", "host_wr_en", "host_rd_data"}


def _dump(path):
    """(names of the top scope's variables, [first, last] dump time, clk at the first two times)."""
    wave = pywellen.Waveform(str(path))
    top = next(iter(wave.scopes()))
    variables = {var.name: var for var in top.vars()}
    times = []
    wave.stream_time_steps(lambda time, *rest: times.append(time), None)
    clk = variables["clk"].signal
    return set(variables), times, [clk.value_at(times[0]), clk.value_at(times[1])]


def _top():
    prepared = prepare("wcc", "tiny:grid")
    return elaborate(plan(prepared, fpgas=1, pes=1), platform=load_platform("ac510x4"), kernel_check=False)


def test_an_untraced_build_keeps_its_sources_and_key_a_traced_one_is_apart():
    top = _top()
    plain, traced = simulator_sources(top), simulator_sources(top, trace=".vcd")
    assert simulator_sources(top, trace=None).key == plain.key
    # The harness files, with the two every model includes (gravfm.sim.harness_inputs.cpp_sources).
    assert set(plain.harness) == {*HARNESS_FILES, "named_fields.h", HEADER_NAME} and "trace" not in plain.header
    assert not any("trace" in flag for flag in plain.flags)
    assert "harness_trace.h" in traced.harness and "gravfm_traced_top" in traced.header
    assert traced.flags[-1] == "--trace" and simulator_sources(top, trace=".fst").flags[-1] == "--trace-fst"
    assert len({plain.key, traced.key, simulator_sources(top, trace=".fst").key}) == 3


def test_a_vcd_dump_holds_the_ports_and_exactly_the_window(tmp_path, build_cache):
    path = tmp_path / "run.vcd"
    stages = []
    # A short watchdog makes progress scans every 256 cycles: "simulating" comes with the first.
    report = run(RunOptions(**TINY, cache_dir=build_cache, trace=TraceRequest(path, parse_window("10:50")),
                            watchdog_cycles=1024), on_stage=lambda name, detail="": stages.append(name))
    assert report.verified and report.cycles > 50
    # The progress display's stages: the Verilator build, the load, then the simulation.
    assert stages == ["preparing", "generating", "building", "loading", "simulating", "verifying"]
    names, times, clk = _dump(path)
    assert PORTS <= names
    assert (times[0], times[-1]) == (10 * TIME_PER_CYCLE, 50 * TIME_PER_CYCLE + TIME_PER_CYCLE // 2)
    assert len(times) == 2 * (50 - 10 + 1) and clk == [1, 0]  # a rising then a falling edge per cycle


@pytest.mark.slow  # a second traced build (FST), about a minute
def test_an_fst_dump_of_the_whole_run(tmp_path, build_cache):
    try:
        check_fst_headers()
    except ConfigError as error:
        pytest.skip(str(error))
    path = tmp_path / "run.fst"
    report = run(RunOptions(**TINY, cache_dir=build_cache, trace=TraceRequest(path)))
    assert report.verified
    names, times, clk = _dump(path)
    assert PORTS <= names and clk == [1, 0]
    # From cycle 1 (the edge that samples start) past `done` (the host then reads the results).
    assert times[0] == TIME_PER_CYCLE and times[-1] > report.cycles * TIME_PER_CYCLE


@pytest.mark.parametrize("argv, words", [
    (["--trace", "{tmp}/run.txt"], "unknown waveform format '.txt'"),
    (["--trace", "{tmp}/no/run.vcd"], "does not exist"),
    (["--trace", "{tmp}"], "is a directory"),
    (["--trace", "{tmp}/run.vcd", "--trace-window", "50:10"], "--trace-window '50:10'"),
    (["--trace", "{tmp}/run.vcd", "--trace-window", "a:9"], "--trace-window 'a:9'"),
    (["--trace", "{tmp}/run.vcd", "--trace-window", "12"], "--trace-window '12'"),
    (["--trace-window", "1:2"], "--trace-window needs --trace"),
    (["--trace", "{tmp}/run.vcd", "--backend", "amaranth"], "--trace: waveforms are dumped by the compiled"),
])
def test_bad_trace_options_are_one_line_and_exit_2(tmp_path, capsys, argv, words):
    argv = [arg.format(tmp=tmp_path) for arg in argv]
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--edge-memory", "onchip", *argv)
    assert words in line


def test_trace_paths_per_fpga_and_windows():
    request = TraceRequest("out/run.fst", (5, None))
    assert [str(p) for p in request.paths(2)] == ["out/run-fpga0.fst", "out/run-fpga1.fst"]
    assert request.environment(1)["GRAVFM_TRACE_WINDOW"] == "5 -1"
    assert parse_window("7:") == (7, None) and parse_window(":9") == (0, 9)
