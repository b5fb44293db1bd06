"""What a transceiver link costs, in plain Python: the top's frames as the same packets as on SERWB
(:mod:`gravfm.board.link`), carried by a Xilinx transceiver lane (:mod:`gravfm.board.transceiver`),
for the link check's timers, the model, the platform files and the build's figures, without the
board extra.

A lane runs at :data:`LINE_RATE_HZ` (6.25 Gb/s) from a 156.25 MHz reference clock: 8b10b on a
40-bit datapath, so four symbols, one 32-bit word, per :data:`LANE_CLOCK_HZ` cycle (5 Gb/s of
payload). The words enter and leave the lane in the SoC's ``sys`` domain, one per ``sys`` cycle at
most (the packetiser runs there): on the KCU105 (125 MHz) and the U280 (150 MHz) ``sys`` is the
slower clock and sets the rate, 4.0 and 4.8 Gb/s. A frame of ``b`` bits is a packet of
``ceil(b / 32)`` words behind a preamble and a port/length word, handed on once whole.
"""

import math

from .serwb import PACKET_OVERHEAD_WORDS, PIPELINE_CYCLES, frame_words, link_item_bits, link_word_bits, planned_link

__all__ = ["LINE_RATE_HZ", "REFCLK_HZ", "DATAPATH_BITS", "LANE_CLOCK_HZ", "WORD_BITS", "LANE_PIPELINE_CYCLES",
           "words_per_sys_cycle", "lane_cycles_per_frame", "lane_link", "lane_link_of", "lane_figures"]

#: Line rate of every lane (the channel's CPLL: 156.25 MHz x 20 = 3.125 GHz VCO, x 2 / 1).
LINE_RATE_HZ = 6.25e9
#: The MGT reference clock both Xilinx boards have on board (KCU105: its Si570 at its power-up
#: frequency; U280: the QSFP28 cages' fixed oscillator).
REFCLK_HZ = 156.25e6
#: The transceiver's user datapath: four 10-bit symbols.
DATAPATH_BITS = 40
#: The lane's user clock (TX: the reference clock itself, LiteICLink's buffer bypass needs an
#: integer divider of it; RX: the recovered clock).
LANE_CLOCK_HZ = LINE_RATE_HZ / DATAPATH_BITS
#: Payload bits per lane cycle (8b10b: 8 of every 10 line bits).
WORD_BITS = 32
#: Lane cycles a word spends between the two ``sys`` domains beyond its packet (an estimate: the
#: asynchronous FIFO into the TX clock and the one out of the RX clock, the encoder's and
#: decoders' registers, both transceivers' PCS and PMA with their buffers bypassed, a few metres of
#: cable); :data:`gravfm.board.serwb.PIPELINE_CYCLES` covers the link port's own FIFOs.
LANE_PIPELINE_CYCLES = 64


def words_per_sys_cycle(sys_hz):
    """32-bit words a lane moves per ``sys`` cycle: one, unless the lane's clock is the slower."""
    return min(1.0, LANE_CLOCK_HZ / sys_hz)


def lane_cycles_per_frame(frame_bits, *, sys_hz, design_hz):
    """Design cycles one frame of ``frame_bits`` occupies a lane (its packet's words)."""
    return (frame_words(frame_bits) + PACKET_OVERHEAD_WORDS) / words_per_sys_cycle(sys_hz) * design_hz / sys_hz


def lane_link(item_bits, *, sys_hz, design_hz, word_bits=None, replay_depth=None):
    """The :class:`~gravfm.hw.link.LinkConfig` of a transceiver lane between two boards whose SoC
    runs at ``sys_hz`` and design at ``design_hz``: the link check ``retransmit``, the bandwidth
    and the latency (in design cycles) of its frames, so that the check's timers fit the lane
    (``item_bits``, ``word_bits``: :func:`gravfm.board.serwb.serwb_link`)."""
    per_sys, per_lane = design_hz / sys_hz, design_hz / LANE_CLOCK_HZ

    def latency(per_frame):
        return math.ceil(per_frame + PIPELINE_CYCLES * per_sys + LANE_PIPELINE_CYCLES * per_lane)

    return planned_link(item_bits, word_bits=word_bits, replay_depth=replay_depth, latency_cycles=latency,
                        frame_cycles=lambda bits: lane_cycles_per_frame(bits, sys_hz=sys_hz, design_hz=design_hz))


def lane_link_of(config, *, sys_hz, design_hz):
    """:func:`lane_link` for the links of a :class:`~gravfm.hw.SystemConfig`."""
    return lane_link(link_item_bits(config), word_bits=link_word_bits(config), sys_hz=sys_hz, design_hz=design_hz)


def lane_figures(*, family, sys_hz, lanes):
    """What a build records of its transceiver links (JSON-ready)."""
    words = words_per_sys_cycle(sys_hz)
    return {"phy": f"LiteICLink {family.upper()} (8b10b, clock aligner, buffers bypassed)", "lanes": lanes,
            "line_rate_gbps": LINE_RATE_HZ / 1e9, "encoding": "8b10b", "datapath_bits": DATAPATH_BITS,
            "refclk_mhz": REFCLK_HZ / 1e6, "lane_clock_mhz": LANE_CLOCK_HZ / 1e6,
            "payload_gbps": LINE_RATE_HZ * 0.8 / 1e9, "word_bits": WORD_BITS, "words_per_sys_cycle": words,
            "link_gbps": WORD_BITS * words * sys_hz / 1e9,
            "framing": f"a frame of b bits: ceil(b/32) words + {PACKET_OVERHEAD_WORDS} (preamble, port/length)"}
