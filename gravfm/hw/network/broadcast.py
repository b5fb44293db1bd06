"""Copy one stream to several destinations, each taking its copy when it can."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Broadcaster"]


class Broadcaster(wiring.Component):
    """One input item goes to every output; it leaves when all outputs have taken it.

    A destination that already took the item is masked, so a slow destination delays the next
    item but never makes a fast one receive a duplicate.

    Parameters
    ----------
    shape : ShapeLike
        Payload layout.
    count : int
        Number of outputs.

    Ports
    -----
    i : In(stream)
    o : Out(array of ``count`` streams)
    """

    def __init__(self, *, shape, count):
        if not isinstance(count, int) or count < 1:
            raise TypeError(f"broadcast count must be a positive integer, not {count!r}")
        self._count = count
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)).array(count),
        })

    def elaborate(self, platform):
        m = Module()
        taken = Signal(self._count)
        accepted = Signal(self._count)
        for j, out in enumerate(self.o):
            m.d.comb += [
                out.valid.eq(self.i.valid & ~taken[j]),
                out.payload.eq(self.i.payload),
                accepted[j].eq(out.valid & out.ready),
            ]
        complete = (taken | accepted).all()
        m.d.comb += self.i.ready.eq(complete)
        with m.If(self.i.valid):
            with m.If(complete):
                m.d.sync += taken.eq(0)
            with m.Else():
                m.d.sync += taken.eq(taken | accepted)
        return m
