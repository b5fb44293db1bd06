"""A small queue that takes several items per cycle and gives one, in order."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .layouts import lanes_layout

__all__ = ["LaneQueue"]


class LaneQueue(wiring.Component):
    """Register queue: up to ``lanes`` items in per cycle (lane order), one out per cycle.

    Lanes whose ``valid`` bit is clear are dropped, so the queue also filters. ``i.ready`` is
    high while ``lanes`` entries are free; the head is a register.

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
        entries = [Signal(self._shape, name=f"entry{k}") for k in range(depth)]
        count = Signal(range(depth + 1))
        m.d.comb += [
            self.o.valid.eq(count != 0),
            self.o.payload.eq(entries[0]),
            self.i.ready.eq(count <= depth - lanes),
        ]
        pop = self.o.valid & self.o.ready
        push = self.i.valid & self.i.ready
        kept = self.i.payload.valid & push.replicate(lanes)

        # Compact the kept lanes: write k goes to slot ``after_pop + k``.
        writes = [Signal(self._shape, name=f"write{k}") for k in range(lanes)]
        write_count = Signal(range(lanes + 1))
        for k in range(lanes):
            # The k-th kept lane is the lane j with k kept lanes before it.
            for j in range(k, lanes):
                chosen = kept[j] & (sum(kept[t] for t in range(j)) == k) if j else kept[j]
                with m.If(chosen):
                    m.d.comb += writes[k].eq(self.i.payload.lanes[j])
        m.d.comb += write_count.eq(sum(kept[j] for j in range(lanes)))

        after_pop = Signal(range(depth + 1))
        m.d.comb += after_pop.eq(count - pop)
        for position in range(depth):
            below = entries[position + 1] if position + 1 < depth else entries[position]
            m.d.sync += entries[position].eq(Mux(pop, below, entries[position]))
            for k in range(lanes):
                with m.If((write_count > k) & (after_pop + k == position)):
                    m.d.sync += entries[position].eq(writes[k])
        m.d.sync += count.eq(after_pop + write_count)
        return m
