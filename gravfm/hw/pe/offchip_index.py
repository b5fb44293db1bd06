"""Edge-index lookups of the off-chip scatter stage, coalesced into bursts.

Each sender that has a list on this PE needs its 64-bit index entry before its list can be read.
One request per lookup would spend two of the ``requests_in_flight`` slots on every list (index,
then list), and with short lists (a few edges) the slots, held for the memory latency each, run
out before the edge pipeline is fed (Little's law: 64 slots / 190 cycles is 0.34 requests per
cycle). Senders arrive in index order within a PE's update stream, so a lookup whose entry lies
in the same word as the previous lookup's shares that word, and one in the next word extends the
request not yet issued into a burst (up to ``MAX_BURST_WORDS`` words, never across a 4 KiB page);
the burst then waits only while the next lookup keeps extending it. Words fill a reorder buffer
in request order; lookups wait in a FIFO, and the first lookup of a word pops it into a register
that the lookups sharing it read.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..config import INDEX_ENTRY_BITS, MAX_BURST_WORDS
from ..reorder_buffer import ReorderBuffer
from ..stream_fifo import StreamFIFO

__all__ = ["IndexFetcher"]


class IndexFetcher(wiring.Component):
    """Index entries for a stream of senders, read through coalesced burst requests.

    Parameters
    ----------
    layouts, config
        As :class:`gravfm.hw.pe.offchip_scatter.OffchipScatterUnit`.
    index_bits : int
        Bits of an index entry number.
    word_address_bits : int
        Width of a memory word address.

    Ports
    -----
    i : In(stream {item, entry})
        An update whose sender has a list here (``entry`` its index entry), or a barrier
        (``entry`` ignored). Barriers stay in order with the lookups.
    o : Out(stream {item, entry})
        The same items in the same order, ``entry`` now the 64-bit index entry (u32 first word,
        u32 edge count); a barrier passes without one.
    index_base : In(word address)
        Word address of index entry 0.
    request : Out(stream {word, len, slot})
        A burst to issue: first word, beats minus one, first reorder slot (the AXI id's slot).
        ``valid`` may fall without ``ready`` (while a lookup extends the burst): the issuer
        takes it in the cycle it offers ``ready``, as into a skid buffer.
    fill, fill_slot, fill_last, fill_data : In
        A response beat for this buffer: the slot its id names, the burst's last beat, the word.
    pending : Out(1)
        Lookups or words are held.
    waiting : Out(1)
        The oldest lookup waits on its word from memory.
    """

    def __init__(self, *, layouts, config, index_bits, word_address_bits):
        pe = config.pe
        self._depth = pe.edge_word_slots   # a power of two: burst beats wrap by themselves
        self._word_bits = pe.memory_word_bits
        self._lane_bits = (pe.memory_word_bits // INDEX_ENTRY_BITS - 1).bit_length()   # entry in its word
        self._page_words = 4096 // pe.memory_word_bytes
        slot_bits = max(1, (self._depth - 1).bit_length())
        self._lookup = data.StructLayout({"item": layouts.net_update, "lane": max(1, self._lane_bits),
                                          "first": 1})
        super().__init__({
            "i": In(stream.Signature(data.StructLayout({"item": layouts.net_update, "entry": index_bits}))),
            "o": Out(stream.Signature(data.StructLayout({"item": layouts.net_update,
                                                         "entry": INDEX_ENTRY_BITS}))),
            "index_base": In(word_address_bits),
            "request": Out(stream.Signature(data.StructLayout({
                "word": word_address_bits, "len": range(MAX_BURST_WORDS), "slot": slot_bits}))),
            "fill": In(1), "fill_slot": In(slot_bits), "fill_last": In(1), "fill_data": In(self._word_bits),
            "pending": Out(1), "waiting": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        depth, lane_bits = self._depth, self._lane_bits
        m.submodules.words = words = ReorderBuffer(depth=depth, meta=1, shape=self._word_bits)
        m.submodules.lookups = lookups = StreamFIFO(shape=self._lookup, depth=depth)

        # The burst being gathered (not yet issued) and the word of the latest lookup.
        open_, open_word = Signal(), Signal.like(self.index_base)
        open_len, open_slot = Signal(range(MAX_BURST_WORDS + 1)), Signal.like(words.slot)
        last_valid, last_word = Signal(), Signal.like(self.index_base)

        item, entry = self.i.payload.item, self.i.payload.entry
        word = Signal.like(self.index_base)
        m.d.comb += word.eq(self.index_base + (entry >> lane_bits))
        lookup = self.i.valid & ~item.barrier
        same = last_valid & (word == last_word)
        extend = (open_ & ~same & (word == last_word + 1) & (open_len != MAX_BURST_WORDS)
                  & (word[:(self._page_words - 1).bit_length()] != 0) & words.can_take)
        # Hold the burst while the waiting lookup extends it; else offer it.
        m.d.comb += [
            self.request.valid.eq(open_ & ~(lookup & extend & lookups.i.ready)),
            self.request.payload.word.eq(open_word), self.request.payload.len.eq(open_len - 1),
            self.request.payload.slot.eq(open_slot),
        ]
        issued = self.request.valid & self.request.ready
        start = ~same & ~extend & (~open_ | issued) & words.can_take
        accept = self.i.valid & lookups.i.ready & (item.barrier | same | extend | start)
        new_word = lookup & accept & ~same
        m.d.comb += [
            self.i.ready.eq(accept),
            lookups.i.valid.eq(accept),
            lookups.i.payload.item.eq(item), lookups.i.payload.lane.eq(entry[:lane_bits] if lane_bits else 0),
            lookups.i.payload.first.eq(~item.barrier & ~same),
            words.take.eq(new_word), words.take_filled.eq(0), words.take_meta.eq(0),
        ]
        with m.If(new_word & extend):
            m.d.sync += open_len.eq(open_len + 1)
        with m.Elif(new_word):
            m.d.sync += [open_.eq(1), open_word.eq(word), open_len.eq(1), open_slot.eq(words.slot)]
        with m.Elif(issued):
            m.d.sync += open_.eq(0)
        with m.If(lookup & accept):
            m.d.sync += [last_valid.eq(1), last_word.eq(word)]

        # Beats of one burst come in order and fill its slots in turn.
        m.submodules.beats = beats = memory.Memory(shape=range(MAX_BURST_WORDS), depth=depth, init=[])
        beats_rd, beats_wr = beats.read_port(domain="comb"), beats.write_port()
        m.d.comb += [
            beats_rd.addr.eq(self.fill_slot), beats_wr.addr.eq(self.fill_slot), beats_wr.en.eq(self.fill),
            beats_wr.data.eq(Mux(self.fill_last, 0, beats_rd.data + 1)),
            words.fill.eq(self.fill), words.fill_slot.eq(self.fill_slot + beats_rd.data),
            words.fill_data.eq(self.fill_data),
        ]

        # The first lookup of a word pops it into ``held``; the lookups sharing it read ``held``.
        held = Signal(self._word_bits, reset_less=True)
        head = lookups.o.payload
        needs_word = head.first
        word_data = Mux(needs_word, words.o.payload.data, held)
        m.d.comb += [
            self.o.valid.eq(lookups.o.valid & (~needs_word | words.o.valid)),
            self.o.payload.item.eq(head.item),
            self.o.payload.entry.eq(word_data.word_select(head.lane, INDEX_ENTRY_BITS)),
            lookups.o.ready.eq(self.o.valid & self.o.ready),
            words.o.ready.eq(self.o.valid & self.o.ready & needs_word),
            self.pending.eq(open_ | (lookups.level != 0) | (words.used != 0)),
            self.waiting.eq(lookups.o.valid & needs_word & ~words.o.valid),
        ]
        with m.If(words.o.valid & words.o.ready):
            m.d.sync += held.eq(words.o.payload.data)
        return m
