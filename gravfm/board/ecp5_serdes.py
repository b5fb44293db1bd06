"""Board links on the ECP5-5G SERDES: one channel of a DCU (LiteICLink's ``SerDesECP5``) behind the
interface of :class:`~gravfm.board.link.SerwbPhy`, so that a :class:`~gravfm.board.link.LinkPort`
carries the same packets as over SERWB or a Xilinx lane. On the ECPIX-5: the SATA connector, DCU1
channel 0, one lane, so two boards (figures: :data:`gravfm.board.lanes.ECP5_LANE`).

The words, idle words, crossings, ``ready`` and ``error`` are every lane PHY's
(:class:`gravfm.board.lane_phy.LanePhy`); what is the ECP5's:

- **Clocks**: the DCU's TX PLL multiplies the 100 MHz on the DCU's own reference-clock input by 25:
  2.5 Gb/s (``EXTREFB`` at ``EXTREF1``, the ECPIX-5's SERDES reference: LiteICLink's ECPIX-5 bench
  uses it at this rate; LiteSATA's ECPIX-5 bench calls it the on-board 100 MHz EXTREF, and makes
  its SATA rates from a fabric PLL only because x25 of 100 MHz gives neither 1.5 nor 3 Gb/s). The
  CDR takes the same reference. With a 20-bit datapath (two symbols) the TX clock (``FF_TX_PCLK``)
  and the recovered RX clock run at 125 MHz; both are constrained, asynchronous to ``sys``.
- **Coding and alignment**: LiteICLink's 8b10b encoder and decoders in the fabric (the DCU's own
  are bypassed) and the DCU's comma aligner (K28.5), which puts the symbol boundaries right. Which
  two symbols arrive together, and which two pairs make a word, the fabric decides
  (:class:`PairsToWords`): after each K28.5, the word starts at it. The receiver counts
  as aligned from the first K28.5 after the DCU's bring-up (CDR locked, no loss of signal).
- **Rate**: a word every other lane cycle, 62.5 M words/s; ``sys`` (75 MHz) fills the TX
  crossing faster, so the TX holds ``sink`` back (``ready`` low) while the crossing is full.
- **Restart**: ``restart`` starts LiteICLink's DCU bring-up over (resets, TX PLL lock, CDR lock);
  the peer sees its signal go and comes back with it.
"""

import importlib
from functools import partial

from litex.build.generic_platform import Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from liteiclink.serdes.serdes_ecp5 import SerDesECP5, SerDesECP5PLL
from migen import Cat, ClockDomainsRenamer, If, Instance, Mux, Signal

from .lane_phy import BRING_UP_TIMEOUT_CYCLES, IDLE, LanePhy, subsignal_pins, word_description
from .lanes import ECP5_LANE

__all__ = ["EcpSerdesPhy", "WordsToPairs", "PairsToWords", "dcu_phys", "dcu_rows"]

#: An 8b10b symbol as the fabric handles it: 8 data bits and the K flag above them.
SYMBOL_BITS = 9
#: The comma of an idle word with its K flag, as a symbol.
COMMA = IDLE | (1 << 8)


class EcpSerdesPhy(LanePhy):
    """One ECP5 DCU channel with the interface of :class:`~gravfm.board.link.SerwbPhy` (module
    docstring; ports: :class:`~gravfm.board.lane_phy.LanePhy`).

    Parameters
    ----------
    refclk : Signal
        The DCU's reference clock (from its ``EXTREFB``).
    tx_pads, rx_pads : records with ``p``, ``n``
        The channel's pins (dedicated: no I/O buffer, no I/O standard).
    dual, channel : int
        The DCU and its channel.
    platform, sys_clk, name
        Take the lane clocks' constraints, the ``sys`` clock, the prefix of the lane's clock
        domains (``{name}_tx``, ``{name}_rx``).
    """

    def __init__(self, *, refclk, tx_pads, rx_pads, dual, channel, platform, sys_clk, name,
                 timeout=BRING_UP_TIMEOUT_CYCLES):
        LanePhy.__init__(self)
        self.pll = pll = SerDesECP5PLL(refclk, ECP5_LANE.refclk_hz, ECP5_LANE.line_rate_hz)
        serdes = SerDesECP5(pll, tx_pads, rx_pads, dual=dual, channel=channel, data_width=ECP5_LANE.datapath_bits)
        serdes.add_stream_endpoints()
        _register_decoders(serdes)
        tx, rx = self._lane_clocks(serdes, name=name, platform=platform, sys_clk=sys_clk)
        self.comb += serdes.init.rst.eq(self.restart)
        self.words_out = words_out = ClockDomainsRenamer(tx)(WordsToPairs())
        self.words_in = words_in = ClockDomainsRenamer(rx)(PairsToWords())
        self.comb += [words_out.pairs.connect(serdes.sink, omit={"valid", "ready"}),
                      serdes.source.connect(words_in.pairs, omit={"valid", "ready"})]
        self._join(tx_word=words_out.word, rx_word=words_in.word, tx=tx, rx=rx, transmitting=serdes.tx_ready,
                   aligned=words_in.aligned, aligned_domain=rx, timeout=timeout)


def _register_decoders(serdes):
    """Make ``serdes``'s 8b10b decoders part of it. LiteICLink 2025.4's ``SerDesECP5`` keeps them in
    a plain list, which LiteX does not take for submodules: their logic is left out, the decoded
    symbols stay 0, and synthesis removes the whole receive path (as it did in the first SATA pair
    build). Its later releases register them (liteiclink#33): then nothing is added twice."""
    registered = {id(module) for _, module in serdes._submodules}
    serdes.submodules += [decoder for decoder in serdes.decoders if id(decoder) not in registered]


def pair_description():
    """Two symbols (one cycle of the DCU channel's 20-bit datapath): data and K flags."""
    return [("data", 16), ("ctrl", 2)]


class WordsToPairs(LiteXModule):
    """Lane words onto the channel's two symbols a cycle: a word's first two symbols in the cycle
    it is taken, its last two (held) in the next.

    ``word``: sink of :func:`~gravfm.board.lane_phy.word_description`, taken every other cycle
    (one must always be offered); ``pairs``: source of :func:`pair_description`, a pair every cycle.
    """

    def __init__(self):
        self.word = word = stream.Endpoint(word_description())
        self.pairs = pairs = stream.Endpoint(pair_description())
        second = Signal()
        held = Signal(16 + 2)
        self.sync += [second.eq(~second), If(~second, held.eq(Cat(word.data[16:], word.ctrl[2:])))]
        self.comb += [
            word.ready.eq(~second),
            pairs.valid.eq(1),
            pairs.data.eq(Mux(second, held[:16], word.data[:16])),
            pairs.ctrl.eq(Mux(second, held[16:], word.ctrl[:2])),
        ]


class PairsToWords(LiteXModule):
    """The channel's two symbols a cycle into lane words, each starting at the last K28.5 seen.

    ``slip`` picks which two symbols make a pair (this cycle's, or the last cycle's second and
    this cycle's first), ``phase`` whether a pair is a word's first or second half; both follow
    each K28.5 (the DCU has put the symbol boundaries right).

    ``pairs``: sink of :func:`pair_description`, a pair every cycle; ``word``: source of
    :func:`~gravfm.board.lane_phy.word_description`, ``valid`` with each whole word (every other
    cycle), never waits; ``aligned``: a K28.5 was seen since the reset (the DCU's bring-up).
    """

    def __init__(self):
        self.pairs = pairs = stream.Endpoint(pair_description())
        self.word = word = stream.Endpoint(word_description())
        self.aligned = aligned = Signal()
        symbols = [Cat(pairs.data[8 * i:8 * (i + 1)], pairs.ctrl[i]) for i in range(2)]
        last, first = Signal(SYMBOL_BITS), Signal(2 * SYMBOL_BITS)
        pair = [Signal(SYMBOL_BITS), Signal(SYMBOL_BITS)]
        slip, phase = Signal(), Signal()
        self.comb += [pair[0].eq(Mux(slip, last, symbols[0])), pair[1].eq(Mux(slip, symbols[0], symbols[1])),
                      pairs.ready.eq(1)]
        starts = pair[0] == COMMA
        halves = [first[:SYMBOL_BITS], first[SYMBOL_BITS:], *pair]
        self.sync += [
            last.eq(symbols[1]),
            If(symbols[0] == COMMA, slip.eq(0)).Elif(symbols[1] == COMMA, slip.eq(1)),
            If(starts | ~phase, first.eq(Cat(*pair)), phase.eq(1)).Else(phase.eq(0)),
            If(starts, aligned.eq(1)),
            word.valid.eq(phase & ~starts),
            word.data.eq(Cat(*[symbol[:8] for symbol in halves])),
            word.ctrl.eq(Cat(*[symbol[8] for symbol in halves])),
        ]


def _dcu_pins(io, lane):
    """``{"tx": (p, n), "rx": (p, n), "refclk": (p, n)}``: the package pins of ``lane`` (a
    :class:`~gravfm.board.boards.DcuLane`) in a litex-boards platform's IO list ``io``."""
    found = subsignal_pins(io, lane.resource)
    return {side: (found[f"{prefix}_p"][0], found[f"{prefix}_n"][0])
            for side, prefix in (("tx", "tx"), ("rx", "rx"), ("refclk", "clk"))}


def dcu_rows(board, lane):
    """The build's record of the link: its lane, pins and reference clock (from the platform)."""
    pins = _dcu_pins(importlib.import_module(f"litex_boards.platforms.{board.target}")._io, lane)
    return [{"link": 0, "lane": f"{lane.connector} (DCU{lane.dual} channel {lane.channel})",
             "tx": "/".join(pins["tx"]), "rx": "/".join(pins["rx"]),
             "refclk": f"EXTREF{lane.dual} ({'/'.join(pins['refclk'])}, {ECP5_LANE.refclk_hz / 1e6:g} MHz)"}]


def dcu_phys(soc, board, lane):
    """The one link's factory of its :class:`EcpSerdesPhy` on ``lane`` (a
    :class:`~gravfm.board.boards.DcuLane`): its pins and reference clock as bare pads (the
    platform's record gives them an I/O standard the DCU's dedicated pins do not take), the
    reference through an ``EXTREFB`` placed beside its DCU."""
    platform = soc.platform
    pins = _dcu_pins(platform.constraint_manager.available, lane)
    platform.add_extension([(f"gravfm_dcu_{side}", 0, Subsignal("p", Pins(p)), Subsignal("n", Pins(n)))
                            for side, (p, n) in pins.items()])
    refclk_pads = platform.request("gravfm_dcu_refclk", 0)
    refclk = Signal(name="gravfm_dcu_refclk")
    extref = Instance("EXTREFB", i_REFCLKP=refclk_pads.p, i_REFCLKN=refclk_pads.n, o_REFCLKO=refclk,
                      p_REFCK_PWDNB="0b1", p_REFCK_RTERM="0b0")   # terminated on the board (LiteICLink's bench)
    extref.attr.add(("LOC", f"EXTREF{lane.dual}"))
    soc.specials += extref
    return [partial(EcpSerdesPhy, refclk=refclk, tx_pads=platform.request("gravfm_dcu_tx", 0),
                    rx_pads=platform.request("gravfm_dcu_rx", 0), dual=lane.dual, channel=lane.channel,
                    platform=platform, sys_clk=soc.crg.cd_sys.clk, name="link0")]
