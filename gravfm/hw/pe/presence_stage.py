"""The first stages of an off-chip scatter unit: which updates have an edge list in this PE.

::

    updates ─▶ [A] presence bit's word read (block RAM) ─▶ [A2] the bit in a register ─▶ o

Only senders whose presence bit is set cost memory requests, as in the paper ("if a vertex has
zero neighbors on a PE, no memory request is issued"); barriers always pass.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..memory_ports import NO_READ_DURING_WRITE, write_port_signature
from ..protocol import PRESENT_WORD_BITS, PRESENT_WORD_SHIFT

__all__ = ["PresenceStage"]


class PresenceStage(wiring.Component):
    """The presence bits of an off-chip scatter unit and their read stages.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    index_bits : int
        Index entries are the low ``index_bits`` bits of the update's sender.

    Ports
    -----
    updates : In(stream net_update)
    present_wr : In(write port, PRESENT_WORD_BITS)
        Host writes of the presence bits (address = entry // PRESENT_WORD_BITS).
    o : Out(stream {item, entry})
        The barriers and the updates whose sender has a list here, with its index entry.
    active : Out(1)
        A or A2 holds an item.
    """

    def __init__(self, *, layouts, index_bits):
        self._layouts = layouts
        self._index_bits = index_bits
        super().__init__({
            "updates": In(stream.Signature(layouts.net_update)),
            "present_wr": In(write_port_signature(max(1, index_bits - PRESENT_WORD_SHIFT), PRESENT_WORD_BITS)),
            "o": Out(stream.Signature(data.StructLayout({"item": layouts.net_update, "entry": index_bits}))),
            "active": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, index_bits = self._layouts, self._index_bits
        present_words = max(1, 1 << max(0, index_bits - PRESENT_WORD_SHIFT))
        m.submodules.present = present = memory.Memory(shape=PRESENT_WORD_BITS, depth=present_words, init=[],
                                                       attrs=NO_READ_DURING_WRITE)
        wr, rd = present.write_port(), present.read_port()
        m.d.comb += [wr.en.eq(self.present_wr.en), wr.addr.eq(self.present_wr.addr),
                     wr.data.eq(self.present_wr.data)]
        entry_of = self.updates.payload.sender[:index_bits]
        a_valid, a_item = Signal(), Signal(layouts.net_update)
        a_entry = Signal(index_bits)
        a2_valid, a2_item, a2_present = Signal(), Signal(layouts.net_update), Signal()
        a2_entry = Signal(index_bits)
        a2_advance = Signal()
        a_advance = ~a_valid | a2_advance
        m.d.comb += [rd.addr.eq(entry_of[PRESENT_WORD_SHIFT:]), rd.en.eq(a_advance), self.updates.ready.eq(a_advance)]
        with m.If(a_advance):
            m.d.sync += [a_valid.eq(self.updates.valid), a_item.eq(self.updates.payload), a_entry.eq(entry_of)]
        with m.If(a2_advance):
            m.d.sync += [a2_valid.eq(a_valid), a2_item.eq(a_item), a2_entry.eq(a_entry),
                         a2_present.eq(rd.data.bit_select(a_entry[:PRESENT_WORD_SHIFT], 1))]
        # An update without a list here ends in A2.
        m.d.comb += [
            self.o.valid.eq(a2_valid & (a2_present | a2_item.barrier)),
            self.o.payload.item.eq(a2_item), self.o.payload.entry.eq(a2_entry),
            a2_advance.eq(~a2_valid | (~a2_present & ~a2_item.barrier) | (self.o.valid & self.o.ready)),
            self.active.eq(a_valid | a2_valid),
        ]
        return m
