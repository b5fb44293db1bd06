"""Router of the updates arriving from a link: each to the scatter unit that owns its sender.

The hybrid's owner of a sender is the local PE index of the sender's PE (its global PE index mod
``pes``, ``pes`` a power of two: the bits of ``sender`` just above ``local_bits``). An update
goes to that output and is counted for it; the round's barrier is copied to every output, each
copy carrying the number of updates sent there this round and the link's ``sent_any`` (the
destination :class:`~gravfm.hw.network.Endpoint` waits for the counted updates). A copy already
taken is masked (:func:`~gravfm.hw.network.broadcast.distribute`).
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..network.broadcast import route_counted
from ..unused import refusal

__all__ = ["OwnerRouter"]


class OwnerRouter(wiring.Component):
    """Route a round-sorted update stream to ``pes`` outputs by the sender's local PE bits.

    Parameters
    ----------
    layout : StructLayout
        ``net_update`` (``sender``, ``barrier``, ``count``, ``sent_any``).
    pes : int
        Outputs (a power of two).
    local_bits : int
        Local-index bits of a hardware id.

    Ports
    -----
    i : In(stream)
        Updates, then one barrier per round (its ``count`` ignored).
    o : Out(array of ``pes`` streams)
        Output ``d``: the updates whose sender's PE is ``d`` mod ``pes``, then a barrier counting them.
    """

    def __init__(self, *, layout, pes, local_bits):
        if not isinstance(pes, int) or pes < 1 or pes & (pes - 1):
            raise refusal(self, f"owner router outputs must be a power of two, not {pes!r}")
        self._layout, self._pes, self._local_bits = layout, pes, local_bits
        super().__init__({"i": In(stream.Signature(layout)), "o": Out(stream.Signature(layout)).array(pes)})

    def elaborate(self, platform):
        m = Module()
        p = self._pes
        owner = self.i.payload.sender[self._local_bits:self._local_bits + (p.bit_length() - 1)]
        target = Signal(p)
        m.d.comb += target.eq(Cat(owner == d for d in range(p)))
        route_counted(m, self.i, self.o, target=target)
        return m
