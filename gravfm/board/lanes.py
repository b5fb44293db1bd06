"""What a transceiver link costs, in plain Python: the top's frames as the same packets as on SERWB
(:mod:`gravfm.board.link`), carried by a serial transceiver lane (a Xilinx GTH/GTY,
:mod:`gravfm.board.transceiver`; an ECP5 DCU channel, :mod:`gravfm.board.ecp5_serdes`), for the link
check's timers, the model, the platform files and the build's figures, without the board extra.

A lane is a :class:`LaneRate`: its line rate, and the 8b10b symbols its datapath moves per lane
cycle. Both PHYs carry 32-bit words (four symbols): a word per lane cycle on the Xilinx lanes
(:data:`GT_LANE`: 6.25 Gb/s on 40 bits from 156.25 MHz, 5 Gb/s of payload), a word per two lane
cycles on the ECP5 (:data:`ECP5_LANE`: 2.5 Gb/s on 20 bits from 100 MHz, 2 Gb/s of payload). The
words enter and leave the lane in the SoC's ``sys`` domain, one per ``sys`` cycle at most (the
packetiser runs there): whichever of ``sys`` and the lane's word rate is slower sets the rate. A
frame of ``b`` bits is a packet of ``ceil(b / 32)`` words behind a preamble and a port/length word,
handed on once whole.
"""

import math
from dataclasses import dataclass

from .serwb import PACKET_OVERHEAD_WORDS, PIPELINE_CYCLES, frame_words, link_item_bits, link_word_bits, planned_link

__all__ = ["LaneRate", "GT_LANE", "ECP5_LANE", "WORD_BITS", "LANE_PIPELINE_CYCLES", "words_per_sys_cycle",
           "lane_cycles_per_frame", "lane_link", "lane_link_of", "lane_figures"]

#: Payload bits of one word: four 8b10b symbols.
WORD_BITS = 32
#: Lane cycles a word spends between the two ``sys`` domains beyond its packet (an estimate: the
#: asynchronous FIFO into the TX clock and the one out of the RX clock, the encoder's and
#: decoders' registers, the word assembly, both transceivers' PCS and PMA, a few metres of cable);
#: :data:`gravfm.board.serwb.PIPELINE_CYCLES` covers the link port's own FIFOs.
LANE_PIPELINE_CYCLES = 64


@dataclass(frozen=True)
class LaneRate:
    """A lane's line rate and datapath.

    Attributes
    ----------
    line_rate_hz : float
    datapath_bits : int
        Line bits per lane cycle (10 per 8b10b symbol): the lane clock is the line rate over it.
    refclk_hz : float
        The reference clock its PLL multiplies.
    """

    line_rate_hz: float
    datapath_bits: int
    refclk_hz: float

    @property
    def lane_clock_hz(self):
        return self.line_rate_hz / self.datapath_bits

    @property
    def word_rate_hz(self):
        """32-bit words a second (8 payload bits of every 10 line bits)."""
        return self.line_rate_hz * 0.8 / WORD_BITS


#: The Xilinx lanes (GTH, GTY): the channel's CPLL from 156.25 MHz (x 20 = 3.125 GHz VCO, x 2 / 1),
#: four symbols a cycle; the TX user clock is the reference clock itself (LiteICLink's buffer bypass
#: needs an integer divider of it), the RX one the recovered clock.
GT_LANE = LaneRate(line_rate_hz=6.25e9, datapath_bits=40, refclk_hz=156.25e6)
#: The ECP5-5G DCU channel (LiteICLink's ``SerDesECP5``: two symbols a cycle, its only datapath): the
#: DCU's TX PLL from the ECPIX-5's 100 MHz SERDES reference (x 25 = 2.5 GHz, / 1).
ECP5_LANE = LaneRate(line_rate_hz=2.5e9, datapath_bits=20, refclk_hz=100e6)


def words_per_sys_cycle(sys_hz, *, rate):
    """32-bit words a lane of ``rate`` moves per ``sys`` cycle: one, unless the lane is the slower."""
    return min(1.0, rate.word_rate_hz / sys_hz)


def lane_cycles_per_frame(frame_bits, *, sys_hz, design_hz, rate):
    """Design cycles one frame of ``frame_bits`` occupies a lane (its packet's words)."""
    return (frame_words(frame_bits) + PACKET_OVERHEAD_WORDS) / words_per_sys_cycle(sys_hz, rate=rate) \
        * design_hz / sys_hz


def lane_link(item_bits, *, sys_hz, design_hz, rate, word_bits=None, replay_depth=None):
    """The :class:`~gravfm.hw.link.LinkConfig` of a transceiver lane of ``rate`` between two boards
    whose SoC runs at ``sys_hz`` and design at ``design_hz``: the link check ``retransmit``, the
    bandwidth and the latency (in design cycles) of its frames, so that the check's timers fit the
    lane (``item_bits``, ``word_bits``: :func:`gravfm.board.serwb.serwb_link`)."""
    per_sys, per_lane = design_hz / sys_hz, design_hz / rate.lane_clock_hz

    def latency(per_frame):
        return math.ceil(per_frame + PIPELINE_CYCLES * per_sys + LANE_PIPELINE_CYCLES * per_lane)

    return planned_link(item_bits, word_bits=word_bits, replay_depth=replay_depth, latency_cycles=latency,
                        frame_cycles=lambda bits: lane_cycles_per_frame(bits, sys_hz=sys_hz, design_hz=design_hz,
                                                                        rate=rate))


def lane_link_of(config, *, sys_hz, design_hz, rate):
    """:func:`lane_link` for the links of a :class:`~gravfm.hw.SystemConfig`."""
    return lane_link(link_item_bits(config), word_bits=link_word_bits(config), sys_hz=sys_hz, design_hz=design_hz,
                     rate=rate)


def lane_figures(*, phy, rate, sys_hz, lanes):
    """What a build records of its transceiver links (JSON-ready); ``phy`` names the PHY."""
    words = words_per_sys_cycle(sys_hz, rate=rate)
    return {"phy": phy, "lanes": lanes, "line_rate_gbps": rate.line_rate_hz / 1e9, "encoding": "8b10b",
            "datapath_bits": rate.datapath_bits, "refclk_mhz": rate.refclk_hz / 1e6,
            "lane_clock_mhz": rate.lane_clock_hz / 1e6, "payload_gbps": rate.line_rate_hz * 0.8 / 1e9,
            "word_bits": WORD_BITS, "words_per_sys_cycle": words, "link_gbps": WORD_BITS * words * sys_hz / 1e9,
            "framing": f"a frame of b bits: ceil(b/32) words + {PACKET_OVERHEAD_WORDS} (preamble, port/length)"}
