"""Sending side of the link check: frames, sequence numbers, heartbeats and go-back-N replay.

:class:`CheckedSender` sits between a :class:`~gravfm.hw.link.LinkSender` and the link. Each link
word leaves as a frame with the next sequence number and a CRC; a sender that sent nothing for
``heartbeat_cycles`` sends a control frame with the next sequence number (in detect mode it
takes that number, with retransmission it only shows it), so that a receiver notices a lost last
frame, and a silent link is a dead one. With retransmission it
also keeps the frames not yet acknowledged in a replay buffer (its window), carries the
acknowledgement and NAK of the opposite direction (from the
:class:`~gravfm.hw.link.check_rx.CheckedReceiver` beside it), and on a NAK from the peer sends
again from the oldest unacknowledged frame (go-back-N).
"""

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .frame import frame_crc, frame_layout, replay_signature

__all__ = ["CheckedSender", "wrapped"]


def wrapped(value, bits):
    """``value`` modulo ``2**bits``: sequence-number arithmetic."""
    return Value.cast(value)[:bits]


class CheckedSender(wiring.Component):
    """Outgoing half of the link check of one link.

    Parameters
    ----------
    word_layout : Layout
        The link word (:func:`~gravfm.hw.link.link_word_layout`).
    check : gravfm.hw.link_check.LinkCheck
        ``detect`` or ``retransmit``.

    Ports
    -----
    i : In(stream link word)
    o : Out(stream frame)
    start : In(1)
        Heartbeats begin with the run.
    frozen : In(1)
        This FPGA has detected termination: ``retransmissions`` counts no more.
    retransmissions : Out(64)
        Frames sent again (retransmit).
    ack_out, nak_out : In
        (retransmit) What this FPGA's receiver of the opposite direction acknowledges (frames
        consumed) and whether it asks for a replay.
    nak_sent : Out(1)
        (retransmit) A frame with the NAK flag leaves in this cycle.
    peer_ack, peer_ack_valid, peer_nak : In
        (retransmit) The acknowledgement and NAK of a good frame from the peer.
    """

    def __init__(self, *, word_layout, check):
        if not check.enabled:
            raise ValueError("CheckedSender needs the detect or retransmit link check")
        self._word = word_layout
        self._check = check
        members = {"i": In(stream.Signature(word_layout)),
                   "o": Out(stream.Signature(frame_layout(word_layout, check))),
                   "start": In(1), "frozen": In(1), "retransmissions": Out(64)}
        if check.retransmit:
            members.update(replay_signature(check).flip().members)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        check = self._check
        started = Signal()
        with m.If(self.start):
            m.d.sync += started.eq(1)
        # Cycles since the last frame left (saturating): heartbeats and pending acknowledgements.
        quiet = Signal(range(check.heartbeat_cycles + 1))
        fire = self.o.valid & self.o.ready
        with m.If(fire):
            m.d.sync += quiet.eq(0)
        with m.Elif(quiet != check.heartbeat_cycles):
            m.d.sync += quiet.eq(quiet + 1)
        heartbeat_due = started & (quiet == check.heartbeat_cycles)
        if check.retransmit:
            self._go_back_n(m, started, quiet, heartbeat_due, fire)
        else:
            next_seq = Signal(check.seq_bits)
            frame = self.o.payload
            m.d.comb += [
                self.o.valid.eq(self.i.valid | heartbeat_due),
                frame.body.eq(Mux(self.i.valid, self.i.payload, 0)),
                frame.seq.eq(next_seq),
                frame.control.eq(~self.i.valid),
                self.i.ready.eq(self.o.ready),
            ]
            with m.If(fire):   # a heartbeat takes a number too: its loss is a fault as well
                m.d.sync += next_seq.eq(next_seq + 1)
        m.d.comb += self.o.payload.crc.eq(frame_crc(self.o.payload))
        return m

    def _go_back_n(self, m, started, quiet, heartbeat_due, fire):
        """Window, replay buffer, acknowledgements and NAKs (retransmit)."""
        check = self._check
        bits, depth = check.seq_bits, check.replay_depth
        next_seq, unacked, replay_at, acked_sent = (Signal(bits, name=name) for name in
                                                    ("next_seq", "unacked", "replay_at", "acked_sent"))
        m.submodules.replay = replay = memory.Memory(shape=self._word, depth=depth, init=[])
        write, read = replay.write_port(), replay.read_port(domain="comb")
        index = (depth - 1).bit_length()

        replaying = replay_at != next_seq
        in_window = wrapped(next_seq - unacked, bits) < depth
        new = ~replaying & in_window & self.i.valid
        ack_lag = wrapped(self.ack_out - acked_sent, bits)
        ack_due = (ack_lag != 0) & ((quiet >= check.ack_quiet_cycles) | (ack_lag >= depth // 4))
        frame = self.o.payload
        m.d.comb += [
            read.addr.eq(replay_at[:index]),
            self.o.valid.eq(replaying | new | heartbeat_due | (started & (self.nak_out | ack_due))),
            frame.body.eq(Mux(replaying, read.data, Mux(new, self.i.payload, 0))),
            frame.seq.eq(Mux(replaying, replay_at, next_seq)),
            frame.control.eq(~replaying & ~new),
            frame.ack.eq(self.ack_out),
            frame.nak.eq(self.nak_out),
            self.i.ready.eq(self.o.ready & ~replaying & in_window),
            self.nak_sent.eq(fire & self.nak_out),
            write.addr.eq(next_seq[:index]), write.data.eq(self.i.payload), write.en.eq(fire & new),
        ]
        with m.If(fire):
            m.d.sync += acked_sent.eq(self.ack_out)
        with m.If(fire & new):
            m.d.sync += next_seq.eq(next_seq + 1)
        with m.If(fire & replaying & ~self.frozen):
            m.d.sync += self.retransmissions.eq(self.retransmissions + 1)

        # An acknowledgement moves the window's start (an old or repeated one is ignored); a NAK
        # sends everything again from there; the replay never starts before the window.
        acked = Signal(bits)
        m.d.comb += acked.eq(unacked)
        with m.If(self.peer_ack_valid & (wrapped(self.peer_ack - unacked, bits) <= wrapped(next_seq - unacked, bits))):
            m.d.comb += acked.eq(self.peer_ack)
        stepped = Signal(bits)
        m.d.comb += stepped.eq(Mux(fire & (replaying | new), replay_at + 1, replay_at))
        m.d.sync += unacked.eq(acked)
        with m.If(self.peer_nak | (wrapped(acked - unacked, bits) > wrapped(stepped - unacked, bits))):
            m.d.sync += replay_at.eq(acked)
        with m.Else():
            m.d.sync += replay_at.eq(stepped)
