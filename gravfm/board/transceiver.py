"""Board links on Xilinx serial transceivers: LiteICLink's GTH (UltraScale, ``GTHE3_CHANNEL``) and
GTY (UltraScale+, ``GTYE4_CHANNEL``) behind the interface of :class:`~gravfm.board.link.SerwbPhy`,
so that a :class:`~gravfm.board.link.LinkPort` carries the same packets over either.

One lane per link, both ways (its figures: :mod:`gravfm.board.lanes`):

- **Clocks**: the channel's own PLL (CPLL) from the board's 156.25 MHz MGT reference clock
  (``IBUFDS_GTE3``/``GTE4``, ``create_clock`` on its pin), 6.25 Gb/s. LiteICLink's TX and RX
  buffers are bypassed (its default): the TX user clock is the reference clock through a
  ``BUFG_GT`` dividing by 1 (156.25 MHz), the RX one the recovered clock. Both get a period
  constraint and are asynchronous to ``sys``, as in LiteICLink's examples.
- **Coding and alignment**: LiteICLink's 8b10b encoder and decoders on a 40-bit datapath (four
  symbols: one 32-bit word per lane cycle) and its clock aligner, which resets the receiver until
  a comma lands in the word's first symbol and again whenever that symbol is not valid 8b10b.
- **Words**: a data word is four data symbols. With nothing to send (and until the link is up)
  the lane sends an idle word: K28.5 in the first symbol (the aligner's comma), then a status byte
  (bit 0: this end's receiver is aligned). ``ready`` = this end transmits (TX initialised),
  receives (aligned) and hears the peer say it receives; ``error`` once
  :data:`BRING_UP_TIMEOUT_CYCLES` ``sys`` cycles passed without ``ready`` since the last
  ``restart`` (or since the link was lost). A transceiver link needs no leader: ``master`` is
  there for the PHYs' common interface, and ``restart`` starts this end's TX and RX over (the
  peer's aligner loses the words and aligns again).
- **Crossings**: an asynchronous FIFO from ``sys`` into the TX clock (which drains it faster than
  ``sys`` can fill it), one from the RX clock into ``sys``; a word that finds it full is dropped,
  and the link check replays its frame.
"""

import importlib
import math
from functools import partial

from litex.build.generic_platform import Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.cores.code_8b10b import K
from litex.soc.interconnect import stream
from liteiclink.serdes.gth_ultrascale import GTH3, GTHChannelPLL
from liteiclink.serdes.gty_ultrascale import GTY, GTYChannelPLL
from migen import Cat, ClockDomainsRenamer, Constant, If, Instance, Signal
from migen.genlib.cdc import MultiReg

from ..errors import ConfigError
from .lanes import DATAPATH_BITS, LINE_RATE_HZ, REFCLK_HZ, WORD_BITS

__all__ = ["TransceiverPhy", "FAMILIES", "IDLE", "BRING_UP_TIMEOUT_CYCLES", "lane_phys", "lane_rows", "lane_pins"]

#: Per family: the channel's PLL, the transceiver, the reference clock's input buffer.
FAMILIES = {"gth": (GTHChannelPLL, GTH3, "IBUFDS_GTE3"), "gty": (GTYChannelPLL, GTY, "IBUFDS_GTE4")}
#: The idle word's first symbol: the comma LiteICLink's clock aligner looks for.
IDLE = K(28, 5)
#: ``sys`` cycles the bring-up may take before ``error`` (about 7 to 9 s at 150 / 125 MHz): the clock
#: aligner tries a reset every 6 ms and finds the comma's place in one try of 40 on average.
BRING_UP_TIMEOUT_CYCLES = 1 << 30
#: Words each crossing holds.
FIFO_DEPTH = 16
#: The transceiver's divider from the reference clock to its internal clock of 25 MHz at most.
CLK25_DIV = math.ceil(REFCLK_HZ / 25e6)


class TransceiverPhy(LiteXModule):
    """One transceiver lane with the interface of :class:`~gravfm.board.link.SerwbPhy` (module docstring).

    ``sink``/``source``: 32-bit words in ``sys`` (the source never waits); ``master``, ``restart``
    (a pulse), ``ready``, ``error``.

    Parameters
    ----------
    family : str
        A key of :data:`FAMILIES`.
    refclk : Signal
        The reference clock from its ``IBUFDS_GTE*``.
    tx_pads, rx_pads : records with ``p``, ``n``
    platform : litex.build.generic_platform.GenericPlatform
        Takes the lane clocks' constraints.
    sys_clk : Signal
        The SoC's ``sys`` clock (its clock group).
    sys_clk_freq : float
    name : str
        Prefix of the lane's clock domains (``{name}_tx``, ``{name}_rx``).
    """

    def __init__(self, *, family, refclk, tx_pads, rx_pads, platform, sys_clk, sys_clk_freq, name,
                 timeout=BRING_UP_TIMEOUT_CYCLES):
        self.sink = stream.Endpoint([("data", WORD_BITS)])
        self.source = stream.Endpoint([("data", WORD_BITS)])
        self.master, self.restart = Signal(), Signal()
        self.ready, self.error = Signal(), Signal()

        pll_cls, serdes_cls, _ = FAMILIES[family]
        self.pll = pll = pll_cls(refclk, REFCLK_HZ, LINE_RATE_HZ)
        serdes = serdes_cls(pll, tx_pads, rx_pads, sys_clk_freq, data_width=DATAPATH_BITS)
        serdes.add_stream_endpoints()
        # The PMA's internal clock must stay at or below 25 MHz: LiteICLink's GTH sets the divider
        # for a reference of 75 MHz or less (3), its GTY for 156.25 MHz (7).
        getattr(serdes, f"{family}_params").update(p_RX_CLK25_DIV=CLK25_DIV, p_TX_CLK25_DIV=CLK25_DIV)
        tx, rx = f"{name}_tx", f"{name}_rx"
        self.serdes = ClockDomainsRenamer({"tx": tx, "rx": rx})(serdes)
        platform.add_period_constraint(serdes.cd_tx.clk, 1e9 / serdes.tx_clk_freq)
        platform.add_period_constraint(serdes.cd_rx.clk, 1e9 / serdes.rx_clk_freq)
        platform.add_false_path_constraints(sys_clk, serdes.cd_tx.clk, serdes.cd_rx.clk)

        # The clock aligner's verdict is made in the TX clock's domain.
        aligned = serdes.rx_ready
        peer_aligned = self._receive(serdes, rx)
        self._transmit(serdes, tx, aligned)
        local, peer = Signal(), Signal()
        self.specials += [MultiReg(aligned, local), MultiReg(peer_aligned, peer)]
        waited = Signal(max=timeout + 1)
        self.comb += [
            serdes.tx_enable.eq(~self.restart), serdes.rx_enable.eq(~self.restart),
            self.ready.eq(serdes.tx_ready & local & peer),
            self.error.eq(waited == timeout),
        ]
        self.sync += If(self.restart | self.ready, waited.eq(0)).Elif(waited != timeout, waited.eq(waited + 1))

    def _transmit(self, serdes, tx, aligned):
        """Words from ``sink`` (taken once ``ready``) into the TX clock; idle words between them."""
        out = stream.ClockDomainCrossing([("data", WORD_BITS)], cd_from="sys", cd_to=tx, depth=FIFO_DEPTH)
        self.submodules += out
        word = serdes.sink
        self.comb += [
            out.sink.valid.eq(self.sink.valid & self.ready), out.sink.data.eq(self.sink.data),
            self.sink.ready.eq(out.sink.ready & self.ready),
            out.source.ready.eq(1),   # the encoder takes a word every cycle
            If(out.source.valid, word.ctrl.eq(0), word.data.eq(out.source.data)).Else(
                word.ctrl.eq(0b0001), word.data.eq(Cat(Constant(IDLE, 8), aligned))),
        ]

    def _receive(self, serdes, rx):
        """Data words into ``sys`` (to ``source``); the peer's status from its idle words, which
        :meth:`__init__` reads (returned, in the RX clock's domain)."""
        back = stream.ClockDomainCrossing([("data", WORD_BITS)], cd_from=rx, cd_to="sys", depth=FIFO_DEPTH)
        self.submodules += back
        word = serdes.source
        aligned, peer_aligned = Signal(), Signal()
        self.specials += MultiReg(serdes.rx_ready, aligned, rx)
        idle = (word.ctrl == 0b0001) & (word.data[:8] == IDLE)
        sync = getattr(self.sync, rx)
        sync += If(~aligned, peer_aligned.eq(0)).Elif(idle, peer_aligned.eq(word.data[8]))
        self.comb += [
            back.sink.valid.eq(aligned & (word.ctrl == 0)), back.sink.data.eq(word.data),
            back.source.ready.eq(1),
            self.source.valid.eq(self.ready & back.source.valid), self.source.data.eq(back.source.data),
        ]
        return peer_aligned


def lane_pins(io, lane):
    """``{"tx": (p, n), "rx": (p, n)}``: the package pins of ``lane`` (a
    :class:`~gravfm.board.boards.Lane`) in a litex-boards platform's IO list ``io``."""
    found = _subsignal_pins(io, lane.resource)
    return {side: (found[f"{side}p"][lane.index], found[f"{side}n"][lane.index]) for side in ("tx", "rx")}


def _refclk_pins(io, refclk):
    """``(p, n)``: the package pins of a reference clock's record."""
    pins = _subsignal_pins(io, refclk)
    return pins["p"][0], pins["n"][0]


def _subsignal_pins(io, key):
    """``{subsignal: [pin, ...]}`` of the record ``key`` (name, number) in a platform's IO list."""
    for resource in io:
        if (resource[0], resource[1]) == key:
            return {sub.name: next(c for c in sub.constraints if isinstance(c, Pins)).identifiers
                    for sub in resource[2:] if isinstance(sub, Subsignal)}
    raise ConfigError(f"the platform has no {key[0]}:{key[1]}")


def lane_rows(board, lanes):
    """The build's record of each link: its lane, pins and reference clock (from the platform)."""
    io = importlib.import_module(f"litex_boards.platforms.{board.target}")._io
    rows = []
    for k, lane in enumerate(lanes):
        pins = lane_pins(io, lane)
        rows.append({"link": k, "lane": lane.name, "tx": "/".join(pins["tx"]), "rx": "/".join(pins["rx"]),
                     "refclk": f"{lane.refclk[0]}:{lane.refclk[1]} ({'/'.join(_refclk_pins(io, lane.refclk))}, "
                               f"{REFCLK_HZ / 1e6:g} MHz)"})
    return rows


def lane_phys(soc, board, family, lanes):
    """Per link, a factory of its :class:`TransceiverPhy` on ``lanes[k]``: the lanes' pins requested
    from the platform, each reference clock buffered once and constrained, cage enables driven."""
    platform = soc.platform
    buffer = FAMILIES[family][2]
    refclks, phys = {}, []
    for k, lane in enumerate(lanes):
        if lane.refclk not in refclks:
            pads = platform.request(*lane.refclk)
            platform.add_period_constraint(pads.p, 1e9 / REFCLK_HZ)
            refclks[lane.refclk] = clock = Signal(name=f"gravfm_refclk{len(refclks)}")
            soc.specials += Instance(buffer, i_CEB=0, i_I=pads.p, i_IB=pads.n, o_O=clock)
        pins = lane_pins(platform.constraint_manager.available, lane)
        platform.add_extension([(f"gravfm_lane_{side}", k, Subsignal("p", Pins(p)), Subsignal("n", Pins(n)))
                                for side, (p, n) in pins.items()])
        if lane.enable is not None:
            soc.comb += platform.request(*lane.enable).eq(1)
        tx_pads, rx_pads = platform.request("gravfm_lane_tx", k), platform.request("gravfm_lane_rx", k)
        phys.append(partial(TransceiverPhy, family=family, refclk=refclks[lane.refclk], platform=platform,
                            tx_pads=tx_pads, rx_pads=rx_pads, sys_clk=soc.crg.cd_sys.clk,
                            sys_clk_freq=board.sys_clk_hz, name=f"link{k}"))
    return phys
