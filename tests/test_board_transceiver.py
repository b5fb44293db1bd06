"""Board links on Xilinx transceivers: a rack too large for a board's lanes refused in one line, the
lane's figures (plain Python), and the generated Vivado projects holding the transceivers, their
pins and their clock constraints (board extra; LiteX elaboration only, no Vivado)."""

import importlib.util
import re

import pytest

from conftest import cli_error, generate_board_soc
from gravfm.board.boards import TransceiverLanes, get_board
from gravfm.board.lanes import GT_LANE, lane_cycles_per_frame, lane_link, words_per_sys_cycle
from gravfm.errors import ConfigError

needs_extra = pytest.mark.skipif(importlib.util.find_spec("litex") is None,
                                 reason="the board extra is not installed (make test-board installs it)")


def test_a_board_takes_a_rack_of_one_lane_per_peer():
    kcu105, u280 = get_board("kcu105"), get_board("alveo-u280")
    assert kcu105.links_for(1) is None
    assert isinstance(kcu105.links_for(3), TransceiverLanes) and kcu105.link.family == "gth"
    assert isinstance(u280.links_for(4), TransceiverLanes) and u280.link.family == "gty"
    assert [lane.name for lane in u280.link.lanes[:3]] == ["QSFP28 cage 0 lane 0", "QSFP28 cage 1 lane 0",
                                                          "QSFP28 cage 0 lane 1"]
    with pytest.raises(ConfigError) as refused:
        kcu105.links_for(4)
    assert str(refused.value) == ("kcu105: 4 FPGAs need 3 links per board, it has 2 transceiver lanes "
                                  "(SFP+ cage 0, SFP+ cage 1): at most 3 FPGAs")


@needs_extra
def test_more_fpgas_than_the_lanes_allow_are_refused_before_any_work(capsys, tmp_path):
    message = cli_error(capsys, "board", "build", "wcc", "--board", "kcu105", "--fpgas", "4", "--out", tmp_path)
    assert message == ("gravfm: error: kcu105: 4 FPGAs need 3 links per board, it has 2 transceiver lanes "
                       "(SFP+ cage 0, SFP+ cage 1): at most 3 FPGAs")
    assert not any(tmp_path.iterdir())


def test_a_lane_moves_a_word_per_sys_cycle_and_plans_the_check_for_it():
    """6.25 Gb/s on a 40-bit datapath is a word per 156.25 MHz cycle; the 125 MHz sys clock sets the
    rate. A 54-bit frame (28-bit item and the check's 26) is 2 words and 2 of the packet: 4 sys
    cycles, 6.4 cycles of a 200 MHz design."""
    assert GT_LANE.lane_clock_hz == 156.25e6
    assert words_per_sys_cycle(125e6, rate=GT_LANE) == 1.0 and words_per_sys_cycle(312.5e6, rate=GT_LANE) == 0.5
    assert lane_cycles_per_frame(54, sys_hz=125e6, design_hz=200e6, rate=GT_LANE) == 6.4
    link = lane_link(28, sys_hz=125e6, design_hz=200e6, rate=GT_LANE)
    assert link.check == "retransmit" and link.link_check(item_bits=28).overhead_bits == 26
    assert link.bits_per_cycle == (28 + 26) / 6.4
    # The frame, 64 sys cycles of FIFOs (102.4 design cycles), 64 lane cycles (81.92).
    assert link.latency_cycles == 191


@needs_extra
@pytest.mark.board
@pytest.mark.board_ci
def test_the_kcu105_pair_project_holds_a_gth_lane_on_sfp0_and_its_constraints(monkeypatch, tmp_path):
    verilog, xdc, figures = generate_board_soc(monkeypatch, tmp_path, "--board", "kcu105", "--fpgas", "2")
    assert len(re.findall(r"^GTHE3_CHANNEL #\(", verilog, re.M)) == 1
    assert re.search(r"^IBUFDS_GTE3 \w+\(\s*// Inputs.\s*\.CEB \(1'd0\),\s*\.I\s+\(si570_refclk0_p\)", verilog, re.M)
    assert ".CPLL_FBDIV                   (3'd5)" in verilog and ".RX_DATA_WIDTH                (6'd40)" in verilog
    assert ".RX_CLK25_DIV                 (3'd7)" in verilog   # 156.25 MHz / 7 <= 25 MHz
    for pin, port in (("U4", "gravfm_lane_tx0_p"), ("T2", "gravfm_lane_rx0_p"), ("P6", "si570_refclk0_p"),
                      ("AL8", "sfp_tx_disable_n0")):
        assert f"set_property LOC {pin} [get_ports {{{port}}}]" in xdc, port
    assert "create_clock -name si570_refclk0_p -period 6.4 [get_ports si570_refclk0_p]" in xdc
    for clock in ("link0_tx_clk", "link0_rx_clk"):
        assert f"create_clock -name {clock} -period 6.4 [get_nets {clock}]" in xdc
        assert (f"set_clock_groups -group [get_clocks -include_generated_clocks -of [get_nets sys_clk]] "
                f"-group [get_clocks -include_generated_clocks -of [get_nets {clock}]] -asynchronous") in xdc
    assert figures["links"] == [{"link": 0, "lane": "SFP+ cage 0", "tx": "U4/U3", "rx": "T2/T1",
                                 "refclk": "si570_refclk:0 (P6/P5, 156.25 MHz)"}]
    phy = figures["link_phy"]
    assert (phy["line_rate_gbps"], phy["lanes"], phy["words_per_sys_cycle"], phy["link_gbps"]) == (6.25, 1, 1.0, 4.0)


@needs_extra
@pytest.mark.board
def test_the_u280_rack_project_holds_three_gty_lanes_on_both_cages(monkeypatch, tmp_path):
    verilog, xdc, figures = generate_board_soc(monkeypatch, tmp_path, "--board", "alveo-u280", "--fpgas", "4")
    assert len(re.findall(r"^GTYE4_CHANNEL #\(", verilog, re.M)) == 3
    assert [row["lane"] for row in figures["links"]] == ["QSFP28 cage 0 lane 0", "QSFP28 cage 1 lane 0",
                                                         "QSFP28 cage 0 lane 1"]
    for cage, pin in ((0, "T42"), (1, "P42")):
        assert f"set_property LOC {pin} [get_ports {{qsfp_156mhz_clock{cage}_p}}]" in xdc
        assert f"create_clock -name qsfp_156mhz_clock{cage}_p -period 6.4" in xdc
    for k, pin in enumerate(("L48", "G48", "L44")):   # the platform's txp of each lane
        assert f"set_property LOC {pin} [get_ports {{gravfm_lane_tx{k}_p}}]" in xdc
        assert f"-of [get_nets link{k}_rx_clk]] -asynchronous" in xdc
    assert figures["link_phy"]["lanes"] == 3 and figures["link_phy"]["link_gbps"] == 4.8
