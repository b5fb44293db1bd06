"""Bad input to the command line: one line naming the file, line or field, exit status 2, before
any work (issue 22 items 5-6, issue 24 item 3); and the file's own vertex ids on the command line
and in the report."""

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import cli_error

from gravfm.cli import build_parser, main
from gravfm.graph import load_graph
from gravfm.model.platform import PLATFORM_DIR

ROOT = Path(__file__).resolve().parents[1]
HOP = ROOT / "examples" / "hop_distance.py"
VERILOG_WCC = ROOT / "examples" / "verilog_wcc" / "wcc_verilog.py"
FAST = ["--backend", "amaranth", "--quiet", "--edge-memory", "onchip"]


def _run_json(capsys, tmp_path, *argv):
    """``gravfm run ARGV --json``: (exit status, the JSON figures)."""
    out = tmp_path / "run.json"
    status = main(["run", *map(str, argv), "--json", str(out)])
    capsys.readouterr()
    return status, json.loads(out.read_text())


# --- issue 22 item 5: user algorithms and kernels --------------------------------------------

def test_kernel_that_fails_to_elaborate_keeps_amaranths_did_you_mean(tmp_path, capsys):
    source = tmp_path / "typo.py"
    text = HOP.read_text()
    source.write_text(text.replace("i.message.distance, ", "i.message.distanse, "))
    line = 1 + text.split("\n").index(next(row for row in text.split("\n") if "i.message.distance, " in row))
    message = cli_error(capsys, "run", f"{source}:HOP_DISTANCE", "--graph", "tiny:grid", *FAST)
    assert message.startswith(f"gravfm: error: {source}:{line}: gather kernel of 'hop_distance': AttributeError")
    assert "'distanse'; did you mean one of: 'distance'?" in message


HANDWRITTEN = '''import dataclasses

from amaranth.hdl import Module
from amaranth.lib import wiring

from gravfm.algorithms import WCC
from gravfm.hw import gather_signature


class Gather(wiring.Component):
    def __init__(self, layouts):
        super().__init__(gather_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.o.payload.state.label.eq(self.i.payload.message.lable)
        return m


MINE = dataclasses.replace(WCC, name="mine", gather=Gather)
'''


def test_kernel_whose_elaborate_fails_is_named_at_its_line(tmp_path, capsys):
    source = tmp_path / "handwritten.py"
    source.write_text(HANDWRITTEN)
    message = cli_error(capsys, "run", f"{source}:MINE", "--graph", "tiny:grid", *FAST)
    assert message.startswith(f"gravfm: error: {source}:16: gather kernel of 'mine': AttributeError")
    assert message.endswith("'lable'; did you mean one of: 'label'?")


def test_algorithm_file_without_a_name_lists_its_algorithms(capsys):
    message = cli_error(capsys, "run", HOP, "--graph", "tiny:grid", *FAST)
    assert "FILE.py:NAME" in message and f"{HOP}:HOP_DISTANCE" in message


@pytest.mark.parametrize("body, line, what", [
    ("import numpy\nLABELS = {1: 2,\n", 2, "SyntaxError"),
    ("import numpy\n\n\ndef bad():\n    return {}['missing']\n\n\nX = bad()\n", 5, "KeyError: 'missing'"),
    ("import no_such_module_here\n", 1, "ModuleNotFoundError"),
])
def test_algorithm_file_that_does_not_import_is_named_at_its_line(tmp_path, capsys, body, line, what):
    source = tmp_path / "broken.py"
    source.write_text(body)
    message = cli_error(capsys, "run", f"{source}:X", "--graph", "tiny:grid", *FAST)
    assert message.startswith(f"gravfm: error: {source}:{line}: ") and what in message


def test_verilog_kernels_are_refused_by_the_amaranth_backend_at_once(capsys):
    started = time.perf_counter()
    message = cli_error(capsys, "run", f"{VERILOG_WCC}:WCC_VERILOG", "--graph", "tiny:grid", *FAST)
    assert "backend 'amaranth' cannot simulate kernels written in Verilog" in message
    assert "gather (wcc_gather)" in message and "--backend verilator" in message
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("algorithm", ["bfs", f"{HOP}:HOP_DISTANCE"])
def test_root_out_of_range_is_the_same_error_for_every_rooted_algorithm(capsys, algorithm):
    name = "bfs" if algorithm == "bfs" else "hop_distance"
    message = cli_error(capsys, "run", algorithm, "--graph", "tiny:grid", "--root", "99", *FAST)
    assert message == f"gravfm: error: {name}: root 99 is out of range for a graph of 16 vertices"


# --- issue 22 item 6: one CLI ---------------------------------------------------------------

def _options(*command):
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices
    for name in command:
        sub = sub[name]
        if len(command) > 1 and name == command[0]:
            sub = sub._subparsers._group_actions[0].choices
    return {option for action in sub._actions for option in action.option_strings}


def test_run_takes_the_cleaning_options_of_graph_info():
    cleaning = {"--keep-self-loops", "--keep-duplicates", "--undirected", "--relabel", "--input-format"}
    assert cleaning <= _options("graph", "info")
    assert cleaning <= _options("run") and cleaning <= _options("demo")
    assert {"--param", "--root"} <= _options("run")


def test_file_ids_on_the_command_line_and_in_the_report(tmp_path, capsys):
    """s7e16.graph numbers its vertices 1..128 with gaps; root 124 is the file's vertex 124."""
    graph = load_graph("s7e16.graph")
    assert graph.cleaning.relabelled and graph.num_vertices == 122 and graph.internal_id(124) is not None
    status, figures = _run_json(capsys, tmp_path, "bfs", "--graph", "s7e16.graph", "--root", "124", *FAST)
    assert status == 0 and figures["verified"]
    assert figures["params"] == {"root": 124}
    message = cli_error(capsys, "run", "bfs", "--graph", "s7e16.graph", "--root", "0", *FAST)
    assert "bfs: root 0 is not a vertex of the graph (the input's ids of its 122 vertices lie in 1..128)" in message


def test_run_and_graph_info_count_the_same_edges(tmp_path, capsys):
    """Same graph, same cleaning options: the same edge count (WCC then runs on its symmetrized form)."""
    for options in ([], ["--keep-duplicates", "--keep-self-loops"], ["--undirected"]):
        assert main(["graph", "info", "--graph", "s7e16.graph", *options, "--json", str(tmp_path / "info.json")]) == 0
        info = json.loads((tmp_path / "info.json").read_text())
        status, figures = _run_json(capsys, tmp_path, "wcc", "--graph", "s7e16.graph", *options, *FAST)
        assert status == 0 and figures["graph"]["input_edges"] == info["edges"]
        assert figures["graph"]["vertices"] == info["vertices"]


def test_one_spelling_of_the_partition_methods(tmp_path, capsys):
    status, figures = _run_json(capsys, tmp_path, "wcc", "--graph", "tiny:grid", "--pes", "2",
                                "--partition", "round_robin", *FAST)
    assert status == 0 and figures["partition"] == "round_robin"
    for old in ("roundrobin", "sortedgreedy"):
        assert "invalid choice" in cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--partition", old)
        assert "invalid choice" in cli_error(capsys, "partition", "--graph", "tiny:grid", "--method", old)


def test_generic_algorithm_parameters(tmp_path, capsys):
    status, figures = _run_json(capsys, tmp_path, "sssp", "--graph", "tiny:grid", "--param", "root=5",
                                "--param", "weight_seed=3", *FAST)
    assert status == 0 and figures["params"] == {"root": 5, "weight_seed": 3, "max_weight": 16}
    assert "has no parameter 'depth'" in cli_error(capsys, "run", "bfs", "--graph", "tiny:grid",
                                                   "--param", "depth=3", *FAST)
    assert "expected NAME=VALUE" in cli_error(capsys, "run", "bfs", "--graph", "tiny:grid", "--param", "root")
    assert "disagree" in cli_error(capsys, "run", "bfs", "--graph", "tiny:grid", "--param", "root=1",
                                   "--root", "2")


def test_model_takes_an_algorithm_file_and_its_layouts(tmp_path, capsys):
    out = tmp_path / "model.json"
    assert main(["model", "--algorithm", f"{HOP}:HOP_DISTANCE", "--graph", "tiny:grid", "--fpgas", "1",
                 "--pes", "1", "--supersteps", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    # vertex {distance: 8, visited: 1, active: 1}; update = message = {distance: 8}; vertex ids of
    # 1 PE bit + 4 local bits for 16 vertices, as the run's SystemConfig has them
    assert "hop_distance: m_vertex 10, m_update 13, m_message 18, m_edge 5 bits" in text
    assert json.loads(out.read_text())["supersteps"]["messages_per_superstep"][0] == 2  # root 0's two edges
    assert "FILE.py:NAME" in cli_error(capsys, "model", "--algorithm", HOP, "--graph", "tiny:grid")


def test_argument_errors_are_one_line(capsys):
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--pes", "many")
    assert message.startswith("gravfm run: error: argument --pes:")


# --- issue 24 item 3: inputs checked before work ---------------------------------------------

@pytest.mark.parametrize("spec", ["rmat:scale=40", "rmat:scale=27", "rmat:scale=16,ef=100000",
                                  "uniform:n=1000000,deg=100000"])
def test_generator_too_large_for_memory_is_refused_before_allocating(capsys, spec):
    message = cli_error(capsys, "graph", "info", "--graph", spec)
    assert "edges need about" in message and "available" in message


def test_generator_refused_under_an_address_space_cap():
    """``ulimit -v 1 GiB``: an RMAT graph of 16.8 million edges (about 1 GiB) is refused by the cap."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run([sys.executable, "-c", "import sys; from gravfm.cli import main; sys.exit(main())",
                           "graph", "info", "--graph", "rmat:scale=20"], capture_output=True, text=True, preexec_fn=cap,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "rmat:scale=20,ef=16" in done.stderr and "RLIMIT_AS" in done.stderr


def test_absurd_pes_fail_before_elaborating(capsys):
    started = time.perf_counter()
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--pes", "1000", *FAST)
    assert "holds at most 9 PEs per FPGA, 1000 asked (fpga.max_pes in" in message and "ac510x4.toml" in message
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("text", ["", "# a comment only\n% and another\n"])
def test_empty_graph_file_is_named(tmp_path, capsys, text):
    path = tmp_path / "nothing.txt"
    path.write_text(text)
    message = cli_error(capsys, "run", "wcc", "--graph", path, *FAST)
    assert message.startswith(f"gravfm: error: {path}: no edges")


@pytest.mark.parametrize("where, message", [
    ("missing/r.json", "folder"), (".", "is a directory"), ("/proc/r.json", "cannot create files in /proc"),
])
def test_json_path_checked_before_the_simulation(tmp_path, capsys, where, message):
    path = tmp_path / where if not where.startswith("/") else where
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--json", path, *FAST)
    assert line.startswith(f"gravfm: error: --json {path}: ") and message in line


def test_cache_path_checked_before_the_build(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--cache", blocker / "cache", "--quiet")
    assert line == f"gravfm: error: build cache {blocker / 'cache'}: {blocker} is not a folder"
    assert "cannot be created: /proc is not writable" in cli_error(capsys, "run", "wcc", "--graph", "tiny:grid",
                                                  "--cache", "/proc/gravfm-cache", "--quiet")


@pytest.mark.parametrize("option", ["--max-cycles", "--watchdog"])
@pytest.mark.parametrize("value", ["-5", "0"])
def test_cycle_limits_must_be_positive(capsys, option, value):
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", option, value)
    assert f"argument {option}: expected a positive integer, not {value}" in message


def _platform(tmp_path, old, new):
    path = tmp_path / "mine.toml"
    text = (PLATFORM_DIR / "ac510x4.toml").read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def test_graph_beyond_the_platform_memory_is_refused_as_the_model_says(tmp_path, capsys):
    platform = _platform(tmp_path, "capacity_mib = 4096.0", "capacity_mib = 0.00005")  # 419 bits
    assert main(["model", "--platform", str(platform), "--algorithm", "wcc", "--graph", "tiny:binary_tree",
                 "--fpgas", "1", "--pes", "1"]) == 0
    said = capsys.readouterr().out
    reason = "the graph does not fit: needs n >= |V| m_vertex / M = 2 FPGAs"  # 15 vertices x 33 bits
    assert "DOES NOT FIT" in said and reason in said
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:binary_tree", "--platform", platform, *FAST)
    assert reason in message and str(platform) in message


def test_platform_errors_name_the_file_and_the_field(tmp_path, capsys):
    platform = _platform(tmp_path, "max_pes = 9", "max_pes = 0")
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--platform", platform, *FAST)
    assert f"{platform} [fpga]" in message and "max_pes must be a positive integer, not 0" in message
