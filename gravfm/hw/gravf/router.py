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

from amaranth.hdl import Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..network.broadcast import route_counted

__all__ = ["MessageRouter"]


class MessageRouter(wiring.Component):
    """Route one PE's messages (or one link's) to the local PEs and the links.

    Parameters
    ----------
    layout : StructLayout
        ``net_message`` of :class:`~gravfm.hw.gravf.layouts.GravfLayouts`.
    local_bits : int
        Low bits of a hardware id (the local index); the bits above are the global PE index.
    pes, fpgas : int
        PEs per FPGA and FPGAs: global PE ``g`` is local PE ``g % pes`` of FPGA ``g // pes``.
    fpga_index : int or Value
        This FPGA's index (a register loaded by the host: every FPGA has the same router).
    from_link : bool
        The router behind a link receiver: every message it gets is for a local PE, so it has
        only the ``pes`` local outputs.

    Ports
    -----
    i : In(stream)
        Messages then the round's barrier (its ``sent_any`` set by the PE, ``count`` ignored).
    o : Out(array of streams)
        Local PE ``d`` at output ``d``; unless ``from_link``, link ``k`` (to the k-th other FPGA
        in increasing order) at output ``pes + k``.
    """

    def __init__(self, *, layout, local_bits, pes, fpgas=1, fpga_index=0, from_link=False):
        self._layout = layout
        self._local_bits = local_bits
        self._pes, self._fpgas = pes, fpgas
        self._fpga_index = fpga_index
        self._from_link = from_link
        self._destinations = pes if from_link else pes + fpgas - 1
        super().__init__({
            "i": In(stream.Signature(layout)),
            "o": Out(stream.Signature(layout)).array(self._destinations),
        })

    def _target(self, m, neighbor):
        """One-hot output of the message to ``neighbor`` (a hardware id)."""
        pes, fpgas = self._pes, self._fpgas
        target = Signal(self._destinations)
        dest_pe = neighbor[self._local_bits:]
        # Where each global PE lives: the same table on every FPGA.
        dest_fpga = Signal(range(fpgas))
        dest_local = Signal(range(pes))
        with m.Switch(dest_pe):
            for g in range(pes * fpgas):
                with m.Case(g):
                    m.d.comb += [dest_fpga.eq(g // pes), dest_local.eq(g % pes)]
        local = Const(1) if self._from_link else dest_fpga == self._fpga_index
        for d in range(pes):
            m.d.comb += target[d].eq(local & (dest_local == d))
        if not self._from_link:
            # Link k goes to the k-th other FPGA: FPGAs above this one shift down by one.
            link = Signal(range(max(fpgas - 1, 1)))
            m.d.comb += link.eq(dest_fpga - (dest_fpga > self._fpga_index))
            for k in range(fpgas - 1):
                m.d.comb += target[pes + k].eq(~local & (link == k))
        return target

    def elaborate(self, platform):
        m = Module()
        route_counted(m, self.i, self.o, target=self._target(m, self.i.payload.neighbor))
        return m
