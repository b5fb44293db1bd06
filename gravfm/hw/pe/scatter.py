"""Scatter stage of a PE: updates in, one message per local out-edge of the sender out.

Pipeline of small components (each stage holds one item and advances when the next can take it)::

    updates ─▶ EdgeIndexStage: [A] edge-index read, [A2] the index words registered
            ─▶ list stage (SkidBuffer, or a LaneQueue of the non-empty lists)
            ─▶ AddressGenerator [B]: one edge address per cycle
            ─▶ EdgeRead [C]: edge-array read (destination, edge data)
            ─▶ BarrierBypass ─▶ ScatterFeed [D]: the edge word registered ─▶ scatter kernel ─▶ messages

The list stage's ``ready`` is a register (a skid buffer with one lane; with two, a queue that
keeps only the non-empty lists and barriers, so empty ones cost no generator cycle and two
updates enter per cycle): the generator's ``ready`` then never reaches the stages in front of
it, nor this unit's ``updates.ready``. A barrier update becomes one kernel item with
``barrier=1`` behind the last edge of its round; it has no edges to read, so it goes straight
into D from A or from the list stage when every stage between is empty (each stage says so on
a port; see :mod:`gravfm.hw.pe.barrier_bypass`). The edge index and the edge array live in their
stages (synchronous-read memories) and are filled through the host write ports.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..lane_queue import RegisteredLaneQueue
from ..layouts import edge_list_layout
from ..memory_ports import write_port_signature
from ..skid_buffer import SkidBuffer
from .address_generator import AddressGenerator
from .barrier_bypass import BarrierBypass
from .edge_index_stage import EdgeIndexStage
from .edge_read import EdgeRead
from .scatter_feed import ScatterFeed

__all__ = ["ScatterUnit", "round_strobes"]

# Non-empty lists waiting for the address generator (two or more lanes): a few lists of slack
# let a PE run ahead of its neighbours instead of halting every broadcast (4 -> 8 took a 2x9-PE
# system from CPE 1.15 to 1.12 together with deeper network FIFOs).
LIST_QUEUE_DEPTH = 8


class ScatterUnit(wiring.Component):
    """Receiver-side scatter with its edge storage.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    config : gravfm.hw.SystemConfig
    pe_index : int or Value
        Global index of this PE (high bits of the neighbors' hardware ids).
    kernel : wiring.Component
        The algorithm's scatter kernel (checked by :func:`gravfm.hw.kernels.build_kernels`).

    Ports
    -----
    updates : In(stream pe_updates)
        Updates and barriers for this PE, in round order (``count``/``sent_any`` ignored); with
        ``config.pe.update_lanes`` > 1, that many per cycle (each lane has its own edge-index read).
    messages : Out(stream scatter_out)
        The scatter kernel's messages, barrier included.
    index_wr : In(write port, edge_index)
        Host writes to the edge index (address = sender's hardware id).
    edge_wr : In(write port, edge_word)
        Host writes to the edge array.
    edge_strobe : Out(1)
        An edge entered the kernel this cycle (counts a message).
    round_end : Out(1)
        The barrier entered the kernel in the previous cycle; ``round_messages`` holds the
        round's edges (the log's strobe and counts are registered).
    round : Out(round_bits)
        Round whose edges ``round_messages`` counts (a cycle behind the kernel).
    round_messages : Out(32)
        Edges scattered so far in ``round``.
    stall : Out(1)
        The generator has an item but the edge read stage cannot take it (backpressure).
    active : Out(1)
        The stage holds work.
    """

    def __init__(self, *, layouts, config, pe_index, kernel):
        self._layouts = layouts
        self._config = config
        self._pe_index = pe_index
        self._kernel = kernel
        super().__init__({
            "updates": In(stream.Signature(layouts.pe_updates)),
            "messages": Out(stream.Signature(layouts.scatter_out)),
            "index_wr": In(write_port_signature(config.vertexid_bits, layouts.edge_index)),
            "edge_wr": In(write_port_signature(config.pe.edge_addr_bits, layouts.edge_word)),
            "edge_strobe": Out(1),
            "round_end": Out(1),
            "round": Out(config.pe.round_bits),
            "round_messages": Out(32),
            "stall": Out(1),
            "active": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, config = self._layouts, self._config
        m.submodules.kernel = kernel = self._kernel
        m.submodules.index = index = EdgeIndexStage(layouts=layouts, config=config)
        lists, lists_empty = self._list_stage()
        m.submodules.lists = lists
        m.submodules.generator = generator = AddressGenerator(layouts=layouts, config=config)
        m.submodules.edges = edges = EdgeRead(layouts=layouts, config=config)
        m.submodules.bypass = bypass = BarrierBypass(layouts=layouts, config=config)
        m.submodules.feed = feed = ScatterFeed(layouts=layouts, config=config, pe_index=self._pe_index)
        wiring.connect(m, wiring.flipped(self.updates), index.updates)
        wiring.connect(m, wiring.flipped(self.index_wr), index.index_wr)
        wiring.connect(m, wiring.flipped(self.edge_wr), edges.edge_wr)
        wiring.connect(m, index.o, lists.i)
        wiring.connect(m, lists.o, generator.lists)
        wiring.connect(m, generator.o, edges.i)
        wiring.connect(m, index.barrier, bypass.index_barrier)
        wiring.connect(m, edges.o, bypass.edges)
        wiring.connect(m, bypass.o, feed.i)
        wiring.connect(m, feed.o, kernel.i)
        wiring.connect(m, wiring.flipped(self.messages), kernel.o)

        head = lists.o
        m.d.comb += [
            bypass.list_barrier.valid.eq(head.valid & head.payload.item.barrier),
            bypass.list_barrier.payload.eq(head.payload.item),
            bypass.lists_empty.eq(lists_empty),   # with several lanes, the queue's entry stage too
            bypass.generator_empty.eq(generator.empty),
            bypass.feed_empty.eq(~feed.o.valid),
            generator.bypassed.eq(bypass.list_barrier.valid & bypass.list_barrier.ready),
        ]
        rnd = round_strobes(m, self, config, items=generator.o, bypassed=bypass.taken)
        m.d.comb += [
            edges.round.eq(rnd),
            bypass.round.eq(rnd),
            self.active.eq(index.active | head.valid | generator.busy | edges.o.valid | feed.o.valid),
        ]
        return m

    def _list_stage(self):
        """The lists the generator takes next, behind a registered ``ready``: the generator's
        ``ready`` (from the kernel's and the message path's) would otherwise ripple through the
        index stage into the PE's input buffer. One lane: a skid buffer (one cycle more per
        superstep). More: the lanes' non-empty lists (and the barrier) through a small in-order
        queue, so that a PE holding no edges for most senders takes several updates per cycle but
        never loses a cycle on them; registered on both sides (one cycle more on the way in).
        Returns the stage and its ``empty`` (nothing held anywhere in it)."""
        entry = edge_list_layout(self._layouts, self._config)
        lanes = self._config.pe.update_lanes
        if lanes == 1:
            stage = SkidBuffer(shape=entry)
            return stage, ~stage.o.valid
        stage = RegisteredLaneQueue(shape=entry, lanes=lanes, depth=LIST_QUEUE_DEPTH)
        return stage, stage.empty


def round_strobes(m, unit, config, *, items, bypassed=None):
    """A scatter unit's ``stall``, ``edge_strobe``, ``round_end``, ``round`` and ``round_messages``
    from ``items``, the stream whose edges and barriers enter the kernel's pipeline (and
    ``bypassed``: a barrier entered it by a shortcut); returns the round number those items carry
    (it counts the barriers that went before)."""
    fire = items.valid & items.ready
    edge_fire = fire & ~items.payload.item.barrier
    barrier_fire = fire & items.payload.item.barrier
    if bypassed is not None:
        barrier_fire = barrier_fire | bypassed
    m.d.comb += unit.stall.eq(items.valid & ~items.ready)
    rnd = Signal(config.pe.round_bits)
    with m.If(barrier_fire):
        m.d.sync += rnd.eq(rnd + 1)
    # The round log counts from registered strobes, a cycle late: ``fire`` ends the ready chain
    # from the message path and would otherwise drive the reset and enable of a 32-bit counter.
    edge_fired = Signal()
    barrier_fired = Signal()
    log_round = Signal(config.pe.round_bits)
    round_messages = Signal(32)
    m.d.sync += [edge_fired.eq(edge_fire), barrier_fired.eq(barrier_fire)]
    with m.If(barrier_fired):
        m.d.sync += [log_round.eq(log_round + 1), round_messages.eq(0)]
    with m.Elif(edge_fired):
        m.d.sync += round_messages.eq(round_messages + 1)
    m.d.comb += [unit.edge_strobe.eq(edge_fire), unit.round_end.eq(barrier_fired), unit.round.eq(log_round),
                 unit.round_messages.eq(round_messages)]
    return rnd
