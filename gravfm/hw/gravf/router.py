"""Sender-side router of the GraVF baseline: unicast messages, one barrier copy per destination.

A message goes to the PE named by the top ``pe_bits`` of its ``neighbor`` (the destination's
hardware id) and is counted for that destination. The round's barrier is copied to every
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
    destinations : int
        Number of PEs.
    local_bits : int
        Low bits of a hardware id (the local index); the bits above select the destination.

    Ports
    -----
    i : In(stream)
        Messages then the round's barrier (its ``sent_any`` set by the PE, ``count`` ignored).
    o : Out(array of ``destinations`` streams)
    """

    def __init__(self, *, layout, destinations, local_bits):
        if not isinstance(destinations, int) or destinations < 1:
            raise TypeError(f"router destinations must be a positive integer, not {destinations!r}")
        self._layout = layout
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
        target = item.neighbor[self._local_bits:]
        barrier = item.barrier
        for d, out in enumerate(self.o):
            m.d.comb += [
                out.valid.eq(self.i.valid & Mux(barrier, ~taken[d], target == d)),
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

