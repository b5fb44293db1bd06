"""A reorder buffer: slots taken in order, filled in any order, handed on in order.

A PE's off-chip reads come back out of order across AXI ids; each request takes the next slot
at issue (its id names the slot), its response fills that slot, and the items leave in the
order they were requested. A slot that needs no response (a barrier in the stream of index
lookups) is filled when it is taken.
"""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["ReorderBuffer"]


class ReorderBuffer(wiring.Component):
    """``depth`` slots of ``{meta, data}``.

    Parameters
    ----------
    depth : int
    meta : ShapeLike
        Written when a slot is taken (what the requester knows).
    shape : ShapeLike
        Written when the slot is filled (the response).
    max_take : int
        Most slots one take may claim (a burst's words); then ``depth`` is a power of two.

    Ports
    -----
    take : In(1)
        Take the next ``take_count`` slots (only while ``can_take``); ``take_meta`` goes with the
        first, ``take_filled`` marks it filled at once (single slots only). ``slot`` is the first
        slot taken.
    take_count : In(range(max_take + 1))
        Slots one take claims (``max_take`` > 1 only; else always one).
    can_take : Out(1)
        ``max_take`` slots are free.
    fill, fill_slot, fill_data : In
        Fill a taken slot with its response.
    o : Out(stream {meta, data})
        The oldest slot, once filled.
    used : Out(range(depth + 1))
        Slots taken and not yet handed on.
    """

    def __init__(self, *, depth, meta, shape, max_take=1):
        if max_take > 1 and depth & (depth - 1):
            raise ValueError(f"a reorder buffer taking bursts needs a power-of-two depth, not {depth}")
        self._depth = depth
        self._meta = meta
        self._shape = shape
        self._max_take = max_take
        slot_bits = max(1, (depth - 1).bit_length())
        super().__init__({
            "take": In(1), "take_meta": In(meta), "take_filled": In(1), "can_take": Out(1),
            "take_count": In(range(max_take + 1)),
            "slot": Out(slot_bits),
            "fill": In(1), "fill_slot": In(slot_bits), "fill_data": In(shape),
            "o": Out(stream.Signature(data.StructLayout({"meta": meta, "data": shape}))),
            "used": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self._depth
        # Small memories read without a clock (distributed RAM on an FPGA): the head is visible
        # in the cycle its slot is filled.
        m.submodules.metas = metas = memory.Memory(shape=self._meta, depth=depth, init=[])
        m.submodules.words = words = memory.Memory(shape=self._shape, depth=depth, init=[])
        head = Signal.like(self.slot)
        filled = Signal(depth)

        def following(slot):
            return Mux(slot == depth - 1, 0, slot + 1)

        take = self.take & self.can_take
        pop = self.o.valid & self.o.ready
        meta_wr, word_wr = metas.write_port(), words.write_port()
        meta_rd, word_rd = metas.read_port(domain="comb"), words.read_port(domain="comb")
        count = self.take_count if self._max_take > 1 else 1
        m.d.comb += [
            self.can_take.eq(self.used <= depth - self._max_take),
            meta_wr.en.eq(take), meta_wr.addr.eq(self.slot), meta_wr.data.eq(self.take_meta),
            word_wr.en.eq(self.fill), word_wr.addr.eq(self.fill_slot), word_wr.data.eq(self.fill_data),
            meta_rd.addr.eq(head), word_rd.addr.eq(head),
            self.o.valid.eq((filled >> head)[0]),
            self.o.payload.meta.eq(meta_rd.data), self.o.payload.data.eq(word_rd.data),
        ]
        one = Const(1, depth)
        set_bits = Mux(self.fill, one << self.fill_slot, 0) | Mux(take & self.take_filled, one << self.slot, 0)
        clear_bits = Mux(pop, one << head, 0)
        m.d.sync += filled.eq((filled | set_bits) & ~clear_bits)
        with m.If(take):
            # A power-of-two depth wraps by itself when a take claims several slots.
            m.d.sync += self.slot.eq(self.slot + count if self._max_take > 1 else following(self.slot))
        with m.If(pop):
            m.d.sync += head.eq(following(head))
        m.d.sync += self.used.eq(self.used + Mux(take, count, 0) - pop)
        return m
