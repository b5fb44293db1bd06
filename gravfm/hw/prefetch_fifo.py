"""A block-RAM FIFO whose memory is read from registers alone, ahead of its consumer."""

from amaranth.hdl import Array, Module, Mux, Signal
from amaranth.lib import memory, wiring

from .fifo_parts import buffer_ports, count_becomes, count_stepped, successor
from .memory_ports import no_read_during_write
from .unused import refusal

__all__ = ["PrefetchFIFO"]


class PrefetchFIFO(wiring.Component):
    """A FIFO of ``depth`` items with :class:`~gravfm.hw.stream_fifo.BufferedFIFO`'s ports and its
    ``bypass`` timing (an item written is the head the next cycle once those before it have
    left; ``w_rdy`` while fewer than ``depth`` items are held), its memory a block RAM that the
    consumer's ``r_en`` never reaches.

    The memory is read a few items ahead into a small queue of fabric registers: a read is
    issued from flip-flops alone (items stored, and room in the queue counting the reads on
    their way), its address is the read pointer itself, and the item lands in a register fed by
    nothing but the memory's output (synthesis takes it into the block RAM's own output
    register, :mod:`gravfm.synth.ecp5_outreg`). The consumer sees a fabric register,
    ``r_data``, whose enable is the only place ``r_en`` goes besides the queue's counts.

    Why: reading the memory at the address of the next cycle's head (``BufferedFIFO``'s
    ``head_register``) ran the consumer's grant through ``r_en`` into the block RAM's address, and
    the block RAMs of a crossbar sit in rows across the chip: FPGA 0 of 2 x 4 PEs stopped at
    111.8-118.3 MHz on ECP5 (bf0e97f, seeds 2-3), 3.4-4.3 ns of that path wire to the RAM.

    A read takes three cycles to reach the queue (issue, memory, landing register). An item goes
    through the memory only when the queue, counting the items on their way, is full, or behind
    items already there; the reads then keep the queue at ``queue - 1`` items or more, which
    cover those three cycles at one item per cycle. An item written while nothing is stored goes
    straight into the queue, or, while a read is on its way, a cycle later behind it.

    (A mode with ``SyncFIFOBuffered``'s timing, for gather's retry queue, was built and verified
    in 68f3e40 and removed with its only user: see gravfm.hw.pe.gather_forward.)
    """

    #: Fabric items: the head register and the ring of three behind it (three fails: a stored
    #: item came a cycle late).
    QUEUE = 4

    def __init__(self, *, width, depth, queue=QUEUE):
        if not isinstance(depth, int) or depth <= queue:
            raise refusal(self, f"PrefetchFIFO depth must be an integer > {queue} (its queue), not {depth!r}")
        self._depth = depth
        self._queue = queue
        super().__init__(buffer_ports(width, depth))

    def elaborate(self, platform):
        m = Module()
        width, depth, queue = len(self.w_data), self._depth, self._queue
        m.submodules.storage = storage = memory.Memory(
            shape=width, depth=depth, init=[], attrs=no_read_during_write("block"))
        write, read = storage.write_port(), storage.read_port(domain="sync")
        produce, consume = Signal(range(depth)), Signal(range(depth))
        stored = Signal(range(depth + 1))  # items in the memory, not yet read
        nothing_stored = Signal(init=1)
        total, full = Signal(range(depth + 1)), Signal()
        # The read on its way: issued (the item on the memory's output next cycle), then landed.
        issued, landed_valid = Signal(), Signal()
        landed = Signal(width, reset_less=True)
        # An item written while a read is on its way, nothing stored: it follows that read into
        # the queue a cycle late instead of through the memory (three cycles more).
        delayed_valid = Signal()
        delayed = Signal(width, reset_less=True)
        # Items in the head register, the ring, or on their way there; full when ``queue``.
        in_fabric, fabric_full = Signal(range(queue + 1)), Signal()

        do_write = self.w_en & self.w_rdy
        pop = self.r_en & self.r_rdy
        # From flip-flops alone: the room counts every item on its way, not the consumer's pop.
        issue = ~nothing_stored & ~fabric_full
        skip_memory = do_write & nothing_stored & ~fabric_full
        follow = skip_memory & (issued | delayed_valid)
        straight = skip_memory & ~follow
        store = do_write & ~skip_memory
        m.d.comb += [
            self.w_rdy.eq(~full), self.level.eq(total),
            write.addr.eq(produce), write.data.eq(self.w_data), write.en.eq(store),
            read.addr.eq(consume),
        ]
        m.d.sync += [landed.eq(read.data), landed_valid.eq(issued), issued.eq(issue), delayed_valid.eq(follow)]
        with m.If(follow):
            m.d.sync += delayed.eq(self.w_data)
        with m.If(store):
            m.d.sync += produce.eq(successor(produce, depth))
        with m.If(issue):
            m.d.sync += consume.eq(successor(consume, depth))
        m.d.sync += [
            stored.eq(count_stepped(stored, store, issue)),
            nothing_stored.eq(count_becomes(stored, 0, store, issue)),
            total.eq(count_stepped(total, do_write, pop)),
            full.eq(count_becomes(total, depth, do_write, pop)),
            # A read issued and an item skipping the memory never coincide (stored or not).
            in_fabric.eq(count_stepped(in_fabric, issue | skip_memory, pop)),
            fabric_full.eq(count_becomes(in_fabric, queue, issue | skip_memory, pop)),
        ]
        # At most two a cycle, in age order: the landed read, then the delayed or straight item.
        arrivals = [(landed_valid, landed), (delayed_valid | straight, Mux(delayed_valid, delayed, self.w_data))]

        self._queue_logic(m, arrivals=arrivals)
        return m

    def _queue_logic(self, m, *, arrivals):
        """The fabric queue: ``r_data``, a register, and a ring behind it that every arriving item
        is written into (at most two a cycle, enables from flip-flops and ``w_en``). The head is
        loaded from the ring's oldest unread slot, or, the ring holding none, from the first
        arriving item, whose slot is then skipped; ``r_en`` reaches only that load's enable."""
        width, ring_size = len(self.w_data), self._queue - 1
        ring = Array(Signal(width, reset_less=True, name=f"ring{i}") for i in range(ring_size))
        tail, oldest = Signal(range(ring_size)), Signal(range(ring_size))
        unread = Signal(range(ring_size + 1))
        (first_valid, first), (second_valid, second) = arrivals
        second_slot = Mux(first_valid, successor(tail, ring_size), tail)
        for i in range(ring_size):
            with m.If(first_valid & (tail == i)):
                m.d.sync += ring[i].eq(first)
            with m.Elif(second_valid & (second_slot == i)):
                m.d.sync += ring[i].eq(second)
        arriving = first_valid + second_valid
        m.d.sync += tail.eq(Mux(arriving == 0, tail, Mux(arriving == 1, successor(tail, ring_size),
                                                          successor(successor(tail, ring_size), ring_size))))

        head = Signal(width, reset_less=True)
        head_free = ~self.r_rdy | self.r_en
        load = head_free & ((unread != 0) | first_valid | second_valid)
        with m.If(load):
            m.d.sync += [head.eq(Mux(unread != 0, ring[oldest], Mux(first_valid, first, second))),
                         oldest.eq(successor(oldest, ring_size))]
        m.d.sync += [
            self.r_rdy.eq(Mux(head_free, load, 1)),
            unread.eq(unread + arriving - load),
        ]
        m.d.comb += self.r_data.eq(head)

