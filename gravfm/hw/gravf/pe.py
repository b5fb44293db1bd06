"""A processing element of the GraVF baseline: apply -> own scatter -> network -> gather.

::

    messages_in ─▶ message FIFO ─▶ GatherUnit ─┐ vertex memory
                                               │ (host, gather, apply)
    messages_out ◀─ ScatterUnit ◀─ update queue ◀─ ApplyUnit ◀──┘
                    (own vertices' full edge lists)

Unlike GraVF-M's PE (:class:`gravfm.hw.pe.ProcessingElement`), updates never leave the PE: its
scatter unit expands them over the sender's complete out-edge list (index addressed by the
sender's hardware id, edge destinations are hardware ids) and the resulting *messages* go onto
the network, which routes each to its destination PE. Incoming messages go straight to gather.
The units, the vertex memory, the host interface, the counters and the round log are those of
GraVF-M's PE (docs/interfaces.md §5), so both architectures are loaded and read the same way.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..host_read import pe_host_read
from ..pe.apply import ApplyUnit
from ..pe.gather_forward import build_gather_unit
from ..pe.pe import round_logs
from ..protocol import COUNTER_BITS, COUNTER_NAMES, HostMem, HostReadMem, PeRegister
from ..pe.scatter import ScatterUnit
from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO

__all__ = ["GravfProcessingElement"]


class GravfProcessingElement(wiring.Component):
    """One PE of a GraVF-baseline system.

    Parameters
    ----------
    layouts : gravfm.hw.gravf.GravfLayouts
    config : gravfm.hw.SystemConfig
    pe_index : int
        Global PE index.
    kernels : dict
        ``{"gather", "apply", "scatter"}`` components.
    addr_bits, wr_data_bits, rd_data_bits : int
        Widths of the host interface.

    Ports
    -----
    messages_in : In(stream net_message)
        From this PE's endpoint: messages for its vertices, one barrier per round.
    messages_out : Out(stream net_message)
        Scattered messages, then the round's barrier with ``sent_any`` (to the router).
    start, terminated, waiting, wr_*, rd_*, round
        As :class:`gravfm.hw.pe.ProcessingElement`.
    """

    def __init__(self, *, layouts, config, pe_index, kernels, addr_bits, wr_data_bits, rd_data_bits):
        self._layouts = layouts
        self._config = config
        self._pe_index = pe_index
        self._kernels = kernels
        super().__init__({
            "messages_in": In(stream.Signature(layouts.net_message)),
            "messages_out": Out(stream.Signature(layouts.net_message)),
            "start": In(1),
            "terminated": In(1),
            "waiting": In(1),
            "wr_en": In(1), "wr_mem": In(3), "wr_addr": In(addr_bits), "wr_data": In(wr_data_bits),
            "rd_mem": In(3), "rd_addr": In(addr_bits), "rd_data": Out(rd_data_bits),
            "round": Out(config.round_bits),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, config = self._layouts, self._config
        local_bits = config.local_bits
        vertex_bits = layouts.vertex.size

        # pe_index=0: the edge word's dst is already a full hardware id, so the scatter unit
        # must not put this PE's index above it (its extra high bits are truncated away).
        m.submodules.scatter = scatter = ScatterUnit(
            layouts=layouts, config=config, pe_index=0, kernel=self._kernels["scatter"])
        m.submodules.message_fifo = message_fifo = StreamFIFO(
            shape=layouts.net_message, depth=config.message_fifo_depth)
        m.submodules.gather = gather = build_gather_unit(
            layouts=layouts, config=config, kernel=self._kernels["gather"])
        sparse = bool(getattr(config.algorithm, "sparse_apply", False))
        m.submodules.apply = apply = ApplyUnit(
            layouts=layouts, config=config, pe_index=self._pe_index, kernel=self._kernels["apply"],
            sparse=sparse)
        if sparse:
            m.submodules.touched = touched = StreamFIFO(shape=local_bits, depth=config.vertices_per_pe + 1)
            host_list = self.wr_en & (self.wr_mem == HostMem.APPLY_LIST)
            m.d.comb += [
                touched.i.valid.eq(gather.touch.valid | host_list),
                touched.i.payload.eq(Mux(host_list, self.wr_data[:local_bits], gather.touch.payload)),
                gather.touch.ready.eq(touched.i.ready),
            ]
            m.submodules.touched_out = touched_out = SkidBuffer(shape=local_bits)
            wiring.connect(m, touched.o, touched_out.i)
            wiring.connect(m, touched_out.o, apply.touched)
            pending = Signal(range(config.vertices_per_pe + 1))
            pushed = touched.i.valid & touched.i.ready
            popped = apply.touched.valid & apply.touched.ready
            with m.If(pushed & ~popped):
                m.d.sync += pending.eq(pending + 1)
            with m.Elif(popped & ~pushed):
                m.d.sync += pending.eq(pending - 1)
            m.d.comb += apply.touched_pending.eq(pending != 0)
        else:
            m.d.comb += gather.touch.ready.eq(1)
        m.submodules.update_queue = update_queue = StreamFIFO(
            shape=layouts.net_update, depth=config.update_queue_depth)

        wiring.connect(m, apply.updates, update_queue.i)
        wiring.connect(m, update_queue.o, scatter.updates)

        # Scatter output -> network. The barrier leaves with the round's sent_any, taken from
        # apply's barrier as it entered the scatter unit: the next round's barrier cannot enter
        # before this one has left (the next apply waits for this PE's own barrier copy).
        sent_any = Signal()
        with m.If(scatter.updates.valid & scatter.updates.ready & scatter.updates.payload.barrier):
            m.d.sync += sent_any.eq(scatter.updates.payload.sent_any)
        out = self.messages_out.payload
        produced = scatter.messages.payload
        m.d.comb += [
            self.messages_out.valid.eq(scatter.messages.valid),
            scatter.messages.ready.eq(self.messages_out.ready),
            out.message.eq(produced.message),
            out.neighbor.eq(produced.neighbor),
            out.sender.eq(produced.sender),
            out.round.eq(produced.round),
            out.barrier.eq(produced.barrier),
            out.sent_any.eq(produced.barrier & sent_any),
        ]

        # Network -> gather.
        wiring.connect(m, wiring.flipped(self.messages_in), message_fifo.i)
        incoming = message_fifo.o.payload
        given = gather.messages.payload
        m.d.comb += [
            gather.messages.valid.eq(message_fifo.o.valid),
            message_fifo.o.ready.eq(gather.messages.ready),
            given.message.eq(incoming.message),
            given.neighbor.eq(incoming.neighbor),
            given.sender.eq(incoming.sender),
            given.round.eq(incoming.round),
            given.barrier.eq(incoming.barrier),
        ]

        # Host writes (edge index address = the sender's hardware id, as in GraVF-M).
        host_write = {code: self.wr_en & (self.wr_mem == code) for code in range(5)}
        num_local = Signal(local_bits + 1)
        sparse_round0 = Signal()
        with m.If(host_write[HostMem.REGISTERS] & (self.wr_addr == PeRegister.NUM_LOCAL)):
            m.d.sync += num_local.eq(self.wr_data)
        with m.If(host_write[HostMem.REGISTERS] & (self.wr_addr == PeRegister.SPARSE_ROUND0)):
            m.d.sync += sparse_round0.eq(self.wr_data[0])
        m.d.comb += [
            scatter.index_wr.en.eq(host_write[HostMem.EDGE_INDEX]),
            scatter.index_wr.addr.eq(self.wr_addr),
            scatter.index_wr.data.eq(self.wr_data),
            scatter.edge_wr.en.eq(host_write[HostMem.EDGES]),
            scatter.edge_wr.addr.eq(self.wr_addr),
            scatter.edge_wr.data.eq(self.wr_data),
        ]

        # Vertex memory.
        m.submodules.vertex_mem = vertex_mem = memory.Memory(
            shape=layouts.vertex_word, depth=2 ** local_bits, init=[])
        vertex_wr = vertex_mem.write_port()
        for unit in (gather, apply):
            rd = vertex_mem.read_port(transparent_for=(vertex_wr,))
            m.d.comb += [rd.addr.eq(unit.rd.addr), rd.en.eq(unit.rd.en), unit.rd.data.eq(rd.data)]
        with m.If(host_write[HostMem.VERTEX]):
            m.d.comb += [vertex_wr.en.eq(1), vertex_wr.addr.eq(self.wr_addr),
                         vertex_wr.data.state.eq(self.wr_data[:vertex_bits])]
        with m.Elif(apply.busy):
            m.d.comb += [vertex_wr.en.eq(apply.wr.en), vertex_wr.addr.eq(apply.wr.addr),
                         vertex_wr.data.eq(apply.wr.data)]
        with m.Else():
            m.d.comb += [vertex_wr.en.eq(gather.wr.en), vertex_wr.addr.eq(gather.wr.addr),
                         vertex_wr.data.eq(gather.wr.data)]

        m.d.comb += [
            apply.num_local.eq(num_local),
            apply.sparse_round0.eq(sparse_round0),
            apply.start.eq(self.start | gather.apply_start),
            gather.apply_done.eq(apply.done),
            self.round.eq(apply.round),
        ]

        # Counters.
        started = Signal()
        with m.If(self.start):
            m.d.sync += started.eq(1)
        running = started & ~self.terminated
        busy = scatter.active | gather.active | apply.busy | message_fifo.o.valid
        events = {
            "cycles": 1,
            "busy": busy,
            "messages": scatter.edge_strobe,
            "updates": apply.update_strobe,
            "supersteps": apply.done,
            "stall_hazard": gather.hazard_stall,
            "stall_backpressure": scatter.stall,
            "wait_barrier": self.waiting & ~busy,
            "apply_cycles": apply.busy,
        }
        counters = {}
        for name in COUNTER_NAMES:
            counters[name] = counter = Signal(COUNTER_BITS, name=f"count_{name}")
            with m.If(running & events[name]):
                m.d.sync += counter.eq(counter + 1)

        # Per-round log (messages are counted where they are scattered: at the sender here).
        log_reads = round_logs(m, depth=config.max_rounds, scatter=scatter, apply=apply,
                               cycles=counters["cycles"], rd_addr=self.rd_addr, ram_style="distributed")

        host_vertex = vertex_mem.read_port()
        m.d.comb += host_vertex.addr.eq(self.rd_addr)
        pe_host_read(m, rd_mem=self.rd_mem, rd_addr=self.rd_addr, rd_data=self.rd_data,
                     counters_code=HostReadMem.COUNTERS, counters=[counters[n] for n in COUNTER_NAMES],
                     memories={HostReadMem.VERTEX: host_vertex.data.state.as_value(), **log_reads})
        return m
