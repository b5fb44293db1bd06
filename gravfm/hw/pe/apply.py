"""Apply stage of a PE: one pass over every local vertex per round, then the barrier.

On ``start`` the unit reads local vertices ``0 .. num_local-1`` in order (one per cycle when the
kernel keeps up), feeds each with the round number to the apply kernel, writes back the state
the kernel returns, and forwards its updates to the update queue; behind the last vertex it
feeds one ``barrier=1`` item, which the kernel passes on as the round's barrier. The barrier
leaves with the number of updates of the round (``count``) and ``sent_any``; when it has been
accepted by the queue, ``done`` pulses and the vertex memory returns to gather.

A full pass costs ``num_local`` cycles per round. With ``sparse=True`` (an algorithm whose apply
is a no-op on a vertex that received nothing, ``Algorithm.sparse_apply``) only round 0 is a full
pass; later rounds visit the vertices listed on ``touched`` (each vertex whose state a gather
changed since the last apply, once), so a round costs those vertices instead of ``num_local``. Apply clears
the vertex's ``touched`` flag when it writes the state back.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import hardware_id
from ..memory_ports import read_port_signature, write_port_signature

__all__ = ["ApplyUnit"]


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
        Vertex memory access (vertex_word; valid while ``busy``).
    touched : In(stream of local index)
        Vertices gathered into since the last pass (used when ``sparse``; complete when the
        pass starts, since gather is flushed and paused by then).
    sparse_round0 : In(1)
        With ``sparse``: round 0 also visits only the listed vertices (the host loaded the list).
    touched_pending : In(1)
        Touched vertices remain to be visited (pushed but not yet popped): the list's FIFO
        shows a pushed item only a few cycles later, so emptiness is judged by this count.
    updates : Out(stream net_update)
        Updates, then the barrier carrying ``count`` and ``sent_any``.
    busy : Out(1)
        A pass is running.
    done : Out(1)
        Pulse: the pass ended (its barrier is in the queue).
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
            "touched_pending": In(1),
            "sparse_round0": In(1),
            "updates": Out(stream.Signature(layouts.net_update)),
            "busy": Out(1),
            "done": Out(1),
            "round": Out(config.pe.round_bits),
            "round_updates": Out(config.count_bits),
            "update_strobe": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, config = self._layouts, self._config
        local_bits = config.pe.local_bits
        m.submodules.kernel = kernel = self._kernel

        busy = Signal()
        index = Signal(local_bits + 1)
        barrier_issued = Signal()
        rnd = Signal(config.pe.round_bits)
        count = Signal(config.count_bits)

        # Generator -> read stage -> kernel. A full pass counts 0 .. num_local (the barrier);
        # a sparse pass drains the touched list, then issues the barrier.
        full_pass = Signal()
        g_valid = Signal()
        g_barrier = Signal()
        g_address = Signal(local_bits)
        with m.If(full_pass):
            m.d.comb += [g_valid.eq(busy & ~barrier_issued),
                         g_barrier.eq(index == self.num_local), g_address.eq(index[:local_bits])]
        with m.Else():
            m.d.comb += [g_valid.eq(busy & ~barrier_issued & (self.touched.valid | ~self.touched_pending)),
                         g_barrier.eq(~self.touched_pending), g_address.eq(self.touched.payload)]
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
        r_advance = ~r_valid | kernel.i.ready
        s_advance = ~s_valid | r_advance
        q_advance = ~q_valid | s_advance
        g_fire = g_valid & q_advance
        m.d.comb += [self.rd.addr.eq(q_address), self.rd.en.eq(s_advance),
                     self.touched.ready.eq(g_fire & ~full_pass & ~g_barrier)]
        with m.If(q_advance):
            m.d.sync += [q_valid.eq(g_valid), q_address.eq(g_address), q_barrier.eq(g_barrier)]
        with m.If(s_advance):
            m.d.sync += [s_valid.eq(q_valid), s_index.eq(q_address), s_barrier.eq(q_barrier)]
        with m.If(r_advance):
            m.d.sync += [r_valid.eq(s_valid), r_index.eq(s_index), r_barrier.eq(s_barrier),
                         r_state.eq(self.rd.data.state)]
        with m.If(g_fire):
            with m.If(g_barrier):
                m.d.sync += barrier_issued.eq(1)
            with m.Elif(full_pass):
                m.d.sync += index.eq(index + 1)
        k = kernel.i.payload
        m.d.comb += [
            kernel.i.valid.eq(r_valid),
            k.nodeid.eq(hardware_id(r_index, self._pe_index, config)),
            k.state.eq(r_state),
            k.round.eq(rnd),
            k.barrier.eq(r_barrier),
        ]

        # Write-back: always possible; the barrier's echo carries no state.
        state = kernel.state_o.payload
        m.d.comb += [
            self.wr.en.eq(kernel.state_o.valid & ~state.barrier),
            self.wr.addr.eq(state.nodeid[:local_bits]),
            self.wr.data.state.eq(state.state),
            self.wr.data.touched.eq(0),
        ]

        # Updates to the queue, the barrier with this round's count.
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
        end_of_pass = fire & update.barrier
        with m.If(self.update_strobe):
            m.d.sync += count.eq(count + 1)
        with m.If(end_of_pass):
            m.d.sync += [busy.eq(0), rnd.eq(rnd + 1), count.eq(0)]
        with m.Elif(self.start & ~busy):
            m.d.sync += [busy.eq(1), index.eq(0), barrier_issued.eq(0),
                         full_pass.eq(1 if not self._sparse else (rnd == 0) & ~self.sparse_round0)]
        m.d.comb += [
            self.busy.eq(busy),
            self.done.eq(end_of_pass),
            self.round.eq(rnd),
            self.round_updates.eq(count),
        ]
        return m
