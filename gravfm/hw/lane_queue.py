"""A small queue that takes several items per cycle and gives one, in order."""

from amaranth.hdl import Cat, Module, Shape, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .layouts import lanes_layout
from .selection import one_hot_select
from .skid_buffer import ReadySlice, SkidBuffer
from .stream_fifo import BufferedFIFO

__all__ = ["LaneQueue", "RegisteredLaneQueue"]


class LaneQueue(wiring.Component):
    """In-order queue: up to ``lanes`` items in per cycle (lane order), one out per cycle.

    Lanes whose ``valid`` bit is clear are dropped, so the queue also filters. ``i.ready`` is
    high while ``lanes`` entries are free; the head comes from a register, and ``o.valid`` and
    ``i.ready`` from register bits through one LUT.

    The entries are ``lanes`` banks, each a LUT-RAM :class:`~gravfm.hw.stream_fifo.BufferedFIFO`
    of ``depth // lanes`` items with one head register, and the items are dealt to them round
    robin: the k-th item kept in a cycle goes to bank ``(w + k) mod lanes``, the head is bank
    ``r``'s head, ``w`` and ``r`` one-hot registers. A bank takes at most one item a cycle, so
    its write is one choice among the lanes, and ``i.ready`` (every bank has a free entry) says
    exactly what a single queue's "``lanes`` entries free" would, the banks' fill levels never
    differing by more than one. Before, the entries were registers shifted on each read: every
    entry's enable then came from the lanes' placement and the read together (four LUT levels),
    fanned out over a queue of ``depth`` x item flip-flops spread across the scatter unit: the
    worst path of FPGA 0 of 2 x 4 PEs (113.1 MHz on ECP5, a86f76b, router2 seed 1; 7.7 of its
    8.8 ns routing). The timing is the same.

    Parameters
    ----------
    shape : ShapeLike
        Item layout.
    lanes : int
        Items per input cycle (2 or more).
    depth : int
        Entries: a multiple of ``lanes``, at least ``2 * lanes``.

    Ports
    -----
    i : In(stream ``{lanes: [shape] * lanes, valid}``)
    o : Out(stream shape)
    """

    def __init__(self, *, shape, lanes=2, depth=4):
        if not isinstance(lanes, int) or lanes < 2:
            raise TypeError(f"LaneQueue lanes must be an integer >= 2, not {lanes!r}")
        if not isinstance(depth, int) or depth < 2 * lanes or depth % lanes:
            raise TypeError(f"LaneQueue depth must be a multiple of lanes ({lanes}) and at least "
                            f"{2 * lanes}, not {depth!r}")
        self._shape = shape
        self._lanes = lanes
        self._depth = depth
        super().__init__({
            "i": In(stream.Signature(lanes_layout(shape, lanes))),
            "o": Out(stream.Signature(shape)),
        })

    def elaborate(self, platform):
        m = Module()
        lanes = self._lanes
        width = Shape.cast(self._shape).width
        banks = [BufferedFIFO(width=width, depth=self._depth // lanes, ram_style="distributed", bypass=True)
                 for _ in range(lanes)]
        for b, bank in enumerate(banks):
            m.submodules[f"bank{b}"] = bank
        write_bank = Signal(lanes, init=1)  # one-hot: the bank the next item kept goes to
        read_bank = Signal(lanes, init=1)   # one-hot: the bank holding the oldest item
        m.d.comb += self.i.ready.eq(Cat(bank.w_rdy for bank in banks).all())
        push = self.i.valid & self.i.ready
        kept = [self.i.payload.valid[j] & push for j in range(lanes)]
        # Lane j's item is the (kept lanes before j)-th of the cycle.
        for b, bank in enumerate(banks):
            lands = [kept[j] & Cat((sum(kept[:j]) == k) & write_bank[(b - k) % lanes]
                                   for k in range(j + 1)).any() for j in range(lanes)]
            m.d.comb += [bank.w_en.eq(Cat(lands).any()),
                         bank.w_data.eq(one_hot_select(lands, [Value.cast(lane) for lane in self.i.payload.lanes]))]
        written = sum(kept)
        with m.Switch(written):
            for count in range(1, lanes + 1):
                with m.Case(count):
                    m.d.sync += write_bank.eq(write_bank.rotate_left(count))
        m.d.comb += [
            self.o.valid.eq(Cat(read_bank[b] & bank.r_rdy for b, bank in enumerate(banks)).any()),
            Value.cast(self.o.payload).eq(one_hot_select(read_bank, [bank.r_data for bank in banks])),
        ]
        for b, bank in enumerate(banks):
            m.d.comb += bank.r_en.eq(self.o.ready & read_bank[b])
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += read_bank.eq(read_bank.rotate_left(1))
        return m


class RegisteredLaneQueue(wiring.Component):
    """A :class:`LaneQueue` between two registered stages (the timing plan's rule 2): a
    :class:`~gravfm.hw.skid_buffer.SkidBuffer` in front, so that the lanes' placement starts at
    fabric flip-flops (not at a block RAM's output register across the chip), and a
    :class:`~gravfm.hw.skid_buffer.ReadySlice` behind, so that the queue's pop comes from a
    flip-flop (not from the consumer's ready chain, which fans out to every entry). One cycle
    more on the way in; none on the way out.

    Parameters and ports as :class:`LaneQueue`'s, and ``empty : Out(1)``: nothing is held, in
    the queue or in either stage.
    """

    def __init__(self, *, shape, lanes=2, depth=4):
        self._queue = LaneQueue(shape=shape, lanes=lanes, depth=depth)
        super().__init__({
            "i": In(stream.Signature(lanes_layout(shape, lanes))),
            "o": Out(stream.Signature(shape)),
            "empty": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.queue = queue = self._queue
        m.submodules.entry = entry = SkidBuffer(shape=self.i.payload.shape())
        m.submodules.exit = leaving = ReadySlice(shape=self.o.payload.shape())
        wiring.connect(m, wiring.flipped(self.i), entry.i)
        wiring.connect(m, entry.o, queue.i)
        wiring.connect(m, queue.o, leaving.i)
        wiring.connect(m, leaving.o, wiring.flipped(self.o))
        m.d.comb += self.empty.eq(~entry.o.valid & ~leaving.o.valid)
        return m
