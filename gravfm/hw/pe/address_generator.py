"""Stage B of an on-chip scatter unit: one edge address per cycle from each list.

The generator loads the next list in the cycle the current one issues its last edge, so
consecutive lists stream without a bubble; a zero-length list costs one cycle. A barrier is one
item behind its round's last edge.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import edge_address_layout, edge_list_layout

__all__ = ["AddressGenerator"]


class AddressGenerator(wiring.Component):
    """Edge addresses from edge lists.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    config : gravfm.hw.SystemConfig
        Its ``pe.edge_addr_bits`` and ``pe.edge_len_bits`` size the address and the edge count.

    Ports
    -----
    lists : In(stream edge_list_layout)
        The lists (and barriers) in order. ``ready`` is high whenever the generator is idle.
    bypassed : In(1)
        The list at the head of ``lists`` (a barrier) leaves by another path this cycle: it is
        taken, and the generator stays idle.
    o : Out(stream edge_address_layout)
        One item per edge, and one per barrier.
    empty : Out(1)
        Nothing to issue (no edge, no barrier) this cycle.
    busy : Out(1)
        A list is loaded (possibly with nothing left to issue).
    """

    def __init__(self, *, layouts, config):
        self._config = config
        super().__init__({
            "lists": In(stream.Signature(edge_list_layout(layouts, config))),
            "bypassed": In(1),
            "o": Out(stream.Signature(edge_address_layout(layouts, config))),
            "empty": Out(1),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        pe = self._config.pe
        # ``left`` counts the edges still to issue; its tests (nonzero, one) are kept in
        # registers so that ``fire`` is shallow logic.
        busy = Signal()
        address = Signal(pe.edge_addr_bits)
        left = Signal(pe.edge_len_bits)
        left_nonzero = Signal()
        left_one = Signal()
        length = Signal(pe.edge_len_bits)
        is_barrier = Signal()
        current = Signal.like(self.o.payload.item)
        b_valid = busy & (left_nonzero | is_barrier)
        fire = b_valid & self.o.ready
        last = is_barrier | left_one
        take = self.lists.ready
        next_item, next_start, next_length = (self.lists.payload.item, self.lists.payload.start,
                                              self.lists.payload.length)
        m.d.comb += take.eq(~busy | (~is_barrier & ~left_nonzero) | (fire & last))
        with m.If(take):
            m.d.sync += busy.eq(self.lists.valid & ~self.bypassed)
            with m.If(self.lists.valid):
                edges = ~next_item.barrier
                m.d.sync += [
                    address.eq(next_start),
                    left.eq(next_length & edges.replicate(pe.edge_len_bits)),
                    left_nonzero.eq(edges & (next_length != 0)),
                    left_one.eq(edges & (next_length == 1)),
                    length.eq(next_length),
                    is_barrier.eq(next_item.barrier),
                    current.eq(next_item),
                ]
        with m.Elif(fire):
            m.d.sync += [address.eq(address + 1), left.eq(left - 1),
                         left_nonzero.eq(~left_one), left_one.eq(left == 2)]
        m.d.comb += [
            self.o.valid.eq(b_valid),
            self.o.payload.item.eq(current), self.o.payload.length.eq(length), self.o.payload.address.eq(address),
            self.empty.eq(~b_valid),
            self.busy.eq(busy),
        ]
        return m
