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

__all__ = ["GravfNetwork"]


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
    fpga_index : int or Value
        This FPGA's index (a host-loaded register in an FPGA top).
    fpgas : int
        FPGAs (global PE ``g`` lives on FPGA ``g // pes``).

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

    def __init__(self, *, layout, pes, local_bits, fifo_depth=4, link_fifo_depth=None, fpga_index=0, fpgas=1):
        self._layout, self._pes, self._local_bits = layout, pes, local_bits
        self._fifo_depth, self._link_fifo_depth = fifo_depth, link_fifo_depth
        self._fpga_index, self._fpgas, self._remotes = fpga_index, fpgas, fpgas - 1
        super().__init__(network_ports(layout, pes=pes, remotes=self._remotes))

    def elaborate(self, platform):
        m = Module()

        def router(s, local):
            return f"router{s}", MessageRouter(layout=self._layout, local_bits=self._local_bits, pes=self._pes,
                                               fpgas=self._fpgas, fpga_index=self._fpga_index,
                                               from_link=not local)

        build_crossbar(m, self, layout=self._layout, pes=self._pes, remotes=self._remotes,
                       fifo_depth=self._fifo_depth, link_fifo_depth=self._link_fifo_depth,
                       count_bits=len(self.src[0].payload.count), distributor=router)
        return m
