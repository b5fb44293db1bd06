"""Stage B of an off-chip scatter unit: from an index entry to burst requests and a descriptor.

A list's edges not inline in its index entry are read in bursts of up to ``MAX_BURST_WORDS``
words, one request per cycle, never across a 4 KiB boundary (as AXI requires); a descriptor per
list (and per barrier) tells the unpacker what the words hold.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..config import MAX_BURST_WORDS
from ...model.offchip_layout import INDEX_ENTRY_BITS, INDEX_LENGTH_BITS, INDEX_START_BITS

__all__ = ["ListBursts", "index_meta_layout", "descriptor_layout"]


def index_meta_layout(layouts, layout):
    """What an index lookup's reorder-buffer slot keeps: the update and its entry within the word."""
    return data.StructLayout({"item": layouts.net_update, "lane": max(1, (layout.entries_per_word - 1).bit_length())})


def descriptor_layout(layouts, layout):
    """A list (or a barrier) for the unpacker: the update, the list's length, its inline edges."""
    return data.StructLayout({"item": layouts.net_update, "length": INDEX_LENGTH_BITS,
                              "inline": max(1, layout.inline * layout.slot_bits)})


class ListBursts(wiring.Component):
    """Bursts and descriptors from the index words, in order.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    config : gravfm.hw.SystemConfig
        Its ``pe.memory_word_bits`` and ``pe.memory_word_bytes``: the words read, the page's words.
    layout : gravfm.model.offchip_layout.OffchipLayout
        Where an index entry keeps its list's start, length and inline edges.
    word_address_bits : int

    Ports
    -----
    index : In(stream {meta: index_meta_layout, data: memory word})
        The index lookups' words, in update order (barriers' words are ignored).
    edge_base : In(word_address_bits)
        Where this PE's lists start in memory.
    descriptors : Out(stream descriptor_layout)
        One per non-empty list and per barrier.
    bursts : Out(stream {word, count})
        The next burst of the current list (``valid`` while words are left to request).
    """

    def __init__(self, *, layouts, config, layout, word_address_bits):
        self._config = config
        self._layout = layout
        super().__init__({
            "index": In(stream.Signature(data.StructLayout({"meta": index_meta_layout(layouts, layout),
                                                            "data": config.pe.memory_word_bits}))),
            "edge_base": In(word_address_bits),
            "descriptors": Out(stream.Signature(descriptor_layout(layouts, layout))),
            "bursts": Out(stream.Signature(data.StructLayout({"word": word_address_bits,
                                                              "count": range(MAX_BURST_WORDS + 1)}))),
        })

    def elaborate(self, platform):
        m = Module()
        pe, layout = self._config.pe, self._layout
        slots, inline = layout.per_word, layout.inline
        b_word = Signal.like(self.edge_base)
        b_left = Signal(INDEX_LENGTH_BITS)   # words of the list still to request
        head_word = self.index.payload.data
        entry = (head_word.word_select(self.index.payload.meta.lane, layout.entry_bits) if layout.entries_per_word > 1
                 else head_word[:layout.entry_bits])
        start_word, length = entry[:INDEX_START_BITS], entry[INDEX_START_BITS:INDEX_ENTRY_BITS]
        in_memory = Mux(length > inline, length - inline, 0) if inline else length
        head_item = self.index.payload.meta.item
        edge_issue = self.bursts.valid & self.bursts.ready
        burst = self._burst(m, b_word, b_left)
        done_issuing = (b_left == 0) | ((b_left == burst) & edge_issue)
        take_list = self.index.valid & self.descriptors.ready & done_issuing
        words_of = (in_memory + slots - 1) >> (slots - 1).bit_length() if slots > 1 else in_memory
        with m.If(take_list):
            m.d.sync += [b_word.eq(self.edge_base + start_word),
                         b_left.eq(Mux(head_item.barrier, 0, words_of))]
        with m.Elif(edge_issue):
            m.d.sync += [b_word.eq(b_word + burst), b_left.eq(b_left - burst)]
        m.d.comb += [
            self.index.ready.eq(take_list),
            # A list the bitmap announced but the index calls empty is dropped here.
            self.descriptors.valid.eq(take_list & (head_item.barrier | (length != 0))),
            self.descriptors.payload.item.eq(head_item), self.descriptors.payload.length.eq(length),
            self.descriptors.payload.inline.eq(entry[INDEX_ENTRY_BITS:] if inline else 0),
            self.bursts.valid.eq(b_left != 0),
            self.bursts.payload.word.eq(b_word), self.bursts.payload.count.eq(burst),
        ]
        return m

    def _burst(self, m, b_word, b_left):
        """Words of the next burst: all that are left, at most MAX_BURST_WORDS, none past the page."""
        page_words = 4096 // self._config.pe.memory_word_bytes
        to_page_end = page_words - b_word[:(page_words - 1).bit_length()]
        burst = Signal(range(MAX_BURST_WORDS + 1))
        m.d.comb += burst.eq(MAX_BURST_WORDS)
        with m.If((b_left < MAX_BURST_WORDS) & (b_left <= to_page_end)):
            m.d.comb += burst.eq(b_left)
        with m.Elif(to_page_end < MAX_BURST_WORDS):
            m.d.comb += burst.eq(to_page_end)
        return burst
