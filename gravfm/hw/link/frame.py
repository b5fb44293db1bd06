"""The frame of the link check: a link word with its sequence number, acknowledgement and CRC.

See :mod:`gravfm.hw.link_check` for the protocol; here are its layout and its CRC in gateware.
"""

from amaranth.hdl import Cat, Const, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ..link_check import CRC_BITS, CRC_XOR_OUT, crc_masks

__all__ = ["frame_layout", "frame_crc", "barrier_bit", "replay_signature"]


def frame_layout(word_layout, check):
    """Layout of a frame carrying ``word_layout`` under ``check`` (a :class:`~gravfm.hw.link_check.LinkCheck`).

    The CRC is the top field and covers every bit below it.
    """
    fields = {"body": word_layout, "seq": check.seq_bits, "control": 1}
    if check.retransmit:
        fields.update(ack=check.seq_bits, nak=1)
    fields["crc"] = CRC_BITS
    return data.StructLayout(fields)


def replay_signature(check):
    """Retransmit: the ports between a link's :class:`~gravfm.hw.link.check_rx.CheckedReceiver`
    and the :class:`~gravfm.hw.link.check_tx.CheckedSender` of the opposite direction beside it,
    as the receiver has them (the sender has them flipped): what the receiver acknowledges and
    whether it asks for a replay, the sender's NAK leaving, and the peer's acknowledgement and
    NAK out of a good frame."""
    seq = check.seq_bits
    return wiring.Signature({"ack_out": Out(seq), "nak_out": Out(1), "nak_sent": In(1), "peer_ack": Out(seq),
                             "peer_ack_valid": Out(1), "peer_nak": Out(1)})


def frame_crc(frame):
    """The CRC-8 of a frame's covered bits (everything but ``crc``), as an Amaranth expression."""
    bits = Value.cast(frame)
    covered = bits[:len(bits) - CRC_BITS]
    parity = Cat(*((covered & Const(mask, len(covered))).xor() for mask in crc_masks(len(covered))))
    return parity ^ CRC_XOR_OUT


def barrier_bit(layout):
    """Bit position of the barrier flag in a link word or frame layout (the harness counts barriers);
    in a word of several lanes, lane 0's (each lane sends one barrier per round)."""
    offset = 0
    while "barrier" not in layout.members:
        name = next(name for name in ("body", "lanes", "item") if name in layout.members)
        offset += layout[name].offset
        layout = layout[name].shape
        if name == "lanes":
            layout = layout.elem_shape   # lane 0, at the bottom
    return offset + layout["barrier"].offset
