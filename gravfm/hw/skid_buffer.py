"""Registered stream stages: :class:`SkidBuffer` (every output and the upstream ``ready`` from
flip-flops) and :class:`ReadySlice` (only ``ready`` from a flip-flop, no added latency)."""

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["ReadySlice", "SkidBuffer"]


class _StreamStage(wiring.Component):
    """A stage from stream ``i`` to stream ``o`` of one payload ``shape`` (and ``members`` beside)."""

    def __init__(self, *, shape, members=None):
        self._shape = shape
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape)), **(members or {})})


class SkidBuffer(_StreamStage):
    """Two-entry skid buffer: one item per cycle, and no combinational path from ``o`` to ``i``.

    Put it behind a memory (a FIFO's block-RAM output) or between two handshaking stages to cut
    a timing path: ``o.valid`` and ``o.payload`` are registers, and ``i.ready`` is a register too
    (low only while the skid entry holds the item that arrived when ``o`` refused it).

    Parameters
    ----------
    shape : ShapeLike
        Payload layout.
    lookahead : bool
        Show what ``o`` loads (``next``, ``loads``): a memory with a registered read, addressed
        by ``next`` and enabled by ``loads``, then answers for the item on ``o`` in step with it.

    Ports
    -----
    i : In(stream.Signature(shape))
        Items in; ``ready`` is registered.
    o : Out(stream.Signature(shape))
        The same items, in order, one cycle later at the earliest.
    next, loads : Out(shape), Out(1), with ``lookahead``
        The payload ``o`` holds from the next cycle when ``loads`` (else it keeps its own).
    """

    def __init__(self, *, shape, lookahead=False):
        self._lookahead = lookahead
        super().__init__(shape=shape, members={"next": Out(shape), "loads": Out(1)} if lookahead else None)

    def elaborate(self, platform):
        m = Module()
        i_data, o_data = Value.cast(self.i.payload), Value.cast(self.o.payload)
        skid_valid = Signal()
        skid_data = Signal(len(i_data), reset_less=True)
        m.d.comb += self.i.ready.eq(~skid_valid)
        loads = self.o.ready | ~self.o.valid
        if self._lookahead:
            m.d.comb += [self.loads.eq(loads), Value.cast(self.next).eq(Mux(skid_valid, skid_data, i_data))]
        # The skid entry copies the input whenever it is free, valid or not: its enable is then a
        # flip-flop, not the upstream ``valid`` (often the end of a long path) fanned out to
        # every data bit.
        with m.If(~skid_valid):
            m.d.sync += skid_data.eq(i_data)
        with m.If(loads):
            with m.If(skid_valid):
                m.d.sync += [self.o.valid.eq(1), o_data.eq(skid_data), skid_valid.eq(0)]
            with m.Else():
                m.d.sync += [self.o.valid.eq(self.i.valid), o_data.eq(i_data)]
        with m.Elif(self.i.valid):
            m.d.sync += skid_valid.eq(1)
        return m


class ReadySlice(_StreamStage):
    """A skid register that cuts only the ``ready`` path, at no cost in latency.

    ``i.ready`` is a flip-flop (low only while the skid register holds an item); items pass
    through combinationally while the consumer takes them, and the one offered in a cycle the
    consumer refuses waits in the skid register, then leaves first. Use it where the long path
    is the consumer's ``ready`` running back into the producer's control (a barrier crosses
    such a stage without the cycle a :class:`SkidBuffer` costs); ``o.valid`` and ``o.payload``
    are the input's through a multiplexer.

    Parameters and ports as :class:`SkidBuffer`'s, but ``o`` carries an item in the cycle it
    arrives when nothing waits.
    """

    def elaborate(self, platform):
        m = Module()
        i_data, o_data = Value.cast(self.i.payload), Value.cast(self.o.payload)
        waiting = Signal()
        skid_data = Signal(len(i_data), reset_less=True)
        m.d.comb += [
            self.i.ready.eq(~waiting),
            self.o.valid.eq(waiting | self.i.valid),
            o_data.eq(Mux(waiting, skid_data, i_data)),
        ]
        # As in SkidBuffer: the register copies the input whenever it is free (a flip-flop enable).
        with m.If(~waiting):
            m.d.sync += skid_data.eq(i_data)
        with m.If(waiting):
            with m.If(self.o.ready):
                m.d.sync += waiting.eq(0)
        with m.Elif(self.i.valid & ~self.o.ready):
            m.d.sync += waiting.eq(1)
        return m
