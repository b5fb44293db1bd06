"""Cost of a generated FPGA top: memory sizing (fast) and one full `gravfm synth` run (slow)."""

import json
from pathlib import Path

import pytest

from gravfm.algorithms import get_algorithm
from gravfm.cli import main
from gravfm.synth.system_report import GraphCapacity, _pes_that_fit, blocks_for, pe_memory_bits
from gravfm.synth.targets import get_target

WCC = get_algorithm("wcc")


def test_pe_memories_follow_the_graph_capacity():
    capacity = GraphCapacity(vertices=1 << 12, edges=1 << 16)
    one = pe_memory_bits(WCC, fpgas=1, pes=1, capacity=capacity)
    four = pe_memory_bits(WCC, fpgas=1, pes=4, capacity=capacity)
    assert one["vertex_state"][0] == 1 << 12 and four["vertex_state"][0] == 1 << 10
    assert one["edge_array"][0] == 1 << 16 and four["edge_array"][0] == 1 << 14
    # The GraVF-M index holds every vertex of the graph in every PE.
    assert four["edge_index"][0] == 4 * (1 << 10)


def test_blocks_round_up():
    assert blocks_for(1024, 18, 18 * 1024) == 1
    assert blocks_for(1025, 18, 18 * 1024) == 2
    assert blocks_for(0, 18, 18 * 1024) == 0


def test_pes_that_fit_is_limited_by_the_scarcer_resource():
    device = get_target("xcu")
    small = GraphCapacity(vertices=1 << 10, edges=1 << 12)
    by_luts = _pes_that_fit(WCC, device, luts_per_pe=device.luts / 10, capacity=small, offchip_edges=True)
    assert by_luts["pes_fit"] == 10 and by_luts["limited_by"] == "luts"
    large = GraphCapacity(vertices=1 << 16, edges=1 << 20)
    by_bram = _pes_that_fit(WCC, device, luts_per_pe=100, capacity=large, offchip_edges=False)
    assert by_bram["limited_by"] == "bram"
    assert by_bram["pes_fit"] >= 1
    assert by_bram["pes_fit"] * by_bram["bram_blocks_per_pe"] <= device.bram_blocks


def test_a_device_too_small_for_one_pe_says_what_one_pe_needs():
    device = get_target("ecp5-85")
    huge = GraphCapacity(vertices=1 << 16, edges=1 << 20)
    fit = _pes_that_fit(WCC, device, luts_per_pe=100, capacity=huge, offchip_edges=False)
    assert fit["pes_fit"] == 0 and fit["limited_by"] == "bram"
    assert fit["bram_blocks_per_pe"] > device.bram_blocks


@pytest.mark.slow
def test_gravfm_synth_reports_fmax_and_resources(tmp_path):
    out = tmp_path / "s.json"
    assert main(["synth", "wcc", "--pes", "1", "--target", "ecp5-85", "--vertices-per-pe", "64",
                 "--edges-per-pe", "512", "--seed", "3", "--workdir", str(tmp_path), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["fpga"]["luts"] > 100 and report["fpga"]["flip_flops"] > 100
    assert 10 < report["fpga"]["fmax_mhz"] < 500
    assert report["fpga"]["pnr_seed"] == 3
    assert report["fits"]["xcu"]["pes_fit"] >= 1


def test_fpgas_synthesises_one_fpga_of_a_multi_fpga_system(tmp_path, monkeypatch):
    # The tools are stand-ins: this checks which top reaches Yosys, not the tools.
    from gravfm.synth import report as synth_report

    def fake_tool(name, args, *, workdir, log_name, deep_stack=False):
        (workdir / "fpga_top.stat.json").write_text(json.dumps({"design": {"num_cells_by_type": {"LUT6": 800}}}))

    monkeypatch.setattr(synth_report, "run_tool", fake_tool)
    out = tmp_path / "s.json"
    assert main(["synth", "wcc", "--pes", "4", "--fpgas", "2", "--target", "xcu", "--vertices-per-pe", "32",
                 "--edges-per-pe", "64", "--workdir", str(tmp_path), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["fpgas"] == 2 and report["build"]["link_fifo_depth"] == 1024  # 8 PEs in the system
    # Which RTL the figures describe: this checkout's revision, stamped by the CLI.
    from gravfm.provenance import git_state
    assert report["provenance"]["git_revision"] == git_state(Path(__file__).parent.parent)["git_revision"]
    verilog = (tmp_path / "wcc-4pe-fpga0of2-xcu" / "fpga_top.v").read_text()
    assert "link_out" in verilog and "link_in" in verilog  # FPGA 0's link ends, not a whole system
    assert "fpga1" not in verilog
    # The graph is spread over both FPGAs: each PE holds less of it than on one FPGA of 4 PEs.
    single = pe_memory_bits(WCC, fpgas=1, pes=4, capacity=GraphCapacity(1 << 16, 1 << 20))
    assert report["capacity"]["pe_memories_bits"]["vertex_state"] < single["vertex_state"][0] * single["vertex_state"][1]


def test_fpgas_must_be_positive(capsys):
    assert main(["synth", "wcc", "--fpgas", "0"]) != 0
    assert "--fpgas must be at least 1, not 0" in capsys.readouterr().err


def test_arch_chooses_the_top_synthesised(tmp_path, monkeypatch):
    # The tools are stand-ins: this checks which top reaches Yosys (the hybrid's message network).
    from gravfm.synth import report as synth_report

    stacks = []

    def fake_tool(name, args, *, workdir, log_name, deep_stack=False):
        stacks.append(deep_stack)
        (workdir / "fpga_top.stat.json").write_text(json.dumps({"design": {"num_cells_by_type": {
            "LUT6": 800, "URAM288": 3}}}))

    monkeypatch.setattr(synth_report, "run_tool", fake_tool)
    out = tmp_path / "s.json"
    assert main(["synth", "wcc", "--arch", "hybrid", "--pes", "4", "--target", "u280", "--vertices-per-pe", "32",
                 "--edges-per-pe", "64", "--workdir", str(tmp_path), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["arch"] == "hybrid" and report["fpga"]["uram_blocks"] == 3
    verilog = (tmp_path / "wcc-hybrid-4pe-u280" / "fpga_top.v").read_text()
    assert "updates_in_buffer" in verilog  # the hybrid core's intake
    assert stacks == [True]  # a hierarchical flow: Yosys with the deeper WebAssembly stack


def test_an_unknown_arch_is_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["synth", "wcc", "--arch", "gravg"])
    assert stop.value.code == 2 and "--arch: invalid choice: 'gravg'" in capsys.readouterr().err
