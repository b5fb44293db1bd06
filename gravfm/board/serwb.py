"""What a board link costs, in plain Python: the top's frames as SERWB packets on LiteICLink's
generic PHY (:mod:`gravfm.board.link`), for the link check's timers, the model and the platform
files, without the board extra.

At a bit per ``sys`` cycle with 8b10b, a 32-bit word takes :data:`LINE_BITS_PER_WORD` cycles; a
frame of ``b`` bits is a packet of ``ceil(b / 32)`` words behind a preamble and a port/length
word. The receiver hands a frame on once its last word is in (store and forward).
"""

from ..hw.link import LinkConfig

__all__ = ["LINE_BITS_PER_WORD", "PACKET_OVERHEAD_WORDS", "CONTROL_WORDS", "frame_words", "cycles_per_frame",
           "serwb_link", "serwb_link_of", "planned_link", "link_item_bits", "link_word_bits", "PIPELINE_CYCLES"]

#: Bits on the wire per 32-bit word (8b10b).
LINE_BITS_PER_WORD = 40
#: Words a packet adds: the preamble, then its port and length.
PACKET_OVERHEAD_WORDS = 2
#: Words of a control packet: the kind and FPGA index, then the design id (HELLO) or 0.
CONTROL_WORDS = 2
#: Cycles of registers and clock-domain crossings on a frame's way, beside the wire and its
#: packet (two asynchronous FIFOs, the deserialiser's word, the packetiser).
PIPELINE_CYCLES = 64


def frame_words(frame_bits):
    """32-bit words of one frame on the wire."""
    return -(-frame_bits // 32)


def cycles_per_frame(frame_bits):
    """``sys`` cycles one frame of ``frame_bits`` occupies the wire (its packet, at a bit per cycle)."""
    return (frame_words(frame_bits) + PACKET_OVERHEAD_WORDS) * LINE_BITS_PER_WORD


def serwb_link(item_bits, *, wire_latency, word_bits=None, replay_depth=None):
    """The :class:`~gravfm.hw.link.LinkConfig` of a SERWB link over a wire of ``wire_latency``
    cycles: the link check ``retransmit`` (the wire cannot hold back its sender), the bandwidth and
    the latency of its frames, so that the check's timers fit the real link.

    ``item_bits`` is what the check plans a frame from (the model's item: :func:`link_item_bits`),
    ``word_bits`` what the wire carries of it (the link word: the item and its parity;
    :func:`link_word_bits`; default ``item_bits``): the bandwidth is stated so that the planned
    frame takes the cycles the real one takes.
    """
    def latency(per_frame):
        return wire_latency + per_frame + LINE_BITS_PER_WORD + PIPELINE_CYCLES

    return planned_link(item_bits, word_bits=word_bits, replay_depth=replay_depth, frame_cycles=cycles_per_frame,
                        latency_cycles=latency)


def planned_link(item_bits, *, frame_cycles, latency_cycles, word_bits=None, replay_depth=None):
    """The ``retransmit`` :class:`~gravfm.hw.link.LinkConfig` of a board link whose frame of ``b``
    bits occupies it ``frame_cycles(b)`` cycles and arrives ``latency_cycles(frame_cycles(b))``
    cycles after it left (:func:`serwb_link`, :func:`gravfm.board.lanes.lane_link`).

    The frame's width depends on the replay depth the plan picks, which depends on the link's
    figures: planned until it no longer changes.
    """
    word_bits = item_bits if word_bits is None else word_bits
    overhead = 24   # a first guess of the check's fields
    for _ in range(4):
        per_frame = frame_cycles(word_bits + overhead)
        link = LinkConfig(check="retransmit", bits_per_cycle=(item_bits + overhead) / per_frame,
                          replay_depth=replay_depth, fifo_depth=16, latency_cycles=latency_cycles(per_frame))
        planned = link.link_check(item_bits=item_bits).overhead_bits
        if planned == overhead:
            return link
        overhead = planned
    return link


def link_item_bits(config):
    """Bits of one item on the links of a :class:`~gravfm.hw.SystemConfig`, as the link check
    plans them (the model's m_update or m_message)."""
    from ..hw.arch import architecture  # deferred: Amaranth (the architecture's layouts)

    arch = architecture(config.arch)
    return arch.item_bits(config, arch.layouts(config.algorithm, config))


def link_word_bits(config):
    """Bits of one link word of a :class:`~gravfm.hw.SystemConfig` on the wire (the item and its parity)."""
    from amaranth.hdl import Shape  # deferred: Amaranth

    from ..hw.arch import architecture  # deferred: Amaranth (the architecture's layouts)
    from ..hw.link.endpoints import link_word_layout  # deferred: Amaranth

    arch = architecture(config.arch)
    return Shape.cast(link_word_layout(arch.network_item(arch.layouts(config.algorithm, config)))).width


def serwb_link_of(config, *, wire_latency):
    """:func:`serwb_link` for the links of a :class:`~gravfm.hw.SystemConfig`."""
    return serwb_link(link_item_bits(config), word_bits=link_word_bits(config), wire_latency=wire_latency)
