"""On-chip network of the GraVF baseline: unicast messages, per-source FIFOs at each destination.

Every PE's messages pass a :class:`~gravfm.hw.gravf.router.MessageRouter` (sender side), then one
FIFO per (source, destination), then the destination's :class:`~gravfm.hw.network.Endpoint`
(round-robin merge, floating barrier with per-source counts, termination) — the same endpoint as
GraVF-M, here counting messages instead of updates.
"""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..network import Endpoint
from ..stream_fifo import StreamFIFO
from .router import MessageRouter

__all__ = ["GravfNetwork"]


class GravfNetwork(wiring.Component):
    """Unicast crossbar between ``pes`` PEs.

    Parameters
    ----------
    layout : StructLayout
        ``net_message``.
    pes : int
    local_bits : int
        Local-index bits of a hardware id (the bits above select the destination PE).
    fifo_depth : int
        Depth of each (source, destination) FIFO.

    Ports
    -----
    src : In(array of ``pes`` streams)
        Each PE's messages and barriers.
    dst : Out(array of ``pes`` streams)
        Each PE's incoming messages, one barrier per round.
    terminated, waiting : Out(pes)
        Per destination: termination detected / waiting for barriers.
    """

    def __init__(self, *, layout, pes, local_bits, fifo_depth=4):
        self._layout = layout
        self._pes = pes
        self._local_bits = local_bits
        self._fifo_depth = fifo_depth
        super().__init__({
            "src": In(stream.Signature(layout)).array(pes),
            "dst": Out(stream.Signature(layout)).array(pes),
            "terminated": Out(pes),
            "waiting": Out(pes),
        })

    def elaborate(self, platform):
        m = Module()
        pes = self._pes
        count_bits = len(self.src[0].payload.count)
        endpoints = []
        for d in range(pes):
            endpoint = Endpoint(layout=self._layout, sources=pes, count_bits=count_bits)
            m.submodules[f"endpoint{d}"] = endpoint
            wiring.connect(m, endpoint.o, wiring.flipped(self.dst[d]))
            m.d.comb += [self.terminated[d].eq(endpoint.terminated), self.waiting[d].eq(endpoint.waiting)]
            endpoints.append(endpoint)
        for s in range(pes):
            router = MessageRouter(layout=self._layout, destinations=pes, local_bits=self._local_bits)
            m.submodules[f"router{s}"] = router
            wiring.connect(m, wiring.flipped(self.src[s]), router.i)
            for d in range(pes):
                buffer = StreamFIFO(shape=self._layout, depth=self._fifo_depth)
                m.submodules[f"fifo{s}_{d}"] = buffer
                wiring.connect(m, router.o[d], buffer.i)
                wiring.connect(m, buffer.o, endpoints[d].i[s])
        return m
