"""Scatter stage of a PE whose edges live in off-chip memory, read through one AXI4 port.

Pipeline::

    updates ─▶ [A] presence bit read (on chip: does the sender have a list here?)
            ─▶ [A2] presence bit registered; no list: the update ends here
            ─▶ index request ──AXI──▶ index reorder buffer ─▶ (start word, length, first edges)
            ─▶ [B] list: a burst request per up to 8 words of the edges not inline,
                   a descriptor per list (with its inline edges)
            ─▶ edge request ──AXI──▶ edge reorder buffer
            ─▶ [U] unpack: one edge per cycle, the inline ones then the words', in list order
            ─▶ [D] registered ─▶ scatter kernel ─▶ messages

Memory image (built by :mod:`gravfm.sim.memory_image`, arithmetic in
:class:`gravfm.model.offchip_layout.OffchipLayout`): index entry ``e`` (the sender's hardware id for
GraVF-M, its local index for GraVF) is the word ``index_base + e``: u32 first word of the list
relative to ``edge_base``, u32 edge count, then the list's first K = (W - 64) // slot edges
(inline). The rest of the list starts on a word boundary (SPEC §5) and packs ``W / slot`` edges
per word, each an ``edge_word`` in a power-of-two slot. A list of at most K edges thus costs one
request, not two dependent ones (the 64 requests in flight, each held a latency, bound the lists
per cycle). With no room for an edge beside the header (K = 0) entries are 64 bits, W / 64 to
a word. Only senders whose presence bit is set cost memory requests, as in the paper ("if a
vertex has zero neighbors on a PE, no memory request is issued").

Every request takes a slot of its reorder buffer when it is issued (its AXI id names the buffer
and the slot), so responses may return in any order across ids and the R channel is always
ready; at most ``requests_in_flight`` requests are outstanding. Barriers travel through the index
buffer (filled at once) and the descriptor queue, so they stay behind their round's edges.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..axi import AXI_BURST_INCR, memory_port_signature
from ..config import MAX_BURST_WORDS
from ..layouts import hardware_id
from ..memory_ports import NO_READ_DURING_WRITE, write_port_signature
from ...model.offchip_layout import INDEX_ENTRY_BITS, OffchipLayout
from ..protocol import PRESENT_WORD_BITS
from ..reorder_buffer import ReorderBuffer
from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO
from .scatter import round_strobes

__all__ = ["OffchipScatterUnit"]

INDEX, EDGES = 0, 1   # the AXI id's top bit: which reorder buffer a response fills


class OffchipScatterUnit(wiring.Component):
    """Receiver- or sender-side scatter with its edges behind an AXI4 read port.

    Parameters
    ----------
    layouts, config, pe_index, kernel
        As :class:`gravfm.hw.pe.scatter.ScatterUnit`.
    index_bits : int
        Index entries are the low ``index_bits`` bits of the update's sender.

    Ports
    -----
    updates, messages, edge_strobe, round_end, round, round_messages, stall, active
        As :class:`gravfm.hw.pe.scatter.ScatterUnit` (one update lane).
    present_wr : In(write port, 32 bits)
        Host writes of the presence bits (address = entry // 32).
    index_base, edge_base : In(word address)
        Where this PE's index and lists start in memory (host registers).
    mem : Out(AXI4 read)
    mem_request, mem_word, mem_response, mem_wait : Out(1)
        A request issued; a word received; a request's last word received; scatter waited on
        memory this cycle.
    """

    def __init__(self, *, layouts, config, pe_index, kernel, index_bits):
        pe = config.pe
        self._layouts = layouts
        self._config = config
        self._pe_index = pe_index
        self._kernel = kernel
        self._index_bits = index_bits
        self._layout = OffchipLayout.of(pe.memory_word_bits, layouts.edge_word.size)
        if self._layout.slot_bits > pe.memory_word_bits:
            raise ValueError(f"an edge of {layouts.edge_word.size} bits does not fit a "
                             f"{pe.memory_word_bits}-bit memory word")
        self._word_shift = (pe.memory_word_bytes - 1).bit_length()
        word_address_bits = pe.memory_addr_bits - self._word_shift
        super().__init__({
            "updates": In(stream.Signature(layouts.pe_updates)),
            "messages": Out(stream.Signature(layouts.scatter_out)),
            "present_wr": In(write_port_signature(max(1, index_bits - 5), PRESENT_WORD_BITS)),
            "index_base": In(word_address_bits),
            "edge_base": In(word_address_bits),
            "mem": Out(memory_port_signature(pe)),
            "edge_strobe": Out(1), "round_end": Out(1), "round": Out(pe.round_bits), "round_messages": Out(32),
            "stall": Out(1), "active": Out(1),
            "mem_request": Out(1), "mem_word": Out(1), "mem_response": Out(1), "mem_wait": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, pe = self._layouts, self._config.pe
        m.submodules.kernel = kernel = self._kernel
        layout = self._layout
        word_bits, slots, inline = pe.memory_word_bits, layout.per_word, layout.inline
        entries_per_word = layout.entries_per_word
        slot_bits = pe.memory_id_bits - 1
        edge_slots = pe.edge_word_slots
        word_address = Signal.like(self.index_base)

        # Stage A: the presence bit's word (block RAM), A2: the bit in a register.
        present_words = max(1, 1 << max(0, self._index_bits - 5))
        m.submodules.present = present = memory.Memory(shape=PRESENT_WORD_BITS, depth=present_words, init=[],
                                                       attrs=NO_READ_DURING_WRITE)
        wr, rd = present.write_port(), present.read_port()
        m.d.comb += [wr.en.eq(self.present_wr.en), wr.addr.eq(self.present_wr.addr),
                     wr.data.eq(self.present_wr.data)]
        entry_of = self.updates.payload.sender[:self._index_bits]
        a_valid, a_item = Signal(), Signal(layouts.net_update)
        a_entry = Signal(self._index_bits)
        a2_valid, a2_item, a2_present = Signal(), Signal(layouts.net_update), Signal()
        a2_entry = Signal(self._index_bits)
        a2_advance = Signal()
        a_advance = ~a_valid | a2_advance
        m.d.comb += [rd.addr.eq(entry_of[5:]), rd.en.eq(a_advance), self.updates.ready.eq(a_advance)]
        with m.If(a_advance):
            m.d.sync += [a_valid.eq(self.updates.valid), a_item.eq(self.updates.payload), a_entry.eq(entry_of)]
        with m.If(a2_advance):
            m.d.sync += [a2_valid.eq(a_valid), a2_item.eq(a_item), a2_entry.eq(a_entry),
                         a2_present.eq(rd.data.bit_select(a_entry[:5], 1))]

        # The AR channel: one registered request stage; edge words before index lookups (they
        # drain the pipeline; the index buffer refills while the edge buffer is full).
        request = data.StructLayout({"word": len(word_address), "id": pe.memory_id_bits, "len": 8})
        m.submodules.ar = ar = SkidBuffer(shape=request)
        outstanding = Signal(range(pe.requests_in_flight + 1))
        may_request = outstanding != pe.requests_in_flight
        beat = self.mem.rvalid & self.mem.rready
        answered = beat & self.mem.rlast
        m.d.sync += outstanding.eq(outstanding + (ar.i.valid & ar.i.ready) - answered)
        m.d.comb += [
            self.mem.araddr.eq(ar.o.payload.word << self._word_shift),
            self.mem.arid.eq(ar.o.payload.id), self.mem.arlen.eq(ar.o.payload.len),
            self.mem.arsize.eq(self._word_shift),
            self.mem.arburst.eq(AXI_BURST_INCR), self.mem.arvalid.eq(ar.o.valid), ar.o.ready.eq(self.mem.arready),
            self.mem.rready.eq(1),
            self.mem_request.eq(ar.o.valid & self.mem.arready), self.mem_word.eq(beat),
            self.mem_response.eq(answered),
        ]

        # Index lookups, in update order; barriers take a slot too, filled at once.
        index_meta = data.StructLayout({"item": layouts.net_update, "lane": max(1, (entries_per_word - 1).bit_length())})
        m.submodules.index_rob = index_rob = ReorderBuffer(depth=pe.requests_in_flight, meta=index_meta,
                                                           shape=word_bits)
        barrier = a2_item.barrier
        index_wanted = a2_valid & a2_present & ~barrier & index_rob.can_take & may_request
        edge_wanted = Signal()
        index_issue = index_wanted & ~edge_wanted & ar.i.ready
        passes = a2_valid & barrier & index_rob.can_take
        m.d.comb += [
            a2_advance.eq(~a2_valid | (~a2_present & ~barrier) | passes | index_issue),
            index_rob.take.eq(index_issue | passes),
            index_rob.take_filled.eq(barrier),
            index_rob.take_meta.item.eq(a2_item),
            index_rob.take_meta.lane.eq(a2_entry),
        ]

        # Stage B: the current list's words, one burst of up to MAX_BURST_WORDS per cycle (never
        # across a 4 KiB boundary, as AXI requires); a descriptor per list (and per barrier)
        # tells the unpacker what the words hold.
        descriptor = data.StructLayout({"item": layouts.net_update, "length": 32,
                                        "inline": max(1, inline * layout.slot_bits)})
        # Its head in flip-flops (same timing): stage U's decision runs from it into the edge
        # buffer's flags, too far for a block RAM's clock-to-out in front.
        m.submodules.lists = lists = StreamFIFO(shape=descriptor, depth=edge_slots + 2, head_register=True)
        m.submodules.edge_rob = edge_rob = ReorderBuffer(depth=edge_slots, meta=1, shape=word_bits,
                                                         max_take=MAX_BURST_WORDS)
        b_word = Signal.like(word_address)
        b_left = Signal(32)
        head_word = index_rob.o.payload.data
        entry = (head_word.word_select(index_rob.o.payload.meta.lane, layout.entry_bits) if entries_per_word > 1
                 else head_word[:layout.entry_bits])
        start_word, length = entry[:32], entry[32:INDEX_ENTRY_BITS]
        in_memory = Mux(length > inline, length - inline, 0) if inline else length
        head_item = index_rob.o.payload.meta.item
        m.d.comb += edge_wanted.eq((b_left != 0) & edge_rob.can_take & may_request)
        edge_issue = edge_wanted & ar.i.ready
        page_words = 4096 // pe.memory_word_bytes
        to_page_end = page_words - b_word[:(page_words - 1).bit_length()]
        burst = Signal(range(MAX_BURST_WORDS + 1))
        m.d.comb += burst.eq(MAX_BURST_WORDS)
        with m.If((b_left < MAX_BURST_WORDS) & (b_left <= to_page_end)):
            m.d.comb += burst.eq(b_left)
        with m.Elif(to_page_end < MAX_BURST_WORDS):
            m.d.comb += burst.eq(to_page_end)
        done_issuing = (b_left == 0) | ((b_left == burst) & edge_issue)
        take_list = index_rob.o.valid & lists.i.ready & done_issuing
        words_of = (in_memory + slots - 1) >> (slots - 1).bit_length() if slots > 1 else in_memory
        with m.If(take_list):
            m.d.sync += [b_word.eq(self.edge_base + start_word),
                         b_left.eq(Mux(head_item.barrier, 0, words_of))]
        with m.Elif(edge_issue):
            m.d.sync += [b_word.eq(b_word + burst), b_left.eq(b_left - burst)]
        m.d.comb += [
            index_rob.o.ready.eq(take_list),
            # A list the bitmap announced but the index calls empty is dropped here.
            lists.i.valid.eq(take_list & (head_item.barrier | (length != 0))),
            lists.i.payload.item.eq(head_item), lists.i.payload.length.eq(length),
            lists.i.payload.inline.eq(entry[INDEX_ENTRY_BITS:] if inline else 0),
            edge_rob.take.eq(edge_issue), edge_rob.take_filled.eq(0), edge_rob.take_count.eq(burst),
            ar.i.valid.eq(index_issue | edge_issue),
            ar.i.payload.len.eq(Mux(edge_issue, burst - 1, 0)),
            ar.i.payload.word.eq(Mux(edge_issue, b_word,
                                     self.index_base + (a2_entry >> (entries_per_word - 1).bit_length()))),
            ar.i.payload.id.eq(Mux(edge_issue, (EDGES << slot_bits) | edge_rob.slot,
                                   (INDEX << slot_bits) | index_rob.slot)),
        ]
        # Responses fill the buffer their id names; the beats of a burst fill its slots in turn
        # (beats of one id come in order; of different ids, interleaved in any order).
        rid_kind, rid_slot = self.mem.rid[slot_bits], self.mem.rid[:slot_bits]
        m.submodules.beats = beats = memory.Memory(shape=range(MAX_BURST_WORDS), depth=edge_slots, init=[])
        beats_rd, beats_wr = beats.read_port(domain="comb"), beats.write_port()
        edge_beat = beat & (rid_kind == EDGES)
        m.d.comb += [
            beats_rd.addr.eq(rid_slot), beats_wr.addr.eq(rid_slot), beats_wr.en.eq(edge_beat),
            beats_wr.data.eq(Mux(self.mem.rlast, 0, beats_rd.data + 1)),
            index_rob.fill.eq(beat & (rid_kind == INDEX)), index_rob.fill_slot.eq(rid_slot),
            edge_rob.fill.eq(edge_beat), edge_rob.fill_slot.eq(rid_slot + beats_rd.data),
        ]
        for rob in (index_rob, edge_rob):
            m.d.comb += rob.fill_data.eq(self.mem.rdata)

        # Stage U: one edge per cycle, the descriptor's inline ones, then from the head word; the
        # barrier needs no word.
        u_slot = Signal(range(slots))
        u_done = Signal(32)   # edges of the current list already delivered
        current = lists.o.payload
        u_barrier = current.item.barrier
        u_inline = u_done < inline   # (constant 0 without inline edges)
        u_valid = lists.o.valid & (u_barrier | u_inline | edge_rob.o.valid)
        d_valid, d_item = Signal(), Signal(layouts.net_update)
        d_round, d_length = Signal(pe.round_bits), Signal(pe.edge_len_bits)
        d_edge = Signal(layouts.edge_word, reset_less=True)
        d_advance = ~d_valid | kernel.i.ready
        u_fire = u_valid & d_advance
        last_edge = u_done + 1 == current.length
        m.d.comb += [
            lists.o.ready.eq(u_fire & (u_barrier | last_edge)),
            edge_rob.o.ready.eq(u_fire & ~u_barrier & ~u_inline & (last_edge | (u_slot == slots - 1))),
        ]
        with m.If(u_fire & ~u_barrier):
            m.d.sync += u_done.eq(Mux(last_edge, 0, u_done + 1))
        with m.If(u_fire & ~u_barrier & ~u_inline):
            m.d.sync += u_slot.eq(Mux(last_edge | (u_slot == slots - 1), 0, u_slot + 1))
        rnd = round_strobes(m, self, self._config, edge_fire=u_fire & ~u_barrier, barrier_fire=u_fire & u_barrier)
        edge_bits = edge_rob.o.payload.data.word_select(u_slot, layout.slot_bits)
        if inline:
            inline_select = u_done[:max(1, (inline - 1).bit_length())]
            edge_bits = Mux(u_inline, current.inline.word_select(inline_select, layout.slot_bits), edge_bits)
        with m.If(d_advance):
            m.d.sync += [d_valid.eq(u_valid), d_item.eq(current.item), d_round.eq(rnd),
                         d_length.eq(current.length), d_edge.eq(edge_bits[:layouts.edge_word.size])]
        k = kernel.i.payload
        m.d.comb += [
            kernel.i.valid.eq(d_valid),
            k.update.eq(d_item.update), k.sender.eq(d_item.sender), k.round.eq(d_round),
            k.barrier.eq(d_item.barrier),
            k.neighbor.eq(hardware_id(d_edge.dst, self._pe_index, self._config)),
            k.num_neighbors.eq(d_length), k.edge.eq(d_edge.edge),
            self.stall.eq(u_valid & ~d_advance),
            self.mem_wait.eq((lists.o.valid & ~u_barrier & ~u_inline & ~edge_rob.o.valid)
                             | (~lists.o.valid & (b_left == 0) & (index_rob.used != 0) & ~index_rob.o.valid)),
            self.active.eq(a_valid | a2_valid | ar.o.valid | (index_rob.used != 0) | (b_left != 0)
                           | lists.o.valid | (edge_rob.used != 0) | d_valid),
        ]
        wiring.connect(m, wiring.flipped(self.messages), kernel.o)
        return m
