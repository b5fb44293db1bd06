"""A processing element: the shell both architectures share, around the architecture's core.

::

    net_in ─▶ core (scatter, message FIFO, queues) ─▶ GatherUnit ─┐ vertex memory
                                                                  │ (host, gather, apply)
    net_out ◀─ core ◀─────────────── ApplyUnit ◀──────────────────┘

The shell holds the host write registers, gather, apply, the vertex memory, the touched list,
the counters, the per-round log and the host read path; the core
(:mod:`gravfm.hw.pe.cores`) places scatter: after the network in GraVF-M, before it in GraVF.
The vertex memory (:mod:`gravfm.hw.pe.vertex_memory`) has one write port shared by the host
(before ``start``), gather and apply (gather's writes first: apply buffers its write-backs), and
read ports for gather, apply and the host (none transparent: gather forwards a write landing as
it reads). For a sparse algorithm with a forwarding gather, the next round's gather runs beside
apply's pass: a message whose vertex the pass has still to visit waits
(:mod:`gravfm.hw.pe.gather_forward`). For an algorithm that names an ``accumulator`` the field
lives in two banks by round parity, so the next round's gather runs beside every pass. Its
words are ``{state, touched}``; for an algorithm with ``sparse_apply`` a FIFO carries the
touched vertices from gather to apply.
Host writes and reads follow :mod:`gravfm.hw.protocol`.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ..axi import memory_port_signature
from ..host_read import pe_host_read
from ..memory_ports import no_read_during_write
from ..protocol import (COUNTER_BITS, COUNTER_NAMES, HOST_MEM_BITS, LOG_BITS, ROUND_LOGS, HostMem, HostReadMem,
                        PeRegister, codes)
from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO
from .apply import ApplyUnit
from .gather_forward import build_gather_unit
from .vertex_memory import shared_vertex_memory, split_vertex_memory

__all__ = ["ProcessingElement", "round_logs", "event_counters"]


class ProcessingElement(wiring.Component):
    """One PE of the generated system.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    config : gravfm.hw.SystemConfig
    pe_index : int or Value
        Global PE index (a register when the host tells the FPGA its index).
    kernels : dict
        ``{"gather", "apply", "scatter"}`` components (from :func:`gravfm.hw.kernels.build_kernels`).
    core : gravfm.hw.pe.cores.ReceiverScatter or SenderScatter
        The architecture's dataflow around scatter (it holds the scatter kernel).
    geometry : gravfm.hw.host.HostGeometry
        Widths of the host interface.

    Ports
    -----
    net_in : In(``core.in_signature``)
        From this PE's network endpoint: updates (GraVF-M) or messages (GraVF).
    net_out : Out(``core.out_signature``)
        To the network.
    start : In(1)
        Pulse: run round 0's apply.
    terminated, waiting : In(1)
        From the endpoint (termination detected; barrier wait).
    wr_en, wr_mem, wr_addr, wr_data : In
        Host write (already selected for this PE).
    rd_mem, rd_addr : In; rd_data : Out
        Host read; ``rd_data`` is a register holding the word ``PE_READ_LATENCY`` cycles
        after the address.
    round : Out(round_bits)
        Round of the apply pass (current or next).
    mem : Out(AXI4 read), off-chip edges only
        The scatter unit's memory port.
    """

    def __init__(self, *, layouts, config, pe_index, kernels, core, geometry):
        self._layouts = layouts
        self._config = config
        self._pe_index = pe_index
        self._kernels = kernels
        self._core = core
        super().__init__({
            "net_in": In(core.in_signature),
            "net_out": Out(core.out_signature),
            "start": In(1),
            "terminated": In(1),
            "waiting": In(1),
            "wr_en": In(1), "wr_mem": In(HOST_MEM_BITS), "wr_addr": In(geometry.addr_bits),
            "wr_data": In(geometry.wr_data_bits),
            "rd_mem": In(HOST_MEM_BITS), "rd_addr": In(geometry.addr_bits), "rd_data": Out(geometry.rd_data_bits),
            "round": Out(config.pe.round_bits),
            **({"mem": Out(memory_port_signature(config.pe))} if config.pe.offchip else {}),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, config = self._layouts, self._config
        local_bits = config.pe.local_bits
        host_write, wr_addr, wr_data, start = self._host_write_strobes(m)

        sparse = bool(getattr(config.algorithm, "sparse_apply", False))
        accumulator = getattr(config.algorithm, "accumulator", None)
        m.submodules.gather = gather = build_gather_unit(
            layouts=layouts, config=config, kernel=self._kernels["gather"], write_latency=1, overlap=sparse)
        m.submodules.apply = apply = ApplyUnit(
            layouts=layouts, config=config, pe_index=self._pe_index, kernel=self._kernels["apply"],
            sparse=sparse)
        if sparse:
            self._touched_list(m, gather, apply, host_list=host_write[HostMem.APPLY_LIST], wr_data=wr_data)
        else:
            m.d.comb += gather.touch.ready.eq(1)
        scatter, core_busy = self._core.build(m, net_in=wiring.flipped(self.net_in),
                                              net_out=wiring.flipped(self.net_out), gather=gather, apply=apply)
        num_local, sparse_round0 = self._host_registers(m, scatter, host_write, wr_addr, wr_data)

        # Vertex memory (gravfm.hw.pe.vertex_memory), the accumulator apart when the algorithm names one.
        memory_ports = dict(layouts=layouts, local_bits=local_bits, gather=gather, apply=apply,
                            host_write=host_write[HostMem.VERTEX], host_addr=wr_addr, host_data=wr_data,
                            host_rd_addr=self.rd_addr)
        if accumulator is None:
            host_vertex = shared_vertex_memory(m, **memory_ports)
        else:
            host_vertex = split_vertex_memory(m, accumulator=accumulator, **memory_ports)

        # Control: round 0 starts at `start`; later rounds when gather has seen the barrier.
        # Gather resumes when apply is done, or as soon as a pass it may overlap has started
        # (a sparse pass beside a forwarding gather, or any pass with the accumulator apart).
        apply_was_busy = Signal()
        m.d.sync += apply_was_busy.eq(apply.busy)
        resume_at_start = (apply.overlap & int(gather.overlaps)) | int(accumulator is not None)
        m.d.comb += [
            apply.num_local.eq(num_local),
            apply.sparse_round0.eq(sparse_round0),
            apply.start.eq(start | gather.apply_start),
            gather.apply_done.eq(apply.done | (apply.busy & ~apply_was_busy & resume_at_start)),
            gather.apply_busy.eq(apply.busy),
            gather.apply_full.eq(apply.full),
            gather.applied_upto.eq(apply.applied_upto),
            self.round.eq(apply.round),
        ]

        counters = self._counters(m, start=start, gather=gather, apply=apply, scatter=scatter, core_busy=core_busy)
        log_reads = round_logs(m, depth=config.pe.max_rounds, scatter=scatter, apply=apply,
                               cycles=counters["cycles"], rd_addr=self.rd_addr)

        # Host reads (registered, HOST_READ_LATENCY cycles; see gravfm.hw.host_read).
        pe_host_read(m, rd_mem=self.rd_mem, rd_addr=self.rd_addr, rd_data=self.rd_data,
                     counters_code=HostReadMem.COUNTERS, counters=[counters[n] for n in COUNTER_NAMES],
                     memories={HostReadMem.VERTEX: host_vertex, **log_reads})
        return m

    def _host_write_strobes(self, m):
        """The host write registered on entry: ``({HostMem code: write strobe}, addr, data, start)``.

        From the top the write fans out to every PE's memory write enables, one long path
        otherwise. A write lands a cycle later and start is delayed alike, so it still follows
        the last write.
        """
        host_write = {}
        for code in codes(HostMem).values():
            host_write[code] = Signal(name=f"host_write{code}")
            m.d.sync += host_write[code].eq(self.wr_en & (self.wr_mem == code))
        wr_addr = Signal.like(self.wr_addr, reset_less=True)
        wr_data = Signal.like(self.wr_data, reset_less=True)
        start = Signal()
        m.d.sync += start.eq(self.start)
        # The address and data registers load only on a write to this PE: every PE sees the same
        # host address and data, so registers loading every cycle would be shared between the
        # PEs by Yosys, one register driving every PE's memory write ports across the chip.
        with m.If(self.wr_en):
            m.d.sync += [wr_addr.eq(self.wr_addr), wr_data.eq(self.wr_data)]
        return host_write, wr_addr, wr_data, start

    def _touched_list(self, m, gather, apply, *, host_list, wr_data):
        """Sparse apply: the FIFO of touched vertices from gather (or the host, before start) to apply."""
        config = self._config
        local_bits = config.pe.local_bits
        # Room for every local vertex: gather reports each vertex at most once per round,
        # and apply drains the list before gather runs again. (+1: a buffered FIFO briefly
        # refuses a write while an item moves into its output register.)
        m.submodules.touched = touched = StreamFIFO(shape=local_bits, depth=config.pe.vertices_per_pe + 1,
                                                    output_register=True)
        # A registered stage between gather and the list: gather's touched-flag compare would
        # otherwise run on into the FIFO's write logic, placed by its block RAM far from
        # gather (one cycle more per superstep).
        m.submodules.touched_in = touched_in = SkidBuffer(shape=local_bits)
        wiring.connect(m, gather.touch, touched_in.i)
        m.d.comb += [
            touched.i.valid.eq(touched_in.o.valid | host_list),
            touched.i.payload.eq(Mux(host_list, wr_data[:local_bits], touched_in.o.payload)),
            touched_in.o.ready.eq(touched.i.ready & ~host_list),
        ]
        # Registered stages behind the FIFO's block RAM: its read data would otherwise run
        # through apply's address mux into the vertex memory (the PE's critical path). The
        # FIFO's output register takes the block RAM's late output straight into flip-flops;
        # the skid buffer then cuts the ready path.
        m.submodules.touched_out = touched_out = SkidBuffer(shape=local_bits)
        wiring.connect(m, touched.o, touched_out.i)
        wiring.connect(m, touched_out.o, apply.touched)
        # Entries listed for the next pass: at its start apply takes them, and the next
        # round's gather (running beside it) lists behind them. Gather takes the barrier
        # with its last message possibly still in write-back: a vertex listed in the start
        # cycle belongs to the pass that starts.
        # ``listed + 1`` is kept in a register beside it: a listing in the start cycle then only
        # chooses (timing plan, rule 4) instead of running gather's strobe through an adder.
        # So is ``listed == 0``, for apply's barrier decision at the start (rule 4).
        listed = Signal(range(config.pe.vertices_per_pe + 1))
        listed_and_one = Signal(range(config.pe.vertices_per_pe + 2), init=1)
        none_listed = Signal(init=1)
        listing = (gather.touch.valid & gather.touch.ready) | host_list
        with m.If(apply.start & ~apply.busy):
            m.d.sync += [listed.eq(0), listed_and_one.eq(1), none_listed.eq(1)]
        with m.Elif(listing):
            m.d.sync += [listed.eq(listed_and_one), listed_and_one.eq(listed_and_one + 1), none_listed.eq(0)]
        m.d.comb += [apply.list_len.eq(Mux(listing, listed_and_one, listed)),
                     apply.list_empty.eq(none_listed & ~listing)]

    def _host_registers(self, m, scatter, host_write, wr_addr, wr_data):
        """The PE registers and the edge storage the host writes; returns ``(num_local, sparse_round0)``."""
        num_local = Signal(self._config.pe.local_bits + 1)
        sparse_round0 = Signal()
        with m.If(host_write[HostMem.REGISTERS] & (wr_addr == PeRegister.NUM_LOCAL)):
            m.d.sync += num_local.eq(wr_data)
        with m.If(host_write[HostMem.REGISTERS] & (wr_addr == PeRegister.SPARSE_ROUND0)):
            m.d.sync += sparse_round0.eq(wr_data[0])
        if self._config.pe.offchip:
            self._offchip_edges(m, scatter, host_write, wr_addr, wr_data)
        else:
            m.d.comb += [
                scatter.index_wr.en.eq(host_write[HostMem.EDGE_INDEX]),
                scatter.index_wr.addr.eq(wr_addr),
                scatter.index_wr.data.eq(wr_data),
                scatter.edge_wr.en.eq(host_write[HostMem.EDGES]),
                scatter.edge_wr.addr.eq(wr_addr),
                scatter.edge_wr.data.eq(wr_data),
            ]
        return num_local, sparse_round0

    def _counters(self, m, *, start, gather, apply, scatter, core_busy):
        """The counters of :data:`COUNTER_NAMES` by name, counting between ``start`` and termination."""
        started = Signal()
        with m.If(start):
            m.d.sync += started.eq(1)
        running = started & ~self.terminated
        # ``busy`` from its parts a cycle late, each in a flip-flop of its own (timing plan,
        # rule 4): the parts stand across the PE (endpoint side, scatter, gather, apply), and
        # their OR with the endpoint's ``waiting`` into the counters' strobes was FPGA 0 of
        # 2 x 4's worst path (125.8 MHz, 7cd8c97). The two events that read it count late.
        late_busy, late_waiting = Signal(), Signal()
        parts = [gather.active, apply.busy, *core_busy]
        late_parts = [Signal(name=f"busy_part{i}") for i in range(len(parts))]
        m.d.sync += [late.eq(part) for late, part in zip(late_parts, parts)]
        m.d.sync += late_waiting.eq(self.waiting)
        m.d.comb += late_busy.eq(Cat(*late_parts).any())
        events = {
            "cycles": 1,
            "busy": late_busy,
            "messages": scatter.edge_strobe,
            "updates": apply.update_strobe,
            "supersteps": apply.done,
            "stall_hazard": gather.hazard_stall,
            "stall_backpressure": scatter.stall,
            "mem_requests": getattr(scatter, "mem_request", 0),
            "mem_words": getattr(scatter, "mem_word", 0),
            "mem_responses": getattr(scatter, "mem_response", 0),
            "mem_wait": getattr(scatter, "mem_wait", 0),
            "wait_barrier": late_waiting & ~late_busy,
            "apply_cycles": apply.busy,
        }
        return event_counters(m, events=events, running=running, late={"busy", "wait_barrier"})

    def _offchip_edges(self, m, scatter, host_write, wr_addr, wr_data):
        """Off-chip edges: the presence bits and the two base registers from the host; the
        scatter unit's memory port is the PE's."""
        registers = host_write[HostMem.REGISTERS]
        for register, base in ((PeRegister.INDEX_BASE, scatter.index_base), (PeRegister.EDGE_BASE, scatter.edge_base)):
            with m.If(registers & (wr_addr == register)):
                m.d.sync += base.eq(wr_data)
        m.d.comb += [scatter.present_wr.en.eq(host_write[HostMem.EDGE_PRESENT]),
                     scatter.present_wr.addr.eq(wr_addr), scatter.present_wr.data.eq(wr_data)]
        wiring.connect(m, scatter.mem, wiring.flipped(self.mem))


def round_logs(m, *, depth, scatter, apply, cycles, rd_addr, ram_style=None):
    """A PE's per-round log: messages scattered, updates applied, and the cycle count when apply ends.

    One memory of ``depth`` rounds per figure; returns ``{HostReadMem code: read data at
    rd_addr}`` (one cycle of latency). The host reads the logs only after termination, so a read
    never meets a write: no read-during-write logic behind the block RAM's output.
    """
    attrs = no_read_during_write(ram_style)
    writes = {  # name in ROUND_LOGS: (strobe, round, value)
        "messages": (scatter.round_end, scatter.round, scatter.round_messages),
        "updates": (apply.done, apply.round, apply.round_updates),
        "cycle": (apply.done, apply.round, cycles),
    }
    if set(writes) != set(ROUND_LOGS):
        raise ValueError(f"the PE logs {sorted(writes)}, the protocol names {sorted(ROUND_LOGS)}")
    reads = {}
    for name, code in ROUND_LOGS.items():
        strobe, rnd, value = writes[name]
        m.submodules[f"log_{name}"] = log = memory.Memory(shape=LOG_BITS, depth=depth, init=[], attrs=attrs)
        write = log.write_port()
        # Registered: the round number fans out across the PE, and a path from it into a log's
        # block RAM ended a 4-PE top's critical path. The entry lands a cycle later; the host
        # reads logs long after.
        m.d.sync += [write.en.eq(strobe & (rnd < depth)), write.addr.eq(rnd), write.data.eq(value)]
        read = log.read_port()
        m.d.comb += read.addr.eq(rd_addr)
        reads[code] = read.data
    return reads


def event_counters(m, *, events, running, late=frozenset()):
    """A counter per name of :data:`COUNTER_NAMES` (its read address is its index there): one more
    in each cycle ``running`` and its event hold. ``events`` maps every counter's name, and only
    those, to its event; an event named in ``late`` is the event of the cycle before (built from
    registers), and is matched with ``running`` of that cycle. Returns ``{name: counter}`` in
    read-address order."""
    if set(events) != set(COUNTER_NAMES):
        missing, unknown = set(COUNTER_NAMES) - set(events), set(events) - set(COUNTER_NAMES)
        raise ValueError(f"PE counter events do not match COUNTER_NAMES: missing {sorted(missing)}, "
                         f"unknown {sorted(unknown)}")
    counters = {}
    # ``running`` registered once for all: the events' flip-flops then hold the event alone, so
    # its logic (e.g. ``busy``, an OR over the units) ends there, not in an AND behind it.
    was_running = Signal(name="counting")
    was_running_before = Signal(name="counting_late")
    m.d.sync += [was_running.eq(running), was_running_before.eq(was_running)]
    for name in COUNTER_NAMES:
        counters[name] = counter = Signal(COUNTER_BITS, name=f"count_{name}")
        count = running & events[name]
        if name != "cycles":
            # Registered strobe: the event logic (e.g. scatter's address generator) would
            # otherwise drive the enable of 64 flip-flops. The counter lags its event by a
            # cycle, which the host never sees (it reads after done). The cycle counter is
            # not delayed: the round log records it at the end of each apply pass.
            strobe = Signal(name=f"event_{name}")
            m.d.sync += strobe.eq(events[name])
            count = (was_running_before if name in late else was_running) & strobe
        with m.If(count):
            m.d.sync += counter.eq(counter + 1)
    return counters
