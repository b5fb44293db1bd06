"""Apply stage of a PE: one pass over every local vertex per round, then the barrier.

On ``start`` the unit reads local vertices ``0 .. num_local-1`` in order (one per cycle when the
kernel keeps up), feeds each with the round number to the apply kernel, writes back the state
the kernel returns, and forwards its updates to the update queue; behind the last vertex it
feeds one ``barrier=1`` item, which the kernel passes on as the round's barrier. The barrier
leaves with the number of updates of the round (``count``) and ``sent_any``; when it has been
accepted by the queue, ``done`` pulses and the vertex memory returns to gather.

A full pass costs ``num_local`` cycles per round. With ``sparse=True`` (an algorithm whose apply
is a no-op on a vertex that received nothing, ``Algorithm.sparse_apply``) only round 0 is a full
pass; later rounds visit the ``list_len`` vertices listed on ``touched`` when the pass starts
(each vertex whose state a gather changed since the last apply, once), so a round costs those
vertices instead of ``num_local``. Apply clears the vertex's ``touched`` flag when it writes the
state back.

Write-back goes through a small buffer: while a sparse algorithm's pass runs, the next round's
gather may run too (:mod:`gravfm.hw.pe.gather_forward`), and its writes take the vertex memory's
one write port first (``wr_grant``). The buffer never overflows: the pass issues a vertex only
while fewer than its depth are issued and not yet written (every vertex given to a sparse
kernel is written back once; a repeated beat of one vertex, which the kernel contract allows
while an update stalls, is dropped). ``busy`` stays high until the last write has landed, and
``applied_upto`` says how far a full pass's writes have landed, so that gather can tell the
vertices apply has still to visit.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from ..layouts import hardware_id
from ..memory_ports import read_port_signature, write_port_signature
from ..skid_buffer import ReadySlice

__all__ = ["ApplyUnit"]

# Write-backs waiting for the write port while gather writes: a few cycles of gather's writes
# in a row (LUT RAM; deeper only helps when gather changes a vertex in most cycles).
WRITE_BUFFER_DEPTH = 8


class ApplyUnit(wiring.Component):
    """Iterate local vertices through the apply kernel.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    config : gravfm.hw.SystemConfig
    pe_index : int or Value
        Global index of this PE (high bits of ``nodeid``).
    kernel : wiring.Component
        The algorithm's apply kernel.
    sparse : bool
        Visit only touched vertices after round 0.

    Ports
    -----
    start : In(1)
        Pulse: begin the pass of the next round (ignored while busy).
    num_local : In(local_bits + 1)
        Number of vertices stored in this PE.
    rd, wr : Out(read port), Out(write port)
        Vertex memory access (vertex_word; valid while ``busy``). ``wr.en`` asks for the port;
        the write happens in a cycle of ``wr_grant``.
    wr_grant : In(1)
        The write port is apply's this cycle (gather is not writing).
    touched : In(stream of local index)
        Vertices gathered into since the last pass (used when ``sparse``), in the order listed;
        entries behind the pass's ``list_len`` belong to the next pass.
    list_len : In(local_bits + 1)
        Vertices listed for the next pass (sampled at ``start``).
    list_empty : In(1)
        ``list_len`` is 0, given from the lister's registers (``list_len`` comes through an adder).
    sparse_round0 : In(1)
        With ``sparse``: round 0 also visits only the listed vertices (the host loaded the list).
    updates : Out(stream net_update)
        Updates, then the barrier carrying ``count`` and ``sent_any``.
    busy : Out(1)
        A pass is running (until its barrier is in the queue and its last write has landed).
    full : Out(1)
        The pass is a full pass (valid while ``busy``).
    overlap : Out(1)
        With ``sparse``, the next round's gather may run during this pass: a full pass, or a
        listed pass whose vertices carry their ``touched`` flag (every pass but round 0's host
        list). Always 0 without ``sparse``.
    applied_upto : Out(local_bits + 1)
        In a full pass: the vertices below this index have been written back, and a read
        issued now returns their written word.
    done : Out(1)
        Pulse: the pass ended (its barrier is in the queue, its writes landed; ``busy`` falls).
    round : Out(round_bits)
        Round of the current (or next) pass.
    round_updates : Out(count_bits)
        Updates emitted so far in ``round``; at ``done``, the round's total.
    update_strobe : Out(1)
        An update (not the barrier) entered the queue this cycle.
    """

    def __init__(self, *, layouts, config, pe_index, kernel, sparse=False):
        self._sparse = sparse
        self._layouts = layouts
        self._config = config
        self._pe_index = pe_index
        self._kernel = kernel
        super().__init__({
            "start": In(1),
            "num_local": In(config.pe.local_bits + 1),
            "rd": Out(read_port_signature(config.pe.local_bits, layouts.vertex_word)),
            "wr": Out(write_port_signature(config.pe.local_bits, layouts.vertex_word)),
            "touched": In(stream.Signature(config.pe.local_bits)),
            "list_len": In(config.pe.local_bits + 1),
            "list_empty": In(1),
            "wr_grant": In(1),
            "sparse_round0": In(1),
            "updates": Out(stream.Signature(layouts.net_update)),
            "busy": Out(1),
            "full": Out(1),
            "overlap": Out(1),
            "applied_upto": Out(config.pe.local_bits + 1),
            "done": Out(1),
            "round": Out(config.pe.round_bits),
            "round_updates": Out(config.count_bits),
            "update_strobe": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self._config
        local_bits = config.pe.local_bits
        m.submodules.kernel = kernel = self._kernel

        busy = Signal()
        closing = Signal()  # the barrier is out; the last writes drain
        index = Signal(local_bits + 1)
        remaining = Signal(local_bits + 1)  # listed vertices still to issue (sparse pass)
        barrier_issued = Signal()
        rnd = Signal(config.pe.round_bits)
        count = Signal(config.count_bits)
        overlap = Signal()

        full_pass = Signal()
        at_barrier = Signal()  # the generator's next item is the barrier: index == num_local, or remaining == 0
        g_fire, g_barrier, outstanding = self._vertex_reads(m, kernel, busy=busy, index=index, remaining=remaining,
                                                            barrier_issued=barrier_issued, rnd=rnd,
                                                            full_pass=full_pass, at_barrier=at_barrier)
        written, landed = self._write_back(m, kernel, local_bits, busy)
        issued = g_fire & ~g_barrier
        if self._sparse:
            with m.If(issued & ~written):
                m.d.sync += outstanding.eq(outstanding + 1)
            with m.Elif(written & ~issued):
                m.d.sync += outstanding.eq(outstanding - 1)

        fire, update = self._updates(m, kernel, count)
        # The pass ends once its barrier is out (``closing``, a flip-flop) and its writes have
        # landed: decided from registers (timing plan, rule 4), not from the kernel's outputs in
        # the cycle the barrier leaves (at most one cycle later). Nothing is pushed while
        # closing: every vertex's state leaves the kernel before or with the barrier.
        end_of_pass = busy & closing & landed
        with m.If(fire & update.barrier):
            m.d.sync += closing.eq(1)
        with m.If(end_of_pass):
            m.d.sync += [busy.eq(0), closing.eq(0), rnd.eq(rnd + 1), count.eq(0)]
        with m.Elif(self.start & ~busy):
            first_list = (rnd == 0) & self.sparse_round0
            starts_full = 1 if not self._sparse else (rnd == 0) & ~self.sparse_round0
            m.d.sync += [busy.eq(1), index.eq(0), barrier_issued.eq(0), remaining.eq(self.list_len),
                         full_pass.eq(starts_full),
                         at_barrier.eq(Mux(starts_full, self.num_local == 0, self.list_empty)),
                         overlap.eq(~first_list if self._sparse else 0)]
        m.d.comb += [
            self.busy.eq(busy),
            self.full.eq(full_pass),
            self.overlap.eq(overlap),
            self.done.eq(end_of_pass),
            self.round.eq(rnd),
            self.round_updates.eq(count),
        ]
        return m

    def _vertex_reads(self, m, kernel, *, busy, index, remaining, barrier_issued, rnd, full_pass, at_barrier):
        """The pass's vertices into the kernel: generator -> address register -> read -> read-data
        register. Returns ``(g_fire, g_barrier, outstanding)``: the generator issued (the barrier,
        if ``g_barrier``); the write-back credit in use (sparse kernels). ``at_barrier`` is set
        for the pass's start by the caller and kept here."""
        layouts, config = self._layouts, self._config
        local_bits = config.pe.local_bits
        # Generator: a full pass counts 0 .. num_local (the barrier); a sparse pass takes its
        # ``list_len`` entries of the touched list, then the barrier. Whether the barrier is next
        # is a flip-flop decided as the previous item issues (timing plan, rule 4): the compare
        # with ``num_local`` ran through the generator's fire into the touched list's ready and
        # the stages' enables (10 LUT levels in the 1-PE off-chip top).
        g_valid = Signal()
        g_barrier = at_barrier
        g_address = Signal(local_bits)
        last_index = Signal(local_bits + 1)  # num_local - 1: a register, num_local is set before a run
        m.d.sync += last_index.eq(self.num_local - 1)
        with m.If(full_pass):
            m.d.comb += [g_valid.eq(busy & ~barrier_issued), g_address.eq(index[:local_bits])]
        with m.Else():
            m.d.comb += [g_valid.eq(busy & ~barrier_issued & (self.touched.valid | at_barrier)),
                         g_address.eq(self.touched.payload)]
        # Write-back credit: vertices issued and not yet written (sparse kernels write each once).
        outstanding = Signal(range(WRITE_BUFFER_DEPTH + 1))
        room = Signal()
        m.d.comb += room.eq((outstanding != WRITE_BUFFER_DEPTH) if self._sparse else 1)
        # Address register: the generator's address mux (pass counter or touched list) ends at
        # a flip-flop instead of running on into the vertex memory's read port (one more cycle
        # of pipeline fill per pass).
        q_valid = Signal()
        q_address = Signal(local_bits)
        q_barrier = Signal()
        s_valid = Signal()
        s_index = Signal(local_bits)
        s_barrier = Signal()
        # Read-data register: the vertex memory's output ends at a flip-flop instead of running
        # through the apply kernel into the write port and the update queue (one more cycle of
        # pipeline fill per pass).
        r_valid = Signal()
        r_index = Signal(local_bits)
        r_barrier = Signal()
        r_state = Signal(layouts.vertex, reset_less=True)
        # Then a ready slice into the kernel (timing plan, rule 3): the kernel's ``ready`` may
        # depend on the vertex it is given (it holds a vertex whose update waits), and ends at
        # the slice's flip-flop instead of running back through the read's enable and the
        # stages into the generator; the data passes on in the same cycle.
        feed = data.StructLayout({"index": local_bits, "barrier": 1, "state": layouts.vertex})
        m.submodules.kernel_feed = into_kernel = ReadySlice(shape=feed)
        r_advance = ~r_valid | into_kernel.i.ready
        s_advance = ~s_valid | r_advance
        q_advance = ~q_valid | s_advance
        g_fire = g_valid & q_advance & (g_barrier | room)
        # The barrier reads no vertex: issued behind an empty address and read stage (an empty
        # pass, or the last vertex already in the kernel) it goes straight into the read-data
        # register, two cycles sooner (it goes round every superstep).
        barrier_skip = Signal()
        m.d.comb += [self.rd.addr.eq(q_address), self.rd.en.eq(s_advance),
                     self.touched.ready.eq(g_fire & ~full_pass & ~g_barrier),
                     barrier_skip.eq(g_fire & g_barrier & ~q_valid & ~s_valid & r_advance)]
        with m.If(q_advance):
            m.d.sync += [q_valid.eq(g_fire & ~barrier_skip), q_address.eq(g_address), q_barrier.eq(g_barrier)]
        with m.If(s_advance):
            m.d.sync += [s_valid.eq(q_valid), s_index.eq(q_address), s_barrier.eq(q_barrier)]
        with m.If(r_advance):
            m.d.sync += [r_valid.eq(s_valid | barrier_skip), r_index.eq(s_index),
                         r_barrier.eq(s_barrier | barrier_skip),
                         r_state.eq(self.rd.data.state)]
        with m.If(g_fire):
            with m.If(g_barrier):
                m.d.sync += barrier_issued.eq(1)
            with m.Elif(full_pass):
                m.d.sync += [index.eq(index + 1), at_barrier.eq(index == last_index)]
            with m.Else():
                m.d.sync += [remaining.eq(remaining - 1), at_barrier.eq(remaining == 1)]
        fed, k = into_kernel.o.payload, kernel.i.payload
        m.d.comb += [
            into_kernel.i.valid.eq(r_valid),
            into_kernel.i.payload.index.eq(r_index),
            into_kernel.i.payload.barrier.eq(r_barrier),
            into_kernel.i.payload.state.eq(r_state),
            kernel.i.valid.eq(into_kernel.o.valid),
            into_kernel.o.ready.eq(kernel.i.ready),
            k.nodeid.eq(hardware_id(fed.index, self._pe_index, config)),
            k.state.eq(fed.state),
            k.round.eq(rnd),
            k.barrier.eq(fed.barrier),
        ]

        return g_fire, g_barrier, outstanding

    def _updates(self, m, kernel, count):
        """The kernel's updates to the queue, the barrier with this round's ``count``; returns
        ``(fire, update)``: an update (or the barrier) left, and the kernel's update payload."""
        update = kernel.update_o.payload
        out = self.updates.payload
        fire = kernel.update_o.valid & self.updates.ready
        m.d.comb += [
            self.updates.valid.eq(kernel.update_o.valid),
            kernel.update_o.ready.eq(self.updates.ready),
            out.sender.eq(update.sender),
            out.update.eq(update.update),
            out.barrier.eq(update.barrier),
            out.count.eq(count),
            out.sent_any.eq(count != 0),
            self.update_strobe.eq(fire & ~update.barrier),
        ]
        with m.If(self.update_strobe):
            m.d.sync += count.eq(count + 1)
        return fire, update

    def _write_back(self, m, kernel, local_bits, busy):
        """The write buffer between the kernel's ``state_o`` and ``wr``, and ``applied_upto``.

        Returns ``(written, landed)``: a write left the buffer this cycle; every write pushed so
        far has landed (the buffer is empty and its last write reached the memory).
        """
        entry = data.StructLayout({"addr": local_bits, "state": self._layouts.vertex})
        m.submodules.write_buffer = buffer = SyncFIFO(width=entry.size, depth=WRITE_BUFFER_DEPTH)
        state = kernel.state_o.payload
        # A repeated beat of the vertex just buffered (the kernel holds state_o while its update
        # stalls) is dropped: a pass gives each vertex once.
        last_valid = Signal()
        last_addr = Signal(local_bits)
        addr = state.nodeid[:local_bits]
        push = kernel.state_o.valid & ~state.barrier & ~(last_valid & (last_addr == addr))
        pushed = Signal(entry)
        m.d.comb += [pushed.addr.eq(addr), pushed.state.eq(state.state),
                     buffer.w_en.eq(push), buffer.w_data.eq(pushed)]
        with m.If(push):
            m.d.sync += [last_valid.eq(1), last_addr.eq(addr)]
        with m.If(~busy):
            m.d.sync += last_valid.eq(0)
        head = data.View(entry, buffer.r_data)
        written = buffer.r_rdy & self.wr_grant
        m.d.comb += [
            self.wr.en.eq(buffer.r_rdy),
            self.wr.addr.eq(head.addr),
            self.wr.data.state.eq(head.state),
            self.wr.data.touched.eq(0),
            buffer.r_en.eq(self.wr_grant),
        ]
        # A write granted in cycle t passes the PE's write register and reaches the memory at
        # the end of t + 1: a read issued from t + 2 on returns it, and applied_upto (two
        # registers) says so from t + 2; ``busy`` falls at t + 2 at the earliest.
        written_upto = Signal(local_bits + 1)
        with m.If(written):
            m.d.sync += written_upto.eq(head.addr + 1)
        m.d.sync += self.applied_upto.eq(written_upto)
        with m.If(~busy):
            m.d.sync += [written_upto.eq(0), self.applied_upto.eq(0)]
        landed = ~buffer.r_rdy
        return written, landed
