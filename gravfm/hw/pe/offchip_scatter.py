"""Scatter stage of a PE whose edges live in off-chip memory, read through one AXI4 port.

Pipeline of small components::

    updates ─▶ PresenceStage: [A] presence bit read, [A2] the bit registered; no list: the update ends here
            ─▶ index request ──AXI──▶ index ReorderBuffer ─▶ (start word, length, first edges)
            ─▶ ListBursts [B]: a burst request per up to 8 words of the edges not inline,
                   a descriptor per list (with its inline edges)
            ─▶ edge request ──AXI──▶ edge ReorderBuffer
            ─▶ EdgeUnpacker [U]: one edge per cycle, the inline ones then the words', in list order
            ─▶ ScatterFeed [D]: registered ─▶ scatter kernel ─▶ messages

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
from ..memory_ports import write_port_signature
from ...model.offchip_layout import OffchipLayout
from ..protocol import PRESENT_WORD_BITS, PRESENT_WORD_SHIFT
from ..reorder_buffer import ReorderBuffer
from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO
from .edge_unpacker import EdgeUnpacker
from .list_bursts import ListBursts, descriptor_layout, index_meta_layout
from .presence_stage import PresenceStage
from .scatter import round_strobes
from .scatter_feed import ScatterFeed

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
        Host writes of the presence bits (address = entry // PRESENT_WORD_BITS).
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
            "present_wr": In(write_port_signature(max(1, index_bits - PRESENT_WORD_SHIFT), PRESENT_WORD_BITS)),
            "index_base": In(word_address_bits),
            "edge_base": In(word_address_bits),
            "mem": Out(memory_port_signature(pe)),
            "edge_strobe": Out(1), "round_end": Out(1), "round": Out(pe.round_bits), "round_messages": Out(32),
            "stall": Out(1), "active": Out(1),
            "mem_request": Out(1), "mem_word": Out(1), "mem_response": Out(1), "mem_wait": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, config, pe = self._layouts, self._config, self._config.pe
        layout = self._layout
        m.submodules.kernel = kernel = self._kernel
        m.submodules.presence = presence = PresenceStage(layouts=layouts, index_bits=self._index_bits)
        # Index lookups, in update order; barriers take a slot too, filled at once.
        m.submodules.index_rob = index_rob = ReorderBuffer(depth=pe.requests_in_flight,
                                                           meta=index_meta_layout(layouts, layout),
                                                           shape=pe.memory_word_bits)
        m.submodules.bursts = bursts = ListBursts(layouts=layouts, config=config, layout=layout,
                                                  word_address_bits=len(self.index_base))
        # The descriptors' head in flip-flops: the unpacker's decision runs from it into the
        # edge buffer's flags, too far for a block RAM's clock-to-out in front. Then a skid
        # buffer (timing plan, rule 2): the unpacker's ``ready`` (the edge buffer's head through
        # its filled flag) ran through the read-ahead into the FIFO's block-RAM address (the
        # 1-PE off-chip top's path, 5069ec7: 91.4-95.0 MHz). The FIFO bypasses, so a descriptor
        # written into an empty FIFO still reaches the unpacker two cycles later.
        # A skid buffer in front too: the burst splitter's decision that a list is issued (its
        # page-end subtract, the burst's compares) ran on into the FIFO's write, count and
        # full flag (the same top, 93548c2, router1 seed 1: 86.1 MHz).
        descriptor = descriptor_layout(layouts, layout)
        m.submodules.list_entry = list_entry = SkidBuffer(shape=descriptor)
        m.submodules.list_fifo = list_fifo = StreamFIFO(shape=descriptor, depth=pe.edge_word_slots + 2,
                                                        head_register=True, bypass=True)
        m.submodules.lists = lists = SkidBuffer(shape=descriptor)
        wiring.connect(m, list_entry.o, list_fifo.i)
        wiring.connect(m, list_fifo.o, lists.i)
        m.submodules.edge_rob = edge_rob = ReorderBuffer(depth=pe.edge_word_slots, meta=1, shape=pe.memory_word_bits,
                                                         max_take=MAX_BURST_WORDS)
        m.submodules.unpack = unpack = EdgeUnpacker(layouts=layouts, config=config, layout=layout)
        m.submodules.feed = feed = ScatterFeed(layouts=layouts, config=config, pe_index=self._pe_index)
        wiring.connect(m, wiring.flipped(self.updates), presence.updates)
        wiring.connect(m, wiring.flipped(self.present_wr), presence.present_wr)
        # The index buffer's head reaches the burst splitter from registers (timing plan, rule 2):
        # its LUT-RAM read ran on into the splitter's page-end and length arithmetic (the 1-PE
        # off-chip top's path, efa04be, router1 seed 1: 97.7 MHz).
        m.submodules.index_head = index_head = SkidBuffer(shape=index_rob.o.payload.shape())
        wiring.connect(m, index_rob.o, index_head.i)
        wiring.connect(m, index_head.o, bursts.index)
        wiring.connect(m, bursts.descriptors, list_entry.i)
        wiring.connect(m, lists.o, unpack.lists)
        wiring.connect(m, unpack.o, feed.i)
        wiring.connect(m, feed.o, kernel.i)
        wiring.connect(m, wiring.flipped(self.messages), kernel.o)
        m.d.comb += [bursts.edge_base.eq(self.edge_base), unpack.words.valid.eq(edge_rob.o.valid),
                     unpack.words.payload.eq(edge_rob.o.payload.data), edge_rob.o.ready.eq(unpack.words.ready)]

        ar, may_request = self._requests(m, presence=presence, index_rob=index_rob, bursts=bursts, edge_rob=edge_rob)
        self._responses(m, index_rob=index_rob, edge_rob=edge_rob)
        rnd = round_strobes(m, self, config, items=unpack.o)
        m.d.comb += [
            unpack.round.eq(rnd),
            self.mem_wait.eq(unpack.word_wait
                             | (~list_entry.o.valid & ~list_fifo.o.valid & ~lists.o.valid & ~bursts.bursts.valid
                                & ~index_head.o.valid & (index_rob.used != 0) & ~index_rob.o.valid)),
            self.active.eq(presence.active | ar.o.valid | (index_rob.used != 0) | index_head.o.valid
                           | bursts.bursts.valid
                           | list_entry.o.valid | list_fifo.o.valid | lists.o.valid | (edge_rob.used != 0)
                           | feed.o.valid),
        ]
        return m

    def _requests(self, m, *, presence, index_rob, bursts, edge_rob):
        """The AR channel: one registered request stage; edge words before index lookups (they
        drain the pipeline; the index buffer refills while the edge buffer is full). Every
        request takes its reorder buffer's next slot; returns the request stage and whether
        another request may be outstanding."""
        pe = self._config.pe
        slot_bits = pe.memory_id_bits - 1
        request = data.StructLayout({"word": len(self.index_base), "id": pe.memory_id_bits,
                                     "len": len(self.mem.arlen)})
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
        lookup = presence.o
        barrier = lookup.payload.item.barrier
        burst = bursts.bursts
        edge_wanted = burst.valid & edge_rob.can_take & may_request
        edge_issue = burst.valid & burst.ready
        index_issue = lookup.valid & lookup.ready & ~barrier
        entries_per_word = self._layout.entries_per_word
        m.d.comb += [
            lookup.ready.eq(index_rob.can_take & (barrier | (may_request & ~edge_wanted & ar.i.ready))),
            burst.ready.eq(edge_rob.can_take & may_request & ar.i.ready),
            index_rob.take.eq(lookup.valid & lookup.ready),
            index_rob.take_filled.eq(barrier),
            index_rob.take_meta.item.eq(lookup.payload.item),
            index_rob.take_meta.lane.eq(lookup.payload.entry),
            edge_rob.take.eq(edge_issue), edge_rob.take_filled.eq(0), edge_rob.take_count.eq(burst.payload.count),
            ar.i.valid.eq(index_issue | edge_issue),
            ar.i.payload.len.eq(Mux(edge_issue, burst.payload.count - 1, 0)),
            ar.i.payload.word.eq(Mux(edge_issue, burst.payload.word,
                                     self.index_base + (lookup.payload.entry >> (entries_per_word - 1).bit_length()))),
            ar.i.payload.id.eq(Mux(edge_issue, (EDGES << slot_bits) | edge_rob.slot,
                                   (INDEX << slot_bits) | index_rob.slot)),
        ]
        return ar, may_request

    def _responses(self, m, *, index_rob, edge_rob):
        """Responses fill the buffer their id names; the beats of a burst fill its slots in turn
        (beats of one id come in order; of different ids, interleaved in any order).

        A beat fills its slot a cycle after it arrives, from registers (timing plan, rule 2):
        the slot's sum ran from the R channel through the beat counters' LUT RAM and two adders
        into the decode of every filled flag, spread over the reorder buffer (the 1-PE off-chip
        top's path, 0ade7d7, router1 seed 1: 96.0 MHz, 7.9 of its 10.4 ns routing).
        """
        slot_bits = self._config.pe.memory_id_bits - 1
        beat = self.mem.rvalid & self.mem.rready
        rid_kind, rid_slot = self.mem.rid[slot_bits], self.mem.rid[:slot_bits]
        m.submodules.beats = beats = memory.Memory(shape=range(MAX_BURST_WORDS), depth=self._config.pe.edge_word_slots,
                                                   init=[])
        beats_rd, beats_wr = beats.read_port(domain="comb"), beats.write_port()
        edge_beat = beat & (rid_kind == EDGES)
        m.d.comb += [
            beats_rd.addr.eq(rid_slot), beats_wr.addr.eq(rid_slot), beats_wr.en.eq(edge_beat),
            beats_wr.data.eq(Mux(self.mem.rlast, 0, beats_rd.data + 1)),
        ]
        fill_data = Signal.like(self.mem.rdata)
        m.d.sync += [
            index_rob.fill.eq(beat & (rid_kind == INDEX)), index_rob.fill_slot.eq(rid_slot),
            edge_rob.fill.eq(edge_beat), edge_rob.fill_slot.eq(rid_slot + beats_rd.data),
            fill_data.eq(self.mem.rdata),
        ]
        for rob in (index_rob, edge_rob):
            m.d.comb += rob.fill_data.eq(fill_data)
