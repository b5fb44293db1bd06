"""A synchronous FIFO with stream ports carrying a data layout."""

from amaranth.hdl import Module, Shape, Value
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

    Ports
    -----
    i : In(stream.Signature(shape))
        Items to store; ``ready`` is low when full.
    o : Out(stream.Signature(shape))
        Items in arrival order.
    level : Out(range(depth + 1))
        Number of items stored.
    """

    def __init__(self, *, shape, depth):
        if not isinstance(depth, int) or depth < 1:
            raise TypeError(f"FIFO depth must be a positive integer, not {depth!r}")
        self._shape = shape
        self._depth = depth
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
            Value.cast(self.o.payload).eq(buffer.r_data),
            self.o.valid.eq(buffer.r_rdy),
            buffer.r_en.eq(self.o.ready),
            self.level.eq(buffer.level),
        ]
        return m
