"""On-chip network of the GraVF baseline: unicast messages, per-source FIFOs at each destination.

Every local PE's messages pass a :class:`~gravfm.hw.gravf.router.MessageRouter` (sender side),
then one FIFO per (source, destination), then the destination's
:class:`~gravfm.hw.network.Endpoint` (round-robin merge, floating barrier with per-source counts,
termination) — the same endpoint as GraVF-M, here counting messages instead of updates.

Remote FPGAs attach as in :class:`gravfm.hw.network.Network`: a message for a PE on FPGA ``f``
leaves through ``remote_out[k]`` (``k`` = position of ``f`` among the other FPGAs), merged one
superstep at a time with every local PE's barrier copy by a :class:`~gravfm.hw.network.merge.RoundMerger`;
``remote_in[k]`` (that FPGA's messages, one barrier per round) passes one more router, which
delivers each message to its local PE and gives every local PE a barrier counting its messages.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring

from ..network.network import build_crossbar, network_ports
from .router import MessageRouter

__all__ = ["GravfNetwork", "message_routes"]


def message_routes(fpga, fpgas, pes):
    """Router outputs by global PE index: ``(local_route, remote_route)``.

    ``local_route`` is for a local PE's router (outputs 0..pes-1 = local PEs, then one per other
    FPGA in increasing order); ``remote_route`` for the router behind a link receiver (local PEs
    only).
    """
    first = fpga * pes
    others = [f for f in range(fpgas) if f != fpga]
    local_route, remote_route = [], []
    for g in range(fpgas * pes):
        f = g // pes
        local_route.append(g - first if f == fpga else pes + others.index(f))
        remote_route.append(g - first if f == fpga else None)
    return local_route, remote_route


class GravfNetwork(wiring.Component):
    """Unicast crossbar between ``pes`` local PEs (plus ``fpgas - 1`` link ports).

    Parameters
    ----------
    layout : StructLayout
        ``net_message``.
    pes : int
        Local PEs.
    local_bits : int
        Local-index bits of a hardware id (the bits above select the destination PE).
    fifo_depth : int
        Depth of each (source, destination) FIFO.
    link_fifo_depth : int
        Depth of each (local source, link) FIFO (default: ``fifo_depth``).
    fpga, fpgas : int
        This FPGA and the number of FPGAs (global PE ``g`` lives on FPGA ``g // pes``).

    Ports
    -----
    src : In(array of ``pes`` streams)
        Each PE's messages and barriers.
    dst : Out(array of ``pes`` streams)
        Each PE's incoming messages, one barrier per round.
    terminated, waiting : Out(pes)
        Per destination: termination detected / waiting for barriers.
    remote_in : In(array of ``fpgas - 1`` streams)
        Messages from FPGA link ``k``, then one barrier per round counting them all.
    remote_out : Out(array of ``fpgas - 1`` streams)
        Messages for FPGA link ``k``, round by round, every local PE's barrier copy included.
    """

    def __init__(self, *, layout, pes, local_bits, fifo_depth=4, link_fifo_depth=None, fpga=0, fpgas=1):
        self._layout, self._pes, self._local_bits = layout, pes, local_bits
        self._fifo_depth, self._link_fifo_depth = fifo_depth, link_fifo_depth
        self._fpga, self._remotes = fpga, fpgas - 1
        self._routes = message_routes(fpga, fpgas, pes)
        super().__init__(network_ports(layout, pes=pes, remotes=self._remotes))

    def elaborate(self, platform):
        m = Module()
        local_route, remote_route = self._routes

        def router(s, local):
            return f"router{s}", MessageRouter(layout=self._layout, route=local_route if local else remote_route,
                                               local_bits=self._local_bits)

        build_crossbar(m, self, layout=self._layout, pes=self._pes, remotes=self._remotes,
                       fifo_depth=self._fifo_depth, link_fifo_depth=self._link_fifo_depth,
                       count_bits=len(self.src[0].payload.count), distributor=router)
        return m
