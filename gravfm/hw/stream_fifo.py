"""A synchronous FIFO with stream ports carrying a data layout."""

from amaranth.hdl import Module, Shape, Signal, Value
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["StreamFIFO"]


class StreamFIFO(wiring.Component):
    """First-word-fall-through FIFO between two streams.

    Parameters
    ----------
    shape : ShapeLike
        Payload layout.
    depth : int
        Capacity in items (a memory-backed ``SyncFIFOBuffered``).
    output_register : bool
        Put a plain register (enable only, no logic in front) behind the buffer's output, one
        more item of capacity and one cycle of latency. A deep FIFO lands in block RAM, whose
        output comes late (ECP5 DP16KD: ~4.3 ns clock-to-out); this ends that path at a
        flip-flop instead of running it into the consumer's logic. ``o.ready`` then reaches
        the buffer's read enable combinationally.

    Ports
    -----
    i : In(stream.Signature(shape))
        Items to store; ``ready`` is low when full.
    o : Out(stream.Signature(shape))
        Items in arrival order.
    level : Out(range(depth + 1))
        Number of items stored (not counting the output register).
    """

    def __init__(self, *, shape, depth, output_register=False):
        if not isinstance(depth, int) or depth < 1:
            raise TypeError(f"FIFO depth must be a positive integer, not {depth!r}")
        self._shape = shape
        self._depth = depth
        self._output_register = output_register
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)),
            "level": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        width = Shape.cast(self._shape).width
        m.submodules.fifo = buffer = fifo.SyncFIFOBuffered(width=width, depth=self._depth)
        m.d.comb += [
            buffer.w_data.eq(Value.cast(self.i.payload)),
            buffer.w_en.eq(self.i.valid),
            self.i.ready.eq(buffer.w_rdy),
            self.level.eq(buffer.level),
        ]
        if not self._output_register:
            m.d.comb += [Value.cast(self.o.payload).eq(buffer.r_data), self.o.valid.eq(buffer.r_rdy),
                         buffer.r_en.eq(self.o.ready)]
            return m
        advance = ~self.o.valid | self.o.ready
        data = Signal(width, reset_less=True)  # no reset logic between the memory and the register
        m.d.comb += [buffer.r_en.eq(advance), Value.cast(self.o.payload).eq(data)]
        with m.If(advance):
            m.d.sync += [self.o.valid.eq(buffer.r_rdy), data.eq(buffer.r_data)]
        return m
