"""The dataflow core of a PE: where scatter sits, which the architecture chooses.

The PE shell (:class:`gravfm.hw.pe.ProcessingElement`) holds what both architectures share:
host registers, gather, apply, the vertex memory, the touched list, counters, round logs and the
host read path. A core adds the scatter unit, the queues and the registered stages around it,
and joins them to the shell's network ports:

* :class:`ReceiverScatter` (GraVF-M): the network delivers *updates*; this PE scatters each over
  its own edge list of the sender and gathers the messages. Its apply's updates go out to the
  network (broadcast).
* :class:`SenderScatter` (GraVF): apply's updates are scattered here over the sender's complete
  out-edge list; the *messages* go out to the network, which routes each to its destination
  PE; incoming messages go straight to gather.

A core's :meth:`build` returns the scatter unit (counters and round logs read it) and the
signals that say the core holds work (the ``busy`` counter).
"""

from amaranth.hdl import Signal
from amaranth.lib import stream, wiring

from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO
from .offchip_scatter import OffchipScatterUnit
from .scatter import ScatterUnit

__all__ = ["ReceiverScatter", "SenderScatter"]


class _Core:
    """What both cores share: their construction, the update queue and the message FIFO.

    ``in_signature`` and ``out_signature`` are the streams of the PE's network ports.
    """

    def __init__(self, *, layouts, config, pe_index, kernel, in_layout, out_layout):
        self.layouts = layouts
        self.config = config
        self.pe_index = pe_index
        self.kernel = kernel
        self.in_signature = stream.Signature(in_layout)
        self.out_signature = stream.Signature(out_layout)

    def _scatter_unit(self, *, pe_index, index_bits):
        """The scatter unit with its edges on chip or, per ``config.pe.edge_memory``, off chip
        (its index entries are the low ``index_bits`` bits of an update's sender)."""
        if self.config.pe.offchip:
            return OffchipScatterUnit(layouts=self.layouts, config=self.config, pe_index=pe_index,
                                      kernel=self.kernel, index_bits=index_bits)
        return ScatterUnit(layouts=self.layouts, config=self.config, pe_index=pe_index, kernel=self.kernel)

    def _update_queue(self, m, apply):
        """Apply's updates through a registered stage into the update queue; returns the queue.

        The stage keeps the queue's ``ready`` (from its level) out of the apply kernel and apply's
        pass control; the queue's head register takes its block RAM's output into flip-flops, and
        an update (the round's barrier) reaching an empty queue is in it the next cycle.
        """
        m.submodules.updates_out_buffer = buffer = SkidBuffer(shape=self.layouts.net_update)
        wiring.connect(m, apply.updates, buffer.i)
        m.submodules.update_queue = queue = StreamFIFO(
            shape=self.layouts.net_update, depth=self.config.pe.update_queue_depth, head_register=True, bypass=True)
        wiring.connect(m, buffer.o, queue.i)
        return queue

    def _messages_to_gather(self, m, source, gather):
        """Messages from ``source`` (a stream of ``scatter_out``) through the message FIFO into gather.

        Registered stages on both sides of the FIFO: its ``ready`` would otherwise ripple back
        through whatever feeds it, and gather's hazard checks (its ``ready``) on into the FIFO's
        pointers. Returns the valid bits of the three stages (work in flight).
        """
        layout = self.layouts.scatter_out
        m.submodules.messages_in_buffer = into = SkidBuffer(shape=layout)
        m.submodules.message_fifo = fifo = StreamFIFO(shape=layout, depth=self.config.pe.message_fifo_depth,
                                                      head_register=True, bypass=True)
        m.submodules.messages_buffer = out = SkidBuffer(shape=layout)
        wiring.connect(m, source, into.i)
        wiring.connect(m, into.o, fifo.i)
        wiring.connect(m, fifo.o, out.i)
        wiring.connect(m, out.o, gather.messages)
        return [into.o.valid, fifo.o.valid, out.o.valid]

    def _scattered_messages_out(self, m, scatter, net_out):
        """The scatter unit's messages to ``net_out`` (a stream of ``net_message``), its barrier
        with the round's ``sent_any``; returns the registered stage's valid (work in flight).

        ``sent_any`` is taken from the barrier as it entered the scatter unit: the next round's
        barrier cannot enter before this one has left (the next apply waits for this PE's own
        barrier). A registered stage in front of the network keeps its ready out of the scatter
        pipeline.
        """
        layouts = self.layouts
        sent_any = Signal()
        with m.If(scatter.updates.valid & scatter.updates.ready & scatter.updates.payload.barrier):
            m.d.sync += sent_any.eq(scatter.updates.payload.sent_any)
        m.submodules.messages_out_buffer = out = SkidBuffer(shape=layouts.net_message)
        produced = scatter.messages.payload
        m.d.comb += [
            out.i.valid.eq(scatter.messages.valid),
            scatter.messages.ready.eq(out.i.ready),
            out.i.payload.sent_any.eq(produced.barrier & sent_any),
            *_copy_fields(out.i.payload, produced, layouts.scatter_out),
        ]
        wiring.connect(m, out.o, net_out)
        return out.o.valid

    def _network_messages_to_gather(self, m, net_in, gather):
        """Messages from the network (``net_message``) to gather: their message fields (``count``
        and ``sent_any`` are the endpoint's business) through :meth:`_messages_to_gather`."""
        arriving = stream.Signature(self.layouts.scatter_out).create()
        m.d.comb += [
            arriving.valid.eq(net_in.valid),
            net_in.ready.eq(arriving.ready),
            *_copy_fields(arriving.payload, net_in.payload, self.layouts.scatter_out),
        ]
        return self._messages_to_gather(m, arriving, gather)


class ReceiverScatter(_Core):
    """GraVF-M: scatter the updates this PE receives; its own updates go to the network.

    In: updates (``config.pe.update_lanes`` per cycle); out: this PE's updates.
    """

    def __init__(self, *, layouts, config, pe_index, kernel):
        super().__init__(layouts=layouts, config=config, pe_index=pe_index, kernel=kernel,
                         in_layout=layouts.pe_updates, out_layout=layouts.net_update)

    def build(self, m, *, net_in, net_out, gather, apply):
        # Index entry = the sender's hardware id (every vertex of the system may send here).
        m.submodules.scatter = scatter = self._scatter_unit(pe_index=self.pe_index,
                                                            index_bits=self.config.vertexid_bits)
        # A registered stage between the network endpoint and scatter: the endpoint's arbiter
        # (grant, payload mux, per-source ready) and scatter's accept logic would otherwise form
        # one combinational path across the chip (one cycle more per superstep).
        m.submodules.updates_in_buffer = updates_in = SkidBuffer(shape=self.layouts.pe_updates)
        wiring.connect(m, net_in, updates_in.i)
        wiring.connect(m, updates_in.o, scatter.updates)
        in_flight = self._messages_to_gather(m, scatter.messages, gather)
        queue = self._update_queue(m, apply)
        wiring.connect(m, queue.o, net_out)
        return scatter, [updates_in.o.valid, scatter.active, *in_flight]


class SenderScatter(_Core):
    """GraVF: scatter this PE's own updates; the messages go to the network, routed by destination.

    In: messages for this PE's vertices, one barrier per round; out: messages, then the round's
    barrier with ``sent_any``.
    """

    def __init__(self, *, layouts, config, pe_index, kernel):
        super().__init__(layouts=layouts, config=config, pe_index=pe_index, kernel=kernel,
                         in_layout=layouts.net_message, out_layout=layouts.net_message)

    def build(self, m, *, net_in, net_out, gather, apply):
        # pe_index=0: the edge word's dst is already a full hardware id, so the scatter unit
        # must not put this PE's index above it (its extra high bits are truncated away).
        # Index entry = the sender's local index (only this PE's own vertices send here).
        m.submodules.scatter = scatter = self._scatter_unit(pe_index=0, index_bits=self.config.pe.local_bits)
        queue = self._update_queue(m, apply)
        wiring.connect(m, queue.o, scatter.updates)
        out_valid = self._scattered_messages_out(m, scatter, net_out)
        in_flight = self._network_messages_to_gather(m, net_in, gather)
        return scatter, [scatter.active, out_valid, *in_flight]


def _copy_fields(target, source, layout):
    """Assignments ``target.f = source.f`` for every field ``f`` of ``layout``."""
    return [getattr(target, name).eq(getattr(source, name)) for name, _ in layout]
