"""Receiving side of the link check: CRC and sequence checks, silence, NAKs and the error latch.

:class:`CheckedReceiver` sits between the link and a :class:`~gravfm.hw.link.LinkReceiver`. It
passes on, in order, the link words of the good frames that carry the next sequence number.

* ``detect``: the first frame with a bad CRC, a sequence number ahead of the expected one (a
  frame lost), behind it (a duplicate), a silence longer than the peer's heartbeat allows (a
  dead link), or a round whose barrier counts fewer updates than arrived (reported by the
  :class:`~gravfm.hw.link.LinkReceiver`), latches the error word
  (:func:`gravfm.hw.link_check.error_word`): the run stops. Control frames are numbered like
  data frames, so any fault on the link is one.
* ``retransmit``: the receiver takes every frame at once into a buffer of the sender's window
  (so the link never waits for this FPGA, and acknowledgements never queue behind data),
  acknowledges the frames its :class:`~gravfm.hw.link.LinkReceiver` took, drops bad and
  out-of-sequence frames and asks for a replay (NAK) — again after ``nak_retry_cycles`` if the
  missing frame still has not come. Only a dead link (or a count error) latches an error.
"""

from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..link_check import ERROR_FIELDS, ERROR_KINDS
from ..stream_fifo import StreamFIFO
from .check_tx import wrapped
from .frame import frame_crc, frame_layout, replay_signature

__all__ = ["CheckedReceiver"]

KIND = {name: code for code, name in ERROR_KINDS.items()}


class CheckedReceiver(wiring.Component):
    """Incoming half of the link check of one link.

    Parameters
    ----------
    word_layout : Layout
        The link word.
    check : gravfm.hw.link_check.LinkCheck
        ``detect`` or ``retransmit``.

    Ports
    -----
    i : In(stream frame)
    o : Out(stream link word)
    start : In(1)
        The silence timer runs from the run's start.
    frozen : In(1)
        This FPGA has detected termination: nothing it receives can change its result any more,
        so no error is latched and nothing counted from then on (the host reads the figures of
        the run, however long it takes to read them).
    count_error : In(1)
        The link receiver saw more updates than the round's barrier counts.
    error : Out(64)
        The error word (0: none); ``failed`` is its kind being non-zero.
    failed : Out(1)
    discarded : Out(64)
        Frames dropped: bad CRC, out of sequence (retransmit).
    ack_out, nak_out, nak_sent, peer_ack, peer_ack_valid, peer_nak
        (retransmit) See :class:`~gravfm.hw.link.check_tx.CheckedSender`.
    """

    def __init__(self, *, word_layout, check):
        if not check.enabled:
            raise ValueError("CheckedReceiver needs the detect or retransmit link check")
        self._word = word_layout
        self._check = check
        members = {"i": In(stream.Signature(frame_layout(word_layout, check))),
                   "o": Out(stream.Signature(word_layout)),
                   "start": In(1), "frozen": In(1), "count_error": In(1), "error": Out(64), "failed": Out(1),
                   "discarded": Out(64)}
        if check.retransmit:
            members.update(replay_signature(check).members)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        check, bits = self._check, self._check.seq_bits
        frame = self.i.payload
        expected = Signal(bits)
        ordinal = Signal(ERROR_FIELDS["ordinal"][1])
        good = frame_crc(frame) == frame.crc
        distance = wrapped(frame.seq - expected, bits)
        ahead = (distance != 0) & (distance < 1 << (bits - 1))
        behind = distance >= 1 << (bits - 1)
        arrived = self.i.valid & ~self.failed
        in_sequence = arrived & good & ~frame.control & (distance == 0)
        # In detect mode control frames are numbered too, so that losing one is a fault as well.
        counted = in_sequence | (arrived & good & frame.control & (distance == 0) if not check.retransmit else 0)
        m.d.comb += self.failed.eq(self.error[:ERROR_FIELDS["kind"][1]] != 0)

        def latch(kind, received=frame.seq):
            with m.If(~self.failed & ~self.frozen):
                m.d.sync += self.error.eq(error_word_of(KIND[kind], expected, received, ordinal))

        taken, overflow = self._deliver(m, in_sequence, frame)
        with m.If(taken):
            m.d.sync += ordinal.eq(ordinal + 1)
        with m.If(taken | (counted & ~in_sequence)):
            m.d.sync += expected.eq(expected + 1)
        # Dropped: a frame not counted, but for a good control frame with retransmission (which
        # shows the sender's next number only).
        dropped = arrived & ~counted & ((~good | ~frame.control) if check.retransmit else 1)
        with m.If(dropped & ~self.frozen):
            m.d.sync += self.discarded.eq(self.discarded + 1)
        if check.retransmit:
            self._request_replays(m, arrived, in_sequence, good, ahead, behind, frame)
        else:
            with m.If(arrived & ~good):
                latch("corrupt")
            with m.Elif(arrived & ahead):
                latch("lost")
            with m.Elif(arrived & behind):
                latch("duplicate")
        with m.If(overflow):
            latch("overflow")
        with m.If(self._silent(m)):
            latch("dead", received=expected)
        with m.If(self.count_error):
            latch("count", received=expected)
        return m

    def _deliver(self, m, take, frame):
        """Pass an in-sequence frame's word on; return the signals that it was, and that it overflowed."""
        if not self._check.retransmit:
            # Straight through: the link waits while the link receiver does.
            m.d.comb += [self.o.valid.eq(take), self.o.payload.eq(frame.body),
                         self.i.ready.eq(~take | self.o.ready)]
            return take & self.o.ready, Const(0)
        # Every frame is taken at once: the sender's window fits this buffer.
        m.submodules.buffer = buffer = StreamFIFO(shape=self._word, depth=self._check.replay_depth)
        wiring.connect(m, buffer.o, wiring.flipped(self.o))
        m.d.comb += [buffer.i.valid.eq(take), buffer.i.payload.eq(frame.body), self.i.ready.eq(1)]
        consumed = Signal(self._check.seq_bits)
        with m.If(buffer.o.valid & buffer.o.ready):
            m.d.sync += consumed.eq(consumed + 1)
        m.d.comb += self.ack_out.eq(consumed)
        return take, take & ~buffer.i.ready

    def _request_replays(self, m, arrived, in_sequence, good, ahead, behind, frame):
        """NAK a bad or out-of-sequence frame, or a control frame that shows one lost; pass the
        peer's acknowledgement and NAK to the sender beside this receiver."""
        check = self._check
        missing = Signal()        # a frame is missing: NAKed, waiting for the replay
        retry = Signal(range(check.nak_retry_cycles + 1))
        gap = arrived & (~good | ahead)
        replayed = arrived & good & ~frame.control & behind   # a replay under way, not there yet
        with m.If(self.nak_sent):
            m.d.sync += self.nak_out.eq(0)
        with m.If(in_sequence):
            m.d.sync += missing.eq(0)
        with m.Elif(gap & ~missing):
            m.d.sync += [missing.eq(1), self.nak_out.eq(1), retry.eq(0)]
        with m.Elif(missing):
            with m.If(replayed):
                m.d.sync += retry.eq(0)
            with m.Elif(retry == check.nak_retry_cycles):
                m.d.sync += [self.nak_out.eq(1), retry.eq(0)]
            with m.Else():
                m.d.sync += retry.eq(retry + 1)
        m.d.comb += [self.peer_ack.eq(frame.ack), self.peer_ack_valid.eq(arrived & good),
                     self.peer_nak.eq(arrived & good & frame.nak)]

    def _silent(self, m):
        """Signal: nothing was offered for ``silence_cycles`` since the run started (a dead link)."""
        limit = self._check.silence_cycles
        started = Signal()
        with m.If(self.start):
            m.d.sync += started.eq(1)
        silence = Signal(range(limit + 1))
        with m.If(self.i.valid | ~started):
            m.d.sync += silence.eq(0)
        with m.Elif(silence != limit):
            m.d.sync += silence.eq(silence + 1)
        return silence == limit


def error_word_of(kind, expected, received, ordinal):
    """The error word (:func:`gravfm.hw.link_check.error_word`) of a kind and three signals."""
    values = {"kind": Const(kind, ERROR_FIELDS["kind"][1]), "expected": expected, "received": received,
              "ordinal": ordinal}
    parts = []
    for name, (offset, width) in ERROR_FIELDS.items():   # contiguous fields, in order
        value = Value.cast(values[name])
        parts.append(Cat(value, Const(0, width - len(value))) if len(value) < width else value[:width])
    return Cat(*parts)
