"""Router of the GraVF baseline: unicast messages, one barrier copy per destination.

A message goes to the output that ``route`` gives for the PE named by the bits of its
``neighbor`` (the destination's hardware id) above the local index, and is counted for that
output. A PE's router has one output per local PE and one per remote FPGA; the router behind a
link receiver has one output per local PE. The round's barrier is copied to every
destination, each copy carrying the number of messages sent there this round (so the
destination's :class:`~gravfm.hw.network.Endpoint` can tell when the round is complete); the
counts restart once every copy has been taken. Like :class:`~gravfm.hw.network.Broadcaster`,
a copy already taken is masked, so a slow destination never makes a fast one see a duplicate.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["MessageRouter"]


class MessageRouter(wiring.Component):
    """Route one PE's messages to ``destinations`` outputs.

    Parameters
    ----------
    layout : StructLayout
        ``net_message`` of :class:`~gravfm.hw.gravf.layouts.GravfLayouts`.
    route : sequence of int or None
        Output of each global PE index (None: no message is ever addressed to that PE here);
        the number of outputs is ``max(route) + 1``.
    local_bits : int
        Low bits of a hardware id (the local index); the bits above are the global PE index.

    Ports
    -----
    i : In(stream)
        Messages then the round's barrier (its ``sent_any`` set by the PE, ``count`` ignored).
    o : Out(array of streams, one per output)
    """

    def __init__(self, *, layout, route, local_bits):
        route = tuple(route)
        outputs = [d for d in route if d is not None]
        if not outputs or any(not isinstance(d, int) or d < 0 for d in outputs):
            raise TypeError(f"router route must map PEs to output indices, not {route!r}")
        destinations = max(outputs) + 1
        self._layout = layout
        self._route = route
        self._destinations = destinations
        self._local_bits = local_bits
        super().__init__({
            "i": In(stream.Signature(layout)),
            "o": Out(stream.Signature(layout)).array(destinations),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._destinations
        count_bits = len(self.i.payload.count)
        counts = [Signal(count_bits, name=f"count{d}") for d in range(n)]
        taken = Signal(n)
        accepted = Signal(n)
        item = self.i.payload
        target = Signal(n)   # one-hot output of the message's destination PE
        with m.Switch(item.neighbor[self._local_bits:]):
            for pe, d in enumerate(self._route):
                if d is not None:
                    with m.Case(pe):
                        m.d.comb += target[d].eq(1)
        barrier = item.barrier
        for d, out in enumerate(self.o):
            m.d.comb += [
                out.valid.eq(self.i.valid & Mux(barrier, ~taken[d], target[d])),
                out.payload.eq(item),
                out.payload.count.eq(counts[d]),
                accepted[d].eq(out.valid & out.ready),
            ]
        complete = (taken | accepted).all()
        m.d.comb += self.i.ready.eq(Mux(barrier, complete, accepted.any()))
        with m.If(self.i.valid & barrier):
            with m.If(complete):
                m.d.sync += taken.eq(0)
                m.d.sync += [c.eq(0) for c in counts]
            with m.Else():
                m.d.sync += taken.eq(taken | accepted)
        with m.Elif(self.i.valid):
            for d in range(n):
                with m.If(accepted[d]):
                    m.d.sync += counts[d].eq(counts[d] + 1)
        return m

