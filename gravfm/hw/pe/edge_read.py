"""Stage C of an on-chip scatter unit: the edge array and its read, one edge per cycle."""

from amaranth.hdl import Module, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import edge_address_layout, edge_item_layout
from ..memory_ports import NO_READ_DURING_WRITE, write_port_signature

__all__ = ["EdgeRead"]


class EdgeRead(wiring.Component):
    """The edge array of a scatter unit, read at the generator's addresses.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
        Its ``edge_word`` is the array's word.
    config : gravfm.hw.SystemConfig
        Its ``pe.edges_per_pe`` is the array's depth.

    Ports
    -----
    i : In(stream edge_address_layout)
        Edges (and barriers) to read.
    round : In(round_bits)
        The round of the item ``i`` offers (registered with it).
    edge_wr : In(write port, edge_word)
        Host writes to the edge array.
    o : Out(stream edge_item_layout)
        The item, its edge word straight from the block RAM's output (no register: the stage
        behind takes it into flip-flops).
    """

    def __init__(self, *, layouts, config):
        self._layouts = layouts
        self._config = config
        super().__init__({
            "i": In(stream.Signature(edge_address_layout(layouts, config))),
            "round": In(config.pe.round_bits),
            "edge_wr": In(write_port_signature(config.pe.edge_addr_bits, layouts.edge_word)),
            "o": Out(stream.Signature(edge_item_layout(layouts, config))),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, pe = self._layouts, self._config.pe
        m.submodules.edge_mem = edge_mem = memory.Memory(
            shape=layouts.edge_word, depth=pe.edges_per_pe, init=[], attrs=NO_READ_DURING_WRITE)
        wr = edge_mem.write_port()
        m.d.comb += [wr.addr.eq(self.edge_wr.addr), wr.en.eq(self.edge_wr.en), wr.data.eq(self.edge_wr.data)]
        edge_rd = edge_mem.read_port()
        c_valid = Signal()
        c_item = Signal(layouts.net_update)
        c_round = Signal(pe.round_bits)
        c_length = Signal(pe.edge_len_bits)
        c_advance = ~c_valid | self.o.ready
        m.d.comb += [self.i.ready.eq(c_advance), edge_rd.addr.eq(self.i.payload.address), edge_rd.en.eq(c_advance)]
        with m.If(c_advance):
            m.d.sync += [c_valid.eq(self.i.valid), c_item.eq(self.i.payload.item), c_round.eq(self.round),
                         c_length.eq(self.i.payload.length)]
        m.d.comb += [self.o.valid.eq(c_valid), self.o.payload.item.eq(c_item), self.o.payload.round.eq(c_round),
                     self.o.payload.length.eq(c_length), self.o.payload.edge.eq(edge_rd.data)]
        return m
