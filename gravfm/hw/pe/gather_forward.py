"""Gather stage with result forwarding, for a combinational gather kernel.

:class:`~gravfm.hw.pe.gather.GatherUnit` makes a message wait while an earlier message to the same
vertex is in flight (read, read-data register, kernel, write-back): on a hub vertex of a
power-law graph the messages to it arrive close together and each waits its turn. When the
kernel is combinational (it declares ``combinational = True``: its output is valid in the cycle
of its input, and it is ready whenever its output is), every in-flight result is known one
cycle after its read data, so a message to a vertex in flight can take the newest result
instead of waiting. Every message then issues in the cycle it arrives: one message per cycle
on any graph, and no hazard CAM.

Pipeline, one stage per cycle and never stalled::

    issue (read address) -> S (read data) -> R (read-data register, kernel) -> WB (write-back)

A message X issued in cycle ``i`` compares its vertex with the message in each stage; the newest
match provides X's state:

* in S at ``i``: that message is in WB while X is in R -> R takes the word being written;
* in R at ``i``: in WB while X is in S -> S takes the word being written;
* in WB at ``i``, with a registered memory write (``write_latency=1``): its write lands after
  X's read -> the word being written at ``i`` is kept for X's S stage;
* in WB at ``i - 1``, with ``write_latency=1``: its write lands as X reads -> that word is kept
  (so the read port need not be transparent);
* older: already in memory (with ``write_latency=0`` the read port must be transparent for
  the write port).

The vertex word's ``touched`` flag travels with the forwarded word, so each vertex is still
reported on ``touch`` once per round (see :class:`~gravfm.hw.pe.gather.GatherUnit`). A word whose
state the kernel left unchanged is not written back.

**Beside apply** (``overlap``, a sparse algorithm): the stage resumes as soon as apply's pass has
started, instead of when it ends. BSP stays exact: a message of round r+1 must not reach a
vertex that round r's apply has still to visit (apply would read it, or overwrite it). Such a
vertex is known from the word read for the message: in a listed pass its ``touched`` flag is set
with the previous round's ``epoch``; in a full pass its index is at or above apply's
``applied_upto`` when the read issues. Apply's write-back clears the flag, so a word read before
that write lands only makes the message wait longer. A waiting message leaves the pipeline at R
(no write-back, so no forward from it) into the retry queue (:func:`retry_depth`); the queue is
replayed, first, once the pass has ended, and a barrier is taken only with the queue empty and
apply idle. When the queue is full, new messages wait. Messages to one vertex may be reordered
by the queue, which commutative gathers (minimum, first-come parent) do not see. Block RAM cost:
the retry queue, half the PE's vertices times a ``scatter_out`` word: 496 Kib for one-PE WCC
on RMAT scale 14 (62-bit words; the vertex memory's three copies hold 864 Kib), 51 Kib per PE
for BFS at 4 x 9 PEs on scale 16 (126 Kib). Its round and barrier fields need not be stored.
"""

from amaranth.hdl import C, Mux, Signal
from amaranth.lib import stream, wiring

from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO
from .gather import GatherStage, GatherUnit, kernel_inputs, newest_write, read_data_registers
from ..unused import silence_unused
from ..kernels import kernel_traits

__all__ = ["ForwardingGatherUnit", "build_gather_unit", "forwards"]



def retry_depth(config):
    """Messages the stage can set aside while apply runs: half the PE's vertices.

    While a pass runs, a message waits when its vertex is still to be applied; with destinations
    spread over the vertices that is about half the messages arriving during the pass, and a
    pass visits at most every local vertex once (one-PE WCC on RMAT scale 14: CPE 1.033 with 512,
    1.017 with 8,192 = half). At least 512: a smaller queue saves no block RAM. When the queue
    is full, gather waits for apply as before.
    """
    return max(512, config.pe.vertices_per_pe // 2)


def is_combinational(kernel):
    """Whether the gather ``kernel`` declares itself combinational on its signature."""
    return kernel_traits(kernel)[1]


def forwards(config, kernel):
    """Whether the gather stage for ``kernel`` forwards results (:class:`ForwardingGatherUnit`):
    the kernel declares itself combinational and ``config.pe.gather_forwarding`` is on."""
    return config.pe.gather_forwarding and is_combinational(kernel)


def build_gather_unit(*, layouts, config, kernel, write_latency=0, overlap=False):
    """The gather stage for ``kernel``: forwarding when :func:`forwards`, else with a hazard unit.
    ``overlap`` (a sparse algorithm) lets a forwarding stage run beside apply. A forwarding stage
    gets two more instances of the algorithm's gather kernel (``twins``)."""
    if forwards(config, kernel):
        return ForwardingGatherUnit(layouts=layouts, config=config, kernel=kernel,
                                    twins=(config.algorithm.gather(layouts), config.algorithm.gather(layouts)),
                                    write_latency=write_latency, overlap=overlap)
    return GatherUnit(layouts=layouts, config=config, kernel=kernel, write_latency=write_latency)


class ForwardingGatherUnit(GatherStage):
    """Gather with forwarding instead of a hazard unit, for a combinational gather kernel
    (``combinational = True``). Parameters and ports as :class:`~gravfm.hw.pe.gather.GatherStage`;
    ``hazard_stall`` is always 0 (no message waits for its vertex).

    ``twins`` are two more instances of the same kernel. ``kernel`` runs on the word read from
    the vertex memory, the first twin on a word forwarded into the read-data registers, the
    second on the word in the write-back register, and the write-back register takes the result
    of the one whose word is the newest: the choice of word then stands behind the kernels
    instead of in front. The memory's read data arrives late and from afar (its block RAM's
    output register, 2.5 ns of route on ECP5): with the choice in front, the memory word, the
    multiplexer and the kernel's compare were FPGA 0 of 2 x 4's worst path (207d9e0, router1
    seed 1: 141.5 MHz). The write-back register's word, chosen in front of the twin, made the
    loop from that register through the kernel back into it the path of FPGA 0 of 2 x 4
    (cb17732, router1 seed 1: 137.8 MHz) and of the 4-PE tops. A combinational kernel keeps no
    state (the kernel contract), so three instances answer as one would.
    """

    def __init__(self, *, layouts, config, kernel, twins, write_latency=0, overlap=False):
        for name, instance in (("kernel", kernel), ("twin", twins[0]), ("twin", twins[1])):
            if not is_combinational(instance):
                silence_unused(self)
                raise TypeError(f"{name} {type(instance).__name__} is not a combinational gather kernel "
                                "(combinational = True); use GatherUnit")
        for twin in twins:
            silence_unused(twin)  # elaborated with this unit; the unit's own warning covers them
        self._twins = twins
        super().__init__(layouts=layouts, config=config, kernel=kernel, write_latency=write_latency,
                         overlap=overlap)

    def _pipeline(self, m, layouts, local_bits, kernel, *, paused, level, take_barrier):
        incoming = self.messages.payload
        busy = self.apply_busy if self._overlap else C(0)
        # Messages set aside while apply runs (their vertex awaits apply), replayed when it is done.
        depth = retry_depth(self._config)
        retry = _RetryQueue(m, layouts, depth) if self._overlap else None

        s_valid = Signal()
        s_item = Signal(layouts.scatter_out)
        s_from_wb = Signal()    # S takes the word being written (the vertex was in R at issue)
        s_from_kept = Signal()  # S takes the word kept at issue (the vertex was in WB then)
        kept_word = Signal(layouts.vertex_word, reset_less=True)
        s_address = s_item.neighbor[:local_bits]
        s_full_pending = Signal()  # issued during a full pass, its vertex not yet applied
        s_flag_check = Signal()    # issued during a listed pass: its touched flag tells
        r_valid = Signal()
        r_item = Signal(layouts.scatter_out)
        r_from_wb = Signal()    # R takes the word being written (the vertex was in S at issue)
        r_full_pending = Signal()
        r_flag_check = Signal()
        r_address = r_item.neighbor[:local_bits]
        wb_valid = Signal()
        wb = Signal(layouts.gather_out)
        wb_before = Signal(layouts.vertex_word, reset_less=True)  # the state the kernel saw
        wb_address = wb.nodeid[:local_bits]

        flushed = ~s_valid & ~r_valid & ~wb_valid
        item, replay, take_new, barrier_free = self._next_message(m, layouts, retry, paused=paused, busy=busy)
        issue = replay | take_new
        address = item.neighbor[:local_bits]
        m.d.comb += [
            # Not while a pass runs: this stage may run beside one (``overlap``, or the PE's
            # accumulator kept apart), but the next pass starts only after it. The last message
            # may still be in WB: its write lands before the pass's first read (two cycles on),
            # and the PE lists its touch for the pass that starts.
            take_barrier.eq(~paused & ~replay & self.messages.valid & incoming.barrier & ~s_valid & ~r_valid
                            & ~self.apply_busy & barrier_free),
            self.rd.addr.eq(address),
            self.rd.en.eq(1),
            self.messages.ready.eq(take_new | take_barrier),
            self.apply_start.eq(take_barrier),
            self.hazard_stall.eq(0),
            self.active.eq(~flushed | (retry.count != 0 if retry is not None else 0)),
        ]

        # The word being written back, flags included: what memory will hold.
        written = Signal(layouts.vertex_word)
        changed = wb.state.as_value() != wb_before.state.as_value()
        m.d.comb += [written.state.eq(wb.state), written.touched.eq(wb_before.touched | changed),
                     written.epoch.eq(Mux(wb_before.touched, wb_before.epoch, level[0]))]

        # Issue -> S: compare with the stages the message will meet, and register the results.
        # A message in R may be set aside (no write-back follows): each forward from the
        # write-back stage is taken only if that stage is valid when the word is used.
        s_then_r_from_wb = Signal()  # the vertex was in S at issue: R takes the word being written
        m.d.sync += [
            s_valid.eq(issue), s_item.eq(item),
            s_then_r_from_wb.eq(s_valid & (s_address == address)),
            s_from_wb.eq(r_valid & (r_address == address)),
            # Judged against what apply had written when the read was issued.
            s_full_pending.eq(busy & self.apply_full & (address >= self.applied_upto)),
            s_flag_check.eq(busy & ~self.apply_full),
        ]
        if self._write_latency:
            hit, newest = newest_write(m, valid=self.wr.en, address=wb_address, word=written,
                                       read_address=address)
            m.d.sync += [s_from_kept.eq(hit), kept_word.eq(newest)]
        # S -> R. The newest match wins: R's forward over S's, S's write-back over the kept word.
        from_wb = s_from_wb & wb_valid
        memory_word, forwarded, forwarded_word = read_data_registers(
            m, advance=1, memory_word=self.rd.data, forward=from_wb | s_from_kept,
            forward_word=Mux(from_wb, written, kept_word))
        m.d.sync += [r_valid.eq(s_valid), r_item.eq(s_item), r_from_wb.eq(s_then_r_from_wb),
                     r_full_pending.eq(s_full_pending), r_flag_check.eq(s_flag_check)]
        # The word R's message meets: the memory's, unless a newer one is forwarded (registers).
        r_takes_wb = r_from_wb & wb_valid
        take_forwarded = r_takes_wb | forwarded
        newer_word = Signal(layouts.vertex_word)
        m.d.comb += newer_word.eq(Mux(r_takes_wb, written, forwarded_word))
        state_in = Signal(layouts.vertex_word)
        m.d.comb += state_in.eq(Mux(take_forwarded, newer_word, memory_word))
        # BSP: a vertex that this round's apply has still to visit must not see the next
        # round's messages yet (apply would read them, or overwrite them).
        blocked = r_valid & (r_full_pending | (r_flag_check & state_in.touched & (state_in.epoch != level[0])))
        if retry is not None:
            m.d.comb += [retry.i.valid.eq(blocked), retry.i.payload.eq(r_item)]

        # The kernel on the memory's word, its twins on the forwarded one and on the write-back
        # register's; the newest word's result wins.
        m.submodules.twin = twin = self._twins[0]
        m.submodules.written_twin = written_twin = self._twins[1]
        for instance, word in ((kernel, memory_word), (twin, forwarded_word), (written_twin, written)):
            m.d.comb += kernel_inputs(instance, valid=r_valid & ~blocked, level=level, item=r_item,
                                      state=word.state)
        newest = Mux(r_takes_wb, written_twin.o.payload.as_value(),
                     Mux(forwarded, twin.o.payload.as_value(), kernel.o.payload.as_value()))
        newest_valid = Mux(r_takes_wb, written_twin.o.valid, Mux(forwarded, twin.o.valid, kernel.o.valid))
        m.d.sync += [wb_valid.eq(newest_valid), wb.eq(newest), wb_before.eq(state_in)]
        self._write_back(m, valid=wb_valid, address=wb_address, written=written, changed=changed,
                         was_touched=wb_before.touched)

    def _write_back(self, m, *, valid, address, written, changed, was_touched):
        """Drive the vertex memory's write port and the touch list from the write-back stage."""
        m.d.comb += [
            # An unchanged word is not written again: the port is free for apply's write-backs.
            self.wr.en.eq(valid & changed),
            self.wr.addr.eq(address),
            self.wr.data.eq(written),
            self.touch.valid.eq(valid & changed & ~was_touched),
            self.touch.payload.eq(address),
        ]

    def _next_message(self, m, layouts, retry, *, paused, busy):
        """The message to issue: ``(item, replay, take_new, barrier_free)``: the item (a replayed
        one first, else the stream's head), whether it is replayed, whether the head is taken as a
        new one; whether no message is set aside (the barrier may pass)."""
        incoming = self.messages.payload
        if retry is None:
            item, replay = incoming, C(0)
            take_new = ~paused & self.messages.valid & ~incoming.barrier
            barrier_free = C(1)
        else:
            # A replayed message first; a new one only while the queue has room for it and for
            # the two in S and R (each may yet be set aside). Room for both is kept whether or
            # not they are there: the test is then on the stored count alone, not an adder behind
            # S's valid into ``messages.ready`` (the ULX3S 4-PE top's path, 101 MHz).
            replay = ~paused & retry.o.valid & ~busy
            item = Signal(layouts.scatter_out)
            m.d.comb += item.eq(Mux(replay, retry.o.payload, incoming))
            room = ~busy | (retry.count < retry_depth(self._config) - 4)
            take_new = ~paused & ~replay & self.messages.valid & ~incoming.barrier & room
            barrier_free = retry.count == 0
            m.d.comb += retry.o.ready.eq(replay)
        return item, replay, take_new, barrier_free


class _RetryQueue:
    """The queue of messages gather sets aside while apply runs: ``i`` and ``o`` streams of
    ``scatter_out`` (``i`` is always ready: the stage keeps room), and ``count`` stored."""

    def __init__(self, m, layouts, depth):
        # Filled to depth - 2 at most: the FIFO may refuse a write while an item moves to its
        # output register. The head in a fabric flip-flop (timing rule 1): the replayed item's
        # address feeds the vertex memory's read address and the forwarding compares, and from
        # the block RAM, even its own output register, the route alone took 2.5 of 7.6 ns (FPGA 0
        # of 2 x 4 and the 4-PE top, 0121524: 131.5 MHz into ``s_from_kept``). A replay starts
        # a cycle later; the stage replays only after apply's pass, with the queue long filled.
        # Read at the next head's address, the replay decision (apply's ``busy``, gather's
        # pause) ran into the RAM's address across the chip (FPGA 0 of 2 x 4, 6b8da19, seed 1:
        # 142.6 MHz). A skid buffer behind it instead of a plain output register (timing plan,
        # rule 2) ends that decision at the skid's enables: the FIFO is read when the skid
        # entry is free, a flip-flop. A prefetch FIFO (68f3e40) cut the path too but cost 645
        # LUTs instead of 218 at 60 bits, and with it router1 stalled.
        m.submodules.retry = fifo = StreamFIFO(shape=layouts.scatter_out, depth=depth, head_register=True)
        m.submodules.retry_out = out = SkidBuffer(shape=layouts.scatter_out)
        wiring.connect(m, fifo.o, out.i)
        # A message set aside enters through a register (timing plan, rule 2): the decision (the
        # vertex word read, its flags compared) ends at flip-flops instead of running on into
        # the FIFO's block-RAM write port (the 4-PE top's path, 134.4 MHz). ``count`` counts the
        # message from the cycle it is set aside, so the barrier still waits for it.
        self.i = stream.Signature(layouts.scatter_out).create()
        staged_valid = Signal()
        staged = Signal(layouts.scatter_out, reset_less=True)
        m.d.sync += [staged_valid.eq(self.i.valid), staged.eq(self.i.payload)]
        m.d.comb += [fifo.i.valid.eq(staged_valid), fifo.i.payload.eq(staged), self.i.ready.eq(1)]
        self.o = out.o
        self.count = Signal(range(depth + 1))
        pushed = self.i.valid
        popped = out.o.valid & out.o.ready
        with m.If(pushed & ~popped):
            m.d.sync += self.count.eq(self.count + 1)
        with m.Elif(popped & ~pushed):
            m.d.sync += self.count.eq(self.count - 1)
