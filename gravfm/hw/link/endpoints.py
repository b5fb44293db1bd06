"""Both ends of an inter-FPGA channel: barrier combining out, round sorting in.

A link word is ``{item: net_update, parity: 1}`` where ``parity`` is the low bit of the round
the item belongs to. The sending side (:class:`LinkSender`) takes the network's merged stream
for one peer FPGA (round r's updates and every local PE's round-r barrier, then round r+1; the
neighbor filter has already dropped the updates whose sender has no out-neighbour on the peer,
see :class:`gravfm.hw.network.Network`) and replaces the local PEs' barriers by ONE barrier per
round whose ``count`` is the number of updates it sent and whose ``sent_any`` is the OR of the
local PEs' (so every FPGA sees the same termination decision). The receiving side
(:class:`LinkReceiver`) sorts items into two FIFOs by parity, forwards the current round's
updates, keeps the round's barrier aside until as many updates as it counts have been forwarded,
then forwards it and moves to the next round. A peer
can be at most one round ahead (its round r+1 needs this FPGA's round-r barrier, which needs
this receiver to have finished round r-1), so one parity bit suffices; a link that lets an item
overtake up to W-1 others puts at most W-1 early items into the other FIFO.
"""

from amaranth.hdl import Module, Shape, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO
from .lanes import lanes_word_layout

__all__ = ["LinkSender", "LinkReceiver", "link_word_layout"]


def link_word_layout(item_layout, lanes=1):
    """Layout of a link word: the item and its round parity; with several lanes, one such word
    per lane side by side (:func:`~gravfm.hw.link.lanes.lanes_word_layout`)."""
    word = data.StructLayout({"item": item_layout, "parity": 1})
    return word if lanes == 1 else lanes_word_layout(word, lanes)


class LinkSender(wiring.Component):
    """Outgoing endpoint of one FPGA towards one peer.

    Parameters
    ----------
    layout : StructLayout
        Network update layout.
    local_pes : int
        PEs on this FPGA (barriers per round on the input).

    Ports
    -----
    i : In(stream net_update)
        The network's ``remote_out`` for this peer.
    o : Out(stream link word)
    """

    def __init__(self, *, layout, local_pes):
        self._layout = layout
        self._local_pes = local_pes
        super().__init__({
            "i": In(stream.Signature(layout)),
            "o": Out(stream.Signature(link_word_layout(layout))),
        })

    def elaborate(self, platform):
        m = Module()
        item = self.i.payload
        parity = Signal()
        barriers = Signal(range(self._local_pes + 1))
        sent = Signal(len(item.count))
        anything = Signal()
        last_barrier = barriers == self._local_pes - 1
        m.d.comb += [self.o.payload.item.eq(item), self.o.payload.parity.eq(parity)]
        with m.If(~item.barrier):
            m.d.comb += [self.o.valid.eq(self.i.valid), self.i.ready.eq(self.o.ready)]
            with m.If(self.i.valid & self.o.ready):
                m.d.sync += sent.eq(sent + 1)
        with m.Elif(~last_barrier):
            m.d.comb += self.i.ready.eq(1)
            with m.If(self.i.valid):
                m.d.sync += [barriers.eq(barriers + 1), anything.eq(anything | item.sent_any)]
        with m.Else():
            m.d.comb += [
                self.o.valid.eq(self.i.valid),
                self.o.payload.item.count.eq(sent),
                self.o.payload.item.sent_any.eq(anything | item.sent_any),
                self.i.ready.eq(self.o.ready),
            ]
            with m.If(self.i.valid & self.o.ready):
                m.d.sync += [barriers.eq(0), sent.eq(0), anything.eq(0), parity.eq(~parity)]
        return m


class LinkReceiver(wiring.Component):
    """Incoming endpoint of one FPGA from one peer: delivers round by round, in any arrival order.

    Parameters
    ----------
    layout : StructLayout
        Network update layout.
    depth : int
        Depth of each parity FIFO (at least the link's reorder window).
    check_counts : bool
        Report a round whose barrier counts fewer updates than were forwarded (``count_error``).

    Ports
    -----
    i : In(stream link word)
    o : Out(stream net_update)
        The network's ``remote_in``: round r's updates, then one barrier, then round r+1.
    count_error : Out(1), with ``check_counts``
        The current round's barrier counts fewer updates than this receiver forwarded: more
        were delivered than sent (the round can never complete).
    """

    def __init__(self, *, layout, depth, check_counts=False):
        self._layout = layout
        self._depth = depth
        self._check_counts = check_counts
        members = {"i": In(stream.Signature(link_word_layout(layout))), "o": Out(stream.Signature(layout))}
        if check_counts:
            members["count_error"] = Out(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        # The parity FIFOs hold their head in fabric flip-flops (same timing) and the output is
        # registered (one cycle): the network's broadcast decides whether it took an item only
        # after its FIFOs' write handshakes, too late to run back into a block RAM's read enable.
        fifos = [StreamFIFO(shape=self._layout, depth=self._depth, head_register=True) for _ in range(2)]
        m.submodules.even, m.submodules.odd = fifos
        m.submodules.out = out = SkidBuffer(shape=self._layout)
        wiring.connect(m, out.o, wiring.flipped(self.o))
        o = out.i
        for p, buffer in enumerate(fifos):
            m.d.comb += [buffer.i.valid.eq(self.i.valid & (self.i.payload.parity == p)),
                         buffer.i.payload.eq(self.i.payload.item)]
        m.d.comb += self.i.ready.eq(fifos[1].i.ready)
        with m.If(self.i.payload.parity == 0):
            m.d.comb += self.i.ready.eq(fifos[0].i.ready)

        current = Signal()
        head = stream.Signature(self._layout).create()
        have_barrier = Signal()
        expected = Signal(Shape.cast(self._layout.members["count"]).width)
        anything = Signal()
        forwarded = Signal.like(expected)
        for p, buffer in enumerate(fifos):
            with m.If(current == p):
                m.d.comb += [head.valid.eq(buffer.o.valid), head.payload.eq(buffer.o.payload),
                             buffer.o.ready.eq(head.ready)]
        # ``forwarded == expected``, kept a cycle ahead (timing rule 4): the compare behind
        # ``have_barrier`` ran into the read enable and the parity FIFO's block-RAM address
        # (FPGA 0 of 2 x 4 PEs, 9ade8e7, router1 seed 3: 129.7 MHz).
        counts_match = Signal(init=1)
        round_complete = have_barrier & counts_match
        # The head leaves on the output's registered ``ready`` whatever it is, a barrier too: a
        # ready that depended on the head's ``barrier`` bit, read from the parity FIFO's block RAM,
        # ran through the read enable into that block RAM's read address, placed far away
        # (FPGA 0 of 2 x 4 PEs on ECP5, 5203fb3, router1 seed 3: 115.9 MHz).
        m.d.comb += head.ready.eq(o.ready & ~round_complete)
        with m.If(round_complete):
            m.d.comb += [o.valid.eq(1), o.payload.barrier.eq(1),
                         o.payload.count.eq(expected), o.payload.sent_any.eq(anything)]
            with m.If(o.ready):
                m.d.sync += [have_barrier.eq(0), forwarded.eq(0), current.eq(~current),
                             counts_match.eq(expected == 0)]
        with m.Elif(head.payload.barrier):
            with m.If(head.valid & o.ready):
                m.d.sync += [have_barrier.eq(1), expected.eq(head.payload.count),
                             anything.eq(head.payload.sent_any), counts_match.eq(forwarded == head.payload.count)]
        with m.Else():
            m.d.comb += [o.valid.eq(head.valid), o.payload.eq(head.payload)]
            with m.If(head.valid & o.ready):
                following = (forwarded + 1)[:len(forwarded)]
                m.d.sync += [forwarded.eq(following), counts_match.eq(following == expected)]
        if self._check_counts:
            m.d.comb += self.count_error.eq(have_barrier & (forwarded > expected))
        return m
