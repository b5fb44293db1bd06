"""The barrier's shortcut past the empty stages of an on-chip scatter unit.

A barrier has no edges to read: when every stage between it and the kernel (its register stage too) is
empty, nothing can be ahead of it, and it goes straight there — from the edge-index stage (four
cycles less per superstep: a barrier goes round every superstep) or from the list stage (two
cycles less).
"""

from amaranth.hdl import Module, Mux
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import edge_item_layout

__all__ = ["BarrierBypass"]


class BarrierBypass(wiring.Component):
    """The merge of the edge path and the barrier's two shortcuts in front of the register stage.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
        Its ``net_update`` is the barrier's payload.
    config : gravfm.hw.SystemConfig

    Ports
    -----
    index_barrier : In(stream net_update)
        A barrier at the front of the edge-index stage; taken only if ``lists_empty`` too.
    list_barrier : In(stream net_update)
        A barrier at the head of the list stage.
    lists_empty, generator_empty, feed_empty : In(1)
        The list stage, the address generator and the register stage hold nothing ahead of the
        barrier. All three are flip-flops: a shortcut is decided from registers (timing plan,
        rule 4), not from the register stage's ``ready``, which runs back from the message path
        through the kernel (a barrier behind an item leaving the register stage waits a cycle).
    round : In(round_bits)
        The round a barrier taken here carries.
    edges : In(stream edge_item_layout)
        The edge read's output (empty when its ``valid`` is low).
    o : Out(stream edge_item_layout)
        To the register stage: the edges, or a barrier taken by a shortcut.
    taken : Out(1)
        A barrier took a shortcut this cycle.
    """

    def __init__(self, *, layouts, config):
        item = edge_item_layout(layouts, config)
        super().__init__({
            "index_barrier": In(stream.Signature(layouts.net_update)),
            "list_barrier": In(stream.Signature(layouts.net_update)),
            "lists_empty": In(1),
            "generator_empty": In(1),
            "feed_empty": In(1),
            "round": In(config.pe.round_bits),
            "edges": In(stream.Signature(item)),
            "o": Out(stream.Signature(item)),
            "taken": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        downstream_empty = self.generator_empty & ~self.edges.valid & self.feed_empty
        a_skip = self.index_barrier.valid & self.index_barrier.ready
        lists_skip = self.list_barrier.valid & self.list_barrier.ready
        barrier_skip = a_skip | lists_skip
        m.d.comb += [
            self.index_barrier.ready.eq(self.lists_empty & downstream_empty),
            self.list_barrier.ready.eq(downstream_empty),
            self.taken.eq(barrier_skip),
            self.edges.ready.eq(self.o.ready),
            self.o.valid.eq(self.edges.valid | barrier_skip),
            self.o.payload.edge.eq(self.edges.payload.edge),
        ]
        with m.If(barrier_skip):
            m.d.comb += [
                self.o.payload.item.eq(Mux(a_skip, self.index_barrier.payload, self.list_barrier.payload)),
                self.o.payload.round.eq(self.round), self.o.payload.length.eq(0)]
        with m.Else():
            edge = self.edges.payload
            m.d.comb += [self.o.payload.item.eq(edge.item), self.o.payload.round.eq(edge.round),
                         self.o.payload.length.eq(edge.length)]
        return m
