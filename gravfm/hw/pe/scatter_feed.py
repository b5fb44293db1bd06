"""The last stage of both scatter units: the edge in plain registers, then into the kernel."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import edge_item_layout, hardware_id

__all__ = ["ScatterFeed"]


class ScatterFeed(wiring.Component):
    """Stage D: a register stage that turns an edge item into the scatter kernel's input.

    The edge word comes from a block RAM's late output (or a wide select): it goes straight into
    flip-flops instead of through the kernel into the message path (one cycle more per superstep).

    Parameters
    ----------
    layouts, config, pe_index
        The scatter unit's (``pe_index`` makes the neighbours' hardware ids).

    Ports
    -----
    i : In(stream edge_item_layout)
        Edges and barriers (a barrier's edge and length are ignored by the kernel).
    o : Out(stream scatter_in)
        The kernel's input; ``valid`` is a register (this stage is empty when it is low).
    """

    def __init__(self, *, layouts, config, pe_index):
        self._layouts = layouts
        self._config = config
        self._pe_index = pe_index
        super().__init__({
            "i": In(stream.Signature(edge_item_layout(layouts, config))),
            "o": Out(stream.Signature(layouts.scatter_in)),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, config = self._layouts, self._config
        d_valid = Signal()
        d_item = Signal(layouts.net_update)
        d_round = Signal(config.pe.round_bits)
        d_length = Signal(config.pe.edge_len_bits)
        d_edge = Signal(layouts.edge_word, reset_less=True)
        d_advance = ~d_valid | self.o.ready
        m.d.comb += self.i.ready.eq(d_advance)
        with m.If(d_advance):
            m.d.sync += [d_valid.eq(self.i.valid), d_edge.eq(self.i.payload.edge), d_item.eq(self.i.payload.item),
                         d_round.eq(self.i.payload.round), d_length.eq(self.i.payload.length)]
        k = self.o.payload
        m.d.comb += [
            self.o.valid.eq(d_valid),
            k.update.eq(d_item.update),
            k.sender.eq(d_item.sender),
            k.round.eq(d_round),
            k.barrier.eq(d_item.barrier),
            k.neighbor.eq(hardware_id(d_edge.dst, self._pe_index, config)),
            k.num_neighbors.eq(d_length),
            k.edge.eq(d_edge.edge),
        ]
        return m
