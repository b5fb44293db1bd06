"""The hybrid's PE core: a scatter unit for the updates this PE owns, messages out and in.

::

    apply ─ update queue ─▶ net_out.updates                   (to this PE's endpoint and the links)
    net_in.updates ─ skid ─▶ scatter unit ─ skid ─▶ net_out.messages     (the message network)
    net_in.messages ─ skid, message FIFO, skid ─▶ gather

The scatter unit is GraVF-M's (edge index by the sender's hardware id) holding the owned
senders' edges into this FPGA, with GraVF's edge words (``dst`` a hardware id, so ``pe_index``
0 adds nothing above it). Its barrier leaves with the ``sent_any`` of the update endpoint's
barrier as it entered: the next round's barrier cannot enter before this one has left (it
needs this PE's next apply pass, which needs its gather's barrier, which needs this one).
"""

from amaranth.lib import wiring

from ..pe.cores import _Core
from ..skid_buffer import SkidBuffer
from .network import pe_port_signature

__all__ = ["HybridScatter"]


class HybridScatter(_Core):
    """Hybrid: scatter the updates whose sender this PE's scatter unit owns; gather the messages
    the message network delivers.

    In: ``updates`` (one barrier per round) and ``messages`` (one barrier per round); out:
    ``updates`` (apply's) and ``messages`` (the scatter unit's, then its barrier with ``sent_any``).
    """

    def __init__(self, *, layouts, config, pe_index, kernel):
        super().__init__(layouts=layouts, config=config, pe_index=pe_index, kernel=kernel,
                         in_layout=layouts.net_update, out_layout=layouts.net_update)
        port = pe_port_signature(layouts.net_update, layouts.net_message)
        self.in_signature, self.out_signature = port, port

    def build(self, m, *, net_in, net_out, gather, apply):
        layouts = self.layouts
        # Index entry = the sender's hardware id (senders of any FPGA may be owned here).
        m.submodules.scatter = scatter = self._scatter_unit(pe_index=0, index_bits=self.config.vertexid_bits)
        queue = self._update_queue(m, apply)
        wiring.connect(m, queue.o, net_out.updates)
        # A registered stage between the endpoint and scatter, as GraVF-M's.
        m.submodules.updates_in_buffer = updates_in = SkidBuffer(shape=layouts.pe_updates)
        wiring.connect(m, net_in.updates, updates_in.i)
        wiring.connect(m, updates_in.o, scatter.updates)
        out_valid = self._scattered_messages_out(m, scatter, net_out.messages)
        in_flight = self._network_messages_to_gather(m, net_in.messages, gather)
        return scatter, [updates_in.o.valid, scatter.active, out_valid, *in_flight]
