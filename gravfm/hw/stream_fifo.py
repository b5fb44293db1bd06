"""A synchronous FIFO with stream ports carrying a data layout."""

from amaranth.hdl import Module, Mux, Shape, Signal, Value
from amaranth.lib import fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .fifo_parts import buffer_ports, count_becomes, count_stepped, successor
from .memory_ports import no_read_during_write
from .prefetch_fifo import PrefetchFIFO
from .unused import refusal

__all__ = ["BufferedFIFO", "StreamFIFO"]


class BufferedFIFO(wiring.Component):
    """Amaranth's ``SyncFIFOBuffered`` (same ports and timing), storage marked no-read-during-write.

    A read takes a stored entry and a write a free one, so the two ports never address the same
    entry in one cycle; saying so lets synthesis map the storage without collision logic behind
    the block RAM's output (:data:`~gravfm.hw.memory_ports.NO_READ_DURING_WRITE`). ``depth - 1``
    entries live in the memory, one in the output register (``r_data`` while ``r_rdy``).

    With ``head_register`` the head is held in registers after the memory's read, with the same
    timing: the memory is read one item ahead (the address the next cycle's oldest stored item
    will have), and an item written in the cycle before it is needed comes from a copy of the
    last write. A block RAM's late clock-to-out then ends at a register (the RAM's own output
    register once :mod:`gravfm.synth.ecp5_outreg` has absorbed it) instead of running into the
    consumer's logic; ``r_data`` is a multiplexer between two registers.

    With ``bypass`` an item written while nothing is stored and the head is free (or leaving)
    becomes the head the next cycle instead of the second: it goes into the head register, or,
    without one, the memory is read asynchronously (LUT RAM: no block RAM can) and ``r_data`` is
    one register, loaded with the stored item a read takes or with the item bypassed. The
    consumer's ``r_en`` still ends at that register's enable, not at the memory's address as
    reading ahead would make it, and the consumer's logic starts at the register itself: a
    multiplexer behind it (a bypass register or the memory's read register, chosen by a
    flip-flop driving every bit) was the path of FPGA 0 of 2 x 4 PEs (130.3 MHz on ECP5, b5409eb:
    a crossbar FIFO's choice into its endpoint's grant). A barrier crosses every such FIFO on its
    way round a superstep, so each saved cycle is a cycle per superstep. The timing then differs
    from ``SyncFIFOBuffered``.
    """

    def __init__(self, *, width, depth, ram_style=None, head_register=False, bypass=False):
        if not isinstance(depth, int) or depth < 2:
            raise refusal(self, f"BufferedFIFO depth must be an integer >= 2, not {depth!r}")
        self._depth = depth
        self._ram_style = ram_style
        self._head_register = head_register
        self._bypass = bypass
        super().__init__(buffer_ports(width, depth))

    def elaborate(self, platform):
        m = Module()
        stored = self._depth - 1
        m.submodules.storage = storage = memory.Memory(
            shape=len(self.w_data), depth=stored, init=[], attrs=no_read_during_write(self._ram_style))
        read_async = self._bypass and not self._head_register
        write, read = storage.write_port(), storage.read_port(domain="comb" if read_async else "sync")
        produce, consume = Signal(range(stored)), Signal(range(stored))
        count = Signal(range(stored + 1))
        # ``count``'s compares and the read pointer's successor are kept in registers, a cycle
        # ahead (timing plan, rule 4): the read address then comes from flip-flops through one
        # multiplexer, not from a compare of ``count`` and an increment of ``consume``.
        empty, full = Signal(init=1), Signal()
        after_consume = Signal(range(stored), init=1 % stored)
        do_write = self.w_en & self.w_rdy
        head_free = ~self.r_rdy | self.r_en
        do_read = ~empty & head_free
        # A bypassed item is written to the memory too (the slot is free), but not counted.
        bypass, store = Signal(), Signal()
        if self._bypass:
            m.d.comb += bypass.eq(do_write & empty & head_free)
        m.d.comb += store.eq(do_write & ~bypass)

        m.d.comb += [
            self.w_rdy.eq(~full),
            write.addr.eq(produce), write.data.eq(self.w_data), write.en.eq(do_write),
            self.level.eq(count + self.r_rdy),
        ]
        if self._head_register:
            next_consume = Mux(do_read, after_consume, consume)
            m.d.comb += [read.addr.eq(next_consume), read.en.eq(1)]
            # The oldest stored item next cycle is the one written now: the memory cannot return it yet.
            fresh = Signal()
            last_write = Signal(len(self.w_data), reset_less=True)
            # Both compares from registers, chosen by ``do_read``: not a compare behind the
            # pointer's multiplexer (the 1-PE top's deepest path).
            m.d.sync += fresh.eq(store & Mux(do_read, produce == after_consume, produce == consume))
            with m.If(do_write):
                m.d.sync += last_write.eq(self.w_data)
            # The head is one of two registers, chosen by a flip-flop: one fed by nothing but
            # the memory's output (synthesis takes it into a block RAM's own output register,
            # gravfm.synth.ecp5_outreg), the other holding an item the memory cannot return
            # yet (written the cycle before, or bypassed). A multiplexer in front of a single
            # head register would keep the RAM's late clock-to-out in the path.
            from_memory = Signal(len(self.w_data), reset_less=True)
            held = Signal(len(self.w_data), reset_less=True)
            use_held = Signal()
            with m.If(do_read):
                m.d.sync += [from_memory.eq(read.data), held.eq(last_write), use_held.eq(fresh)]
            with m.Elif(bypass):
                m.d.sync += [held.eq(self.w_data), use_held.eq(1)]
            m.d.comb += self.r_data.eq(Mux(use_held, held, from_memory))
        elif read_async:
            # A read (something stored) and a bypass (nothing stored) never coincide.
            head = Signal(len(self.w_data), reset_less=True)
            m.d.comb += [read.addr.eq(consume), self.r_data.eq(head)]
            with m.If(do_read):
                m.d.sync += head.eq(read.data)
            with m.Elif(bypass):
                m.d.sync += head.eq(self.w_data)
        else:
            m.d.comb += [read.addr.eq(consume), read.en.eq(do_read), self.r_data.eq(read.data)]
        with m.If(store):
            m.d.sync += produce.eq(successor(produce, stored))
        with m.If(do_read):
            m.d.sync += [consume.eq(after_consume), after_consume.eq(successor(after_consume, stored))]
        with m.If(do_read | bypass):
            m.d.sync += self.r_rdy.eq(1)
        with m.Elif(self.r_en):
            m.d.sync += self.r_rdy.eq(0)
        m.d.sync += [count.eq(count_stepped(count, store, do_read)),
                     empty.eq(count_becomes(count, 0, store, do_read)),
                     full.eq(count_becomes(count, stored, store, do_read))]
        return m


class StreamFIFO(wiring.Component):
    """First-word-fall-through FIFO between two streams.

    Parameters
    ----------
    shape : ShapeLike
        Payload layout.
    depth : int
        Capacity in items (a memory-backed :class:`BufferedFIFO`).
    output_register : bool
        Put a plain register (enable only, no logic in front) behind the buffer's output, one
        more item of capacity and one cycle of latency. A deep FIFO lands in block RAM, whose
        output comes late (ECP5 DP16KD: ~4.3 ns clock-to-out); this ends that path at a
        flip-flop instead of running it into the consumer's logic. ``o.ready`` then reaches
        the buffer's read enable combinationally.
    ram_style : str or None
        Yosys's ``ram_style`` for the storage (e.g. ``"distributed"``: LUT RAM, read through a
        flip-flop placed by its logic, where block RAM's late output would start the path);
        None lets synthesis choose.
    head_register : bool
        Hold the head item in a fabric flip-flop, the memory read one item ahead
        (:class:`BufferedFIFO`): same capacity and timing, without the block RAM's
        clock-to-out in front of the consumer's logic. ``o.ready`` then reaches the memory's
        read address: it must not depend on ``o.payload`` (timing plan, rule 2).
    bypass : bool
        An item written into an empty FIFO is readable the next cycle (one cycle of latency
        instead of two; a one-item FIFO, a single register, has that latency anyway).
    prefetch : bool
        A block RAM read from registers alone into a small fabric queue
        (:class:`~gravfm.hw.prefetch_fifo.PrefetchFIFO`), ``bypass``'s timing: ``o.ready``
        reaches neither the memory nor anything but fabric registers' enables, so it may depend
        on ``o.payload``. Needs ``bypass`` and a ``depth`` above the queue's, and takes neither
        ``ram_style`` nor ``head_register``.

    Ports
    -----
    i : In(stream.Signature(shape))
        Items to store; ``ready`` is low when full.
    o : Out(stream.Signature(shape))
        Items in arrival order.
    level : Out(range(depth + 1))
        Number of items stored (not counting the output register).
    """

    def __init__(self, *, shape, depth, output_register=False, ram_style=None, head_register=False, bypass=False,
                 prefetch=False):
        if not isinstance(depth, int) or depth < 1:
            raise refusal(self, f"FIFO depth must be a positive integer, not {depth!r}")
        if prefetch and (ram_style or head_register or not bypass or depth <= PrefetchFIFO.QUEUE):
            raise refusal(self, f"a prefetch FIFO needs bypass and a depth > {PrefetchFIFO.QUEUE}, and takes no "
                                f"ram_style or head_register")
        self._prefetch = prefetch
        self._shape = shape
        self._depth = depth
        self._ram_style = ram_style
        self._head_register = head_register
        self._output_register = output_register
        self._bypass = bypass
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)),
            "level": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        width = Shape.cast(self._shape).width
        if self._prefetch:
            buffer = PrefetchFIFO(width=width, depth=self._depth)
        elif self._depth > 1:
            buffer = BufferedFIFO(width=width, depth=self._depth, ram_style=self._ram_style,
                                  head_register=self._head_register, bypass=self._bypass)
        else:  # one item needs no memory: the library's FIFO is then a single register
            buffer = fifo.SyncFIFOBuffered(width=width, depth=1)
        m.submodules.fifo = buffer
        m.d.comb += [
            buffer.w_data.eq(Value.cast(self.i.payload)),
            buffer.w_en.eq(self.i.valid),
            self.i.ready.eq(buffer.w_rdy),
            self.level.eq(buffer.level),
        ]
        if not self._output_register:
            m.d.comb += [Value.cast(self.o.payload).eq(buffer.r_data), self.o.valid.eq(buffer.r_rdy),
                         buffer.r_en.eq(self.o.ready)]
            return m
        advance = ~self.o.valid | self.o.ready
        data = Signal(width, reset_less=True)  # no reset logic between the memory and the register
        m.d.comb += [buffer.r_en.eq(advance), Value.cast(self.o.payload).eq(data)]
        with m.If(advance):
            m.d.sync += [self.o.valid.eq(buffer.r_rdy), data.eq(buffer.r_data)]
        return m
