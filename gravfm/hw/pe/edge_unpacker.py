"""Stage U of an off-chip scatter unit: one edge per cycle from the descriptors and the words.

A list's inline edges come from its descriptor, the rest from the edge words in list order
(``W / slot`` edges a word); a barrier needs no word.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...model.offchip_layout import INDEX_LENGTH_BITS
from ..layouts import edge_item_layout
from .list_bursts import descriptor_layout

__all__ = ["EdgeUnpacker"]


class EdgeUnpacker(wiring.Component):
    """Edges out of packed memory words.

    Parameters
    ----------
    layouts, config
        As :class:`gravfm.hw.pe.offchip_scatter.OffchipScatterUnit`.
    layout : gravfm.model.offchip_layout.OffchipLayout
        Edges per word, their slot, the inline edges.

    Ports
    -----
    lists : In(stream descriptor_layout)
        The lists and barriers, in order.
    words : In(stream memory word)
        The lists' edge words, in order.
    round : In(round_bits)
        The round of the item ``o`` offers.
    o : Out(stream edge_item_layout)
        One item per edge and per barrier.
    word_wait : Out(1)
        A list's next edge is in a word not yet received.
    """

    def __init__(self, *, layouts, config, layout):
        self._layouts = layouts
        self._layout = layout
        super().__init__({
            "lists": In(stream.Signature(descriptor_layout(layouts, layout))),
            "words": In(stream.Signature(config.pe.memory_word_bits)),
            "round": In(config.pe.round_bits),
            "o": Out(stream.Signature(edge_item_layout(layouts, config))),
            "word_wait": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        layout = self._layout
        slots, inline = layout.per_word, layout.inline
        u_slot = Signal(range(slots))
        u_done = Signal(INDEX_LENGTH_BITS)   # edges of the current list already delivered
        current = self.lists.payload
        u_barrier = current.item.barrier
        u_inline = u_done < inline   # (constant 0 without inline edges)
        u_valid = self.lists.valid & (u_barrier | u_inline | self.words.valid)
        u_fire = u_valid & self.o.ready
        last_edge = u_done + 1 == current.length
        m.d.comb += [
            self.lists.ready.eq(u_fire & (u_barrier | last_edge)),
            self.words.ready.eq(u_fire & ~u_barrier & ~u_inline & (last_edge | (u_slot == slots - 1))),
        ]
        with m.If(u_fire & ~u_barrier):
            m.d.sync += u_done.eq(Mux(last_edge, 0, u_done + 1))
        with m.If(u_fire & ~u_barrier & ~u_inline):
            m.d.sync += u_slot.eq(Mux(last_edge | (u_slot == slots - 1), 0, u_slot + 1))
        edge_bits = self.words.payload.word_select(u_slot, layout.slot_bits)
        if inline:
            inline_select = u_done[:max(1, (inline - 1).bit_length())]
            edge_bits = Mux(u_inline, current.inline.word_select(inline_select, layout.slot_bits), edge_bits)
        m.d.comb += [
            self.o.valid.eq(u_valid),
            self.o.payload.item.eq(current.item), self.o.payload.round.eq(self.round),
            self.o.payload.length.eq(current.length), self.o.payload.edge.eq(edge_bits[:self._layouts.edge_word.size]),
            self.word_wait.eq(self.lists.valid & ~u_barrier & ~u_inline & ~self.words.valid),
        ]
        return m
