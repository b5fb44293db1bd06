"""A small queue that takes several items per cycle and gives one, in order."""

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .layouts import lanes_layout
from .skid_buffer import ReadySlice, SkidBuffer

__all__ = ["LaneQueue", "RegisteredLaneQueue"]


class LaneQueue(wiring.Component):
    """Register queue: up to ``lanes`` items in per cycle (lane order), one out per cycle.

    Lanes whose ``valid`` bit is clear are dropped, so the queue also filters. ``i.ready`` is
    high while ``lanes`` entries are free; the head is a register, and ``o.valid`` and
    ``i.ready`` are register bits.

    Parameters
    ----------
    shape : ShapeLike
        Item layout.
    lanes : int
        Items per input cycle (2 or more).
    depth : int
        Entries (at least ``lanes``).

    Ports
    -----
    i : In(stream ``{lanes: [shape] * lanes, valid}``)
    o : Out(stream shape)
    """

    def __init__(self, *, shape, lanes=2, depth=4):
        if not isinstance(lanes, int) or lanes < 2:
            raise TypeError(f"LaneQueue lanes must be an integer >= 2, not {lanes!r}")
        if not isinstance(depth, int) or depth < lanes:
            raise TypeError(f"LaneQueue depth must be an integer >= lanes ({lanes}), not {depth!r}")
        self._shape = shape
        self._lanes = lanes
        self._depth = depth
        super().__init__({
            "i": In(stream.Signature(lanes_layout(shape, lanes))),
            "o": Out(stream.Signature(shape)),
        })

    def elaborate(self, platform):
        m = Module()
        lanes, depth = self._lanes, self._depth
        entries = [Signal(self._shape, name=f"entry{k}", reset_less=True) for k in range(depth)]
        # The fill level as a thermometer (``filled[c]``: more than c entries held): the head's
        # valid and the input's ready are register bits, and a slot's "count == q" one LUT.
        filled = Signal(depth)
        m.d.comb += [
            self.o.valid.eq(filled[0]),
            self.o.payload.eq(entries[0]),
            self.i.ready.eq(~filled[depth - lanes]),
        ]
        pop = self.o.valid & self.o.ready
        push = self.i.valid & self.i.ready
        kept = [self.i.payload.valid[j] & push for j in range(lanes)]

        def filled_at(c):
            return C(1, 1) if c < 0 else filled[c] if c < depth else C(0, 1)

        def count_is(q):
            if q < 0 or q > depth:
                return C(0, 1)
            return filled_at(q - 1) & ~filled_at(q)

        # Where each lane lands, counted before the pop: the k-th kept lane at slot ``count + k``.
        # Neither this nor the lanes' choice per entry depends on ``pop``, which only picks, per
        # entry, slot p or p + 1 (timing: the pop comes late, from the consumer's ready chain).
        lands = []
        for j in range(lanes):
            before = sum(kept[:j]) if j else 0
            lands.append([kept[j] & (count_is(q) if j == 0 else
                                     sum((before == k) & count_is(q - k) for k in range(j + 1)).bool())
                          for q in range(depth + 1)])
        for p in range(depth):
            take = [Mux(pop, lands[j][p + 1], lands[j][p]) for j in range(lanes)]
            with m.If(take[0]):
                m.d.sync += entries[p].eq(self.i.payload.lanes[0])
            for j in range(1, lanes):
                with m.Elif(take[j]):
                    m.d.sync += entries[p].eq(self.i.payload.lanes[j])
            if p + 1 < depth:
                with m.Elif(pop):
                    m.d.sync += entries[p].eq(entries[p + 1])

        # New fill level: the thermometer shifted by (kept lanes - pop).
        write_count = sum(kept)
        with m.Switch(Cat(pop, write_count)):
            for written in range(lanes + 1):
                for popped in (0, 1):
                    shift = written - popped
                    with m.Case(popped | written << 1):
                        m.d.sync += filled.eq(Cat(filled_at(c - shift) for c in range(depth)))
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
