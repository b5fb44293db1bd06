"""Board links on the ECP5 SERDES (the ECPIX-5's SATA connector): the link kind chosen with
``--link``, a rack too large for its one lane refused in one line, the lane's figures (plain
Python), its word assembly at every symbol offset (Migen's simulator), and the generated pair SoC
holding the DCU, its reference clock and its pins (board extra; LiteX elaboration only)."""

import importlib.util
import random
import re

import pytest

from conftest import cli_error, generate_board_soc
from gravfm.board.boards import DcuLane, SerwbPins, get_board
from gravfm.board.lanes import ECP5_LANE, lane_cycles_per_frame, lane_link, words_per_sys_cycle
from gravfm.errors import ConfigError

needs_extra = pytest.mark.skipif(importlib.util.find_spec("litex") is None,
                                 reason="the board extra is not installed (make test-board installs it)")

TOO_MANY = ("ecpix5: --link sata joins 2 FPGAs, not 3: the board has one SATA connector lane (DCU1 channel 0); "
            "3 FPGAs need 2 links per board: use --link pmod")


def test_the_ecpix5_links_on_pmod_by_default_and_on_sata_when_asked():
    ecpix5 = get_board("ecpix5")
    assert isinstance(ecpix5.links_for(4), SerwbPins) and ecpix5.links_for(2, "pmod") is ecpix5.links_for(2)
    sata = ecpix5.links_for(2, "sata")
    assert isinstance(sata, DcuLane) and (sata.dual, sata.channel) == (1, 0)
    assert ecpix5.links_for(1, "sata") is None
    with pytest.raises(ConfigError) as refused:
        ecpix5.links_for(3, "sata")
    assert str(refused.value) == TOO_MANY
    with pytest.raises(ConfigError, match=r"^ecpix5 has no link 'sfp' \(its links: pmod: SERWB over pmod0's pins; "
                                          r"sata: ECP5 SERDES \(DCU1 channel 0\) on the SATA connector, 2 FPGAs\)$"):
        ecpix5.links_for(2, "sfp")


@needs_extra
@pytest.mark.parametrize("fpgas", [3, 4])
def test_a_sata_rack_of_more_than_two_is_refused_before_any_work(capsys, tmp_path, fpgas):
    message = cli_error(capsys, "board", "build", "wcc", "--board", "ecpix5", "--fpgas", fpgas, "--link", "sata",
                        "--out", tmp_path)
    assert message == "gravfm: error: " + TOO_MANY.replace("3", str(fpgas)).replace("need 2", f"need {fpgas - 1}")
    assert not any(tmp_path.iterdir())


@needs_extra
def test_a_link_kind_without_a_rack_or_unknown_to_the_board_is_refused(capsys, tmp_path):
    alone = cli_error(capsys, "board", "build", "wcc", "--board", "ecpix5", "--link", "sata", "--out", tmp_path)
    assert alone == "gravfm: error: --link sata goes with --fpgas 2 or more (one FPGA has no links)"
    unknown = cli_error(capsys, "board", "build", "wcc", "--board", "kcu105", "--fpgas", "2", "--link", "sata",
                        "--out", tmp_path)
    assert unknown.startswith("gravfm: error: kcu105 has no link 'sata' (its links: sfp: GTH transceivers")
    assert not any(tmp_path.iterdir())


def test_the_ecp5_lane_moves_five_words_in_six_sys_cycles_and_plans_the_check_for_it():
    """2.5 Gb/s on a 20-bit datapath: 125 MHz lane cycles, a word every other one (62.5 M words/s),
    slower than the 75 MHz sys clock. A 52-bit frame (28-bit item and the check's 24) is 2 words
    and 2 of the packet: 4.8 sys (= design) cycles."""
    assert (ECP5_LANE.lane_clock_hz, ECP5_LANE.word_rate_hz) == (125e6, 62.5e6)
    assert words_per_sys_cycle(75e6, rate=ECP5_LANE) == pytest.approx(5 / 6)
    assert lane_cycles_per_frame(52, sys_hz=75e6, design_hz=75e6, rate=ECP5_LANE) == pytest.approx(4.8)
    link = lane_link(28, sys_hz=75e6, design_hz=75e6, rate=ECP5_LANE)
    assert link.check == "retransmit" and link.link_check(item_bits=28).overhead_bits == 24
    assert link.bits_per_cycle == pytest.approx(52 / 4.8)
    # The frame, 64 sys cycles of FIFOs, 64 lane cycles (38.4 design cycles).
    assert link.latency_cycles == 108


def _words_through_channel(words, offset):
    """``words`` ((data, ctrl) pairs) through :class:`WordsToPairs`, a channel that delays the
    symbol stream by ``offset`` symbols, and :class:`PairsToWords`; returns the words received
    while aligned."""
    from migen import Module
    from migen.sim import run_simulation

    from gravfm.board.ecp5_serdes import PairsToWords, WordsToPairs

    class Channel(Module):
        def __init__(self):
            self.submodules.tx, self.submodules.rx = WordsToPairs(), PairsToWords()

    dut, received = Channel(), []

    def bench():
        pending, symbols = list(words), [(0x4A, 0)] * offset   # D10.2 before the first word: no comma
        yield dut.tx.word.data.eq(pending[0][0])
        yield dut.tx.word.ctrl.eq(pending[0][1])
        yield
        for cycle in range(2 * len(words) + 8):
            data, ctrl = (yield dut.tx.pairs.data), (yield dut.tx.pairs.ctrl)
            symbols += [(data & 0xFF, ctrl & 1), (data >> 8, ctrl >> 1)]
            if (yield dut.tx.word.ready) and len(pending) > 1:
                pending.pop(0)
                yield dut.tx.word.data.eq(pending[0][0])
                yield dut.tx.word.ctrl.eq(pending[0][1])
            (d0, k0), (d1, k1) = symbols[2 * cycle], symbols[2 * cycle + 1]
            yield dut.rx.pairs.data.eq(d0 | d1 << 8)
            yield dut.rx.pairs.ctrl.eq(k0 | k1 << 1)
            if (yield dut.rx.word.valid) and (yield dut.rx.aligned):
                received.append(((yield dut.rx.word.data), (yield dut.rx.word.ctrl)))
            yield

    run_simulation(dut, bench())
    return received


@needs_extra
@pytest.mark.parametrize("offset", range(4))
def test_words_arrive_whole_after_the_first_idle_at_any_symbol_offset(offset):
    """Whichever of a word's four symbols the receiver's first cycle starts at, every word after
    the first idle word (K28.5 first) comes out whole and in order; a later idle keeps it so."""
    from gravfm.board.lane_phy import IDLE

    rng = random.Random(offset)
    idle = (IDLE | 1 << 8, 0b0001)
    data = [(rng.getrandbits(32), 0) for _ in range(24)]
    sent = [idle, idle, *data[:16], idle, *data[16:], idle, idle]
    received = _words_through_channel(sent, offset)
    # From the first idle word seen (the first, or the second if the first taught the alignment).
    assert received[:received.index(data[-1]) + 1] in (sent[:-2], sent[1:-2])
    assert received[-1] == idle


@needs_extra
def test_the_phy_keeps_the_receivers_8b10b_decoders():
    """LiteICLink 2025.4's SerDesECP5 leaves its decoders out of the design (a plain list): the
    first SATA pair build lost its whole receive path to synthesis. The PHY adds them, once."""
    from types import SimpleNamespace

    from migen import Signal

    from gravfm.board.ecp5_serdes import EcpSerdesPhy

    platform = SimpleNamespace(add_period_constraint=lambda *args: None, add_false_path_constraints=lambda *args: None)
    pads = [SimpleNamespace(p=Signal(), n=Signal()) for _ in range(2)]
    phy = EcpSerdesPhy(refclk=Signal(), tx_pads=pads[0], rx_pads=pads[1], dual=1, channel=0, platform=platform,
                       sys_clk=Signal(), name="link0")
    submodules = [module for _, module in phy.serdes._submodules]
    assert all(sum(module is decoder for module in submodules) == 1 for decoder in phy.serdes.decoders)
    assert len(phy.serdes.decoders) == 2


@needs_extra
@pytest.mark.board
def test_the_ecpix5_sata_pair_soc_holds_the_dcu_on_the_sata_pins(monkeypatch, tmp_path):
    verilog, lpf, figures = generate_board_soc(monkeypatch, tmp_path, "--board", "ecpix5", "--fpgas", "2",
                                               "--link", "sata")
    assert len(re.findall(r"^DCUA #\(", verilog, re.M)) == 1 and len(re.findall(r"^EXTREFB #\(", verilog, re.M)) == 1
    assert re.search(r'^\(\* CHAN = "CH0", LOC = "DCU1" \*\)\n(//.*\n)*DCUA #\(', verilog, re.M)
    assert re.search(r'^\(\* LOC = "EXTREF1" \*\)\n(//.*\n)*EXTREFB #\(', verilog, re.M)
    for port, net in (("CH0_HDOUTP", "gravfm_dcu_tx0_p"), ("CH0_HDINP", "gravfm_dcu_rx0_p"),
                      ("D_REFCLKI", "gravfm_dcu_refclk"), ("CH0_RX_REFCLK", "gravfm_dcu_refclk"),
                      ("CH0_FF_TXI_CLK", "link0_tx_clk"), ("CH0_FF_RXI_CLK", "link0_rx_clk"),
                      ("REFCLKP", "gravfm_dcu_refclk0_p"), ("REFCLKO", "gravfm_dcu_refclk")):
        assert re.search(rf"^\s*\.{port}\s+\({net}\)", verilog, re.M), port
    assert '.D_REFCK_MODE        ("0b100")' in verilog   # x25: 100 MHz to 2.5 GHz
    for k in range(2):   # the receiver's decoders are logic, not a register left at its reset value
        assert re.search(rf"^\s*\w*serdesecp5_decoder{k}_k <= 1'd1;", verilog, re.M), k
    assert '.CH0_PROTOCOL        ("10BSER")' in verilog and '.CH0_ENABLE_CG_ALIGN ("0b1")' in verilog
    for port, pin in (("gravfm_dcu_tx0_p", "AD16"), ("gravfm_dcu_rx0_p", "AF15"), ("gravfm_dcu_refclk0_p", "AF12")):
        assert f'LOCATE COMP "{port}" SITE "{pin}";' in lpf and f'IOBUF PORT "{port}"' not in lpf
    for clock in ("link0_tx_clk", "link0_rx_clk"):
        assert f'FREQUENCY PORT "{clock}" 125.0 MHz;' in lpf
    assert "pmod0" not in "".join(line for line in lpf.splitlines() if "LOCATE" in line and "gravfm" in line)
    assert figures["link_kind"] == "sata"
    assert figures["links"] == [{"link": 0, "lane": "SATA connector (DCU1 channel 0)", "tx": "AD16/AD17",
                                 "rx": "AF15/AF16", "refclk": "EXTREF1 (AF12/AF13, 100 MHz)"}]
    phy = figures["link_phy"]
    assert (phy["line_rate_gbps"], phy["lane_clock_mhz"], phy["link_gbps"]) == (2.5, 125.0, 2.0)
    assert phy["words_per_sys_cycle"] == pytest.approx(5 / 6)
