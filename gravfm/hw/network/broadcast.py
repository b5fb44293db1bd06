"""Copy one stream to several destinations, each taking its copy when it can."""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Broadcaster", "distribute", "route_counted"]


def distribute(m, source, outputs, *, copy, target):
    """Offer the item of the stream ``source`` to the streams ``outputs``; returns ``(accepted, complete)``.

    An item with ``copy`` set goes to every output, each taking its copy once: it leaves when all
    have taken it, and an output that already took it is masked, so a slow output delays the next
    item but never makes a fast one receive a duplicate. Any other item is offered to the outputs
    set in ``target`` (one bit per output) and leaves when one takes it. ``accepted``: the outputs
    taking the item this cycle; ``complete``: a copied item's last copies are taken this cycle.
    The outputs' payload is the source's (a caller may override fields after the call).
    """
    n = len(outputs)
    taken = Signal(n)
    accepted = Signal(n)
    for d, out in enumerate(outputs):
        m.d.comb += [
            out.valid.eq(source.valid & Mux(copy, ~taken[d], target[d])),
            out.payload.eq(source.payload),
            accepted[d].eq(out.valid & out.ready),
        ]
    complete = (taken | accepted).all()
    m.d.comb += source.ready.eq(Mux(copy, complete, accepted.any()))
    with m.If(source.valid & copy):
        with m.If(complete):
            m.d.sync += taken.eq(0)
        with m.Else():
            m.d.sync += taken.eq(taken | accepted)
    return accepted, complete


def route_counted(m, source, outputs, *, target, copy=None):
    """Route a round-sorted stream ``source`` (``barrier`` and ``count`` fields) to ``outputs``.

    An item goes to the outputs set in ``target`` (:func:`distribute`), or with ``copy`` set to
    every output, and is counted for each that takes it; the round's barrier is copied to every
    output, each copy carrying the number of items that output took this round, and the counts
    restart once every copy is taken (the destination's :class:`~gravfm.hw.network.Endpoint`
    waits for the counted items).
    """
    item = source.payload
    counts = [Signal(len(item.count), name=f"count{d}") for d in range(len(outputs))]
    copied = item.barrier if copy is None else item.barrier | copy
    accepted, complete = distribute(m, source, outputs, copy=copied, target=target)
    m.d.comb += [out.payload.count.eq(counts[d]) for d, out in enumerate(outputs)]
    with m.If(source.valid & item.barrier):
        with m.If(complete):
            m.d.sync += [c.eq(0) for c in counts]
    with m.Elif(source.valid):
        for d, count in enumerate(counts):
            with m.If(accepted[d]):
                m.d.sync += count.eq(count + 1)


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
        distribute(m, self.i, self.o, copy=Const(1), target=Const(0, self._count))
        return m
