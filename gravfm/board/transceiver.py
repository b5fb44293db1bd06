"""Board links on Xilinx serial transceivers: LiteICLink's GTH (UltraScale, ``GTHE3_CHANNEL``) and
GTY (UltraScale+, ``GTYE4_CHANNEL``) behind the interface of :class:`~gravfm.board.link.SerwbPhy`,
so that a :class:`~gravfm.board.link.LinkPort` carries the same packets over either.

One lane per link, both ways (its figures: :data:`gravfm.board.lanes.GT_LANE`); the words, idle
words, crossings, ``ready`` and ``error`` are every lane PHY's (:class:`gravfm.board.lane_phy.LanePhy`):

- **Clocks**: the channel's own PLL (CPLL) from the board's 156.25 MHz MGT reference clock
  (``IBUFDS_GTE3``/``GTE4``, ``create_clock`` on its pin), 6.25 Gb/s. LiteICLink's TX and RX
  buffers are bypassed (its default): the TX user clock is the reference clock through a
  ``BUFG_GT`` dividing by 1 (156.25 MHz), the RX one the recovered clock. Both get a period
  constraint and are asynchronous to ``sys``, as in LiteICLink's examples.
- **Coding and alignment**: LiteICLink's 8b10b encoder and decoders on a 40-bit datapath (four
  symbols: one 32-bit word per lane cycle) and its clock aligner, which resets the receiver until
  a comma lands in the word's first symbol and again whenever that symbol is not valid 8b10b.
- **Restart**: ``restart`` starts this end's TX and RX over (the peer's aligner loses the words
  and aligns again). The TX clock drains its crossing faster than ``sys`` can fill it.
"""

import importlib
import math
from functools import partial

from litex.build.generic_platform import Pins, Subsignal
from liteiclink.serdes.gth_ultrascale import GTH3, GTHChannelPLL
from liteiclink.serdes.gty_ultrascale import GTY, GTYChannelPLL
from migen import Instance, Signal

from .lane_phy import BRING_UP_TIMEOUT_CYCLES, LanePhy, subsignal_pins
from .lanes import GT_LANE

__all__ = ["TransceiverPhy", "FAMILIES", "lane_phys", "lane_rows", "lane_pins"]

#: Per family: the channel's PLL, the transceiver, the reference clock's input buffer.
FAMILIES = {"gth": (GTHChannelPLL, GTH3, "IBUFDS_GTE3"), "gty": (GTYChannelPLL, GTY, "IBUFDS_GTE4")}
#: The transceiver's divider from the reference clock to its internal clock of 25 MHz at most.
CLK25_DIV = math.ceil(GT_LANE.refclk_hz / 25e6)


class TransceiverPhy(LanePhy):
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
        LanePhy.__init__(self)
        pll_cls, serdes_cls, _ = FAMILIES[family]
        self.pll = pll = pll_cls(refclk, GT_LANE.refclk_hz, GT_LANE.line_rate_hz)
        serdes = serdes_cls(pll, tx_pads, rx_pads, sys_clk_freq, data_width=GT_LANE.datapath_bits)
        serdes.add_stream_endpoints()
        # The PMA's internal clock must stay at or below 25 MHz: LiteICLink's GTH sets the divider
        # for a reference of 75 MHz or less (3), its GTY for 156.25 MHz (7).
        getattr(serdes, f"{family}_params").update(p_RX_CLK25_DIV=CLK25_DIV, p_TX_CLK25_DIV=CLK25_DIV)
        tx, rx = self._lane_clocks(serdes, name=name, platform=platform, sys_clk=sys_clk)
        self.comb += [serdes.tx_enable.eq(~self.restart), serdes.rx_enable.eq(~self.restart)]
        # The clock aligner's verdict is made in the TX clock's domain.
        self._join(tx_word=serdes.sink, rx_word=serdes.source, tx=tx, rx=rx, transmitting=serdes.tx_ready,
                   aligned=serdes.rx_ready, aligned_domain=tx, timeout=timeout)


def lane_pins(io, lane):
    """``{"tx": (p, n), "rx": (p, n)}``: the package pins of ``lane`` (a
    :class:`~gravfm.board.boards.Lane`) in a litex-boards platform's IO list ``io``."""
    found = subsignal_pins(io, lane.resource)
    return {side: (found[f"{side}p"][lane.index], found[f"{side}n"][lane.index]) for side in ("tx", "rx")}


def _refclk_pins(io, refclk):
    """``(p, n)``: the package pins of a reference clock's record."""
    pins = subsignal_pins(io, refclk)
    return pins["p"][0], pins["n"][0]


def lane_rows(board, lanes):
    """The build's record of each link: its lane, pins and reference clock (from the platform)."""
    io = importlib.import_module(f"litex_boards.platforms.{board.target}")._io
    rows = []
    for k, lane in enumerate(lanes):
        pins = lane_pins(io, lane)
        rows.append({"link": k, "lane": lane.name, "tx": "/".join(pins["tx"]), "rx": "/".join(pins["rx"]),
                     "refclk": f"{lane.refclk[0]}:{lane.refclk[1]} ({'/'.join(_refclk_pins(io, lane.refclk))}, "
                               f"{GT_LANE.refclk_hz / 1e6:g} MHz)"})
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
            platform.add_period_constraint(pads.p, 1e9 / GT_LANE.refclk_hz)
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
