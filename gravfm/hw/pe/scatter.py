"""Scatter stage of a PE: updates in, one message per local out-edge of the sender out.

Pipeline (each stage holds one item and advances when the next can take it)::

    updates ─▶ [A] edge-index read (start, length of the sender's local list)
            ─▶ [A2] edge-index word registered (block RAM output into flip-flops)
            ─▶ [B] address generator: one edge address per cycle
            ─▶ [C] edge-array read (destination, edge data)
            ─▶ [D] edge word registered (block RAM output into flip-flops)
            ─▶ scatter kernel ─▶ messages

The address generator loads the next list in the cycle the current one issues its last edge, so
consecutive lists stream without a bubble; a zero-length list costs one cycle. Between A2 and B
sits a stage whose ``ready`` is a register (a skid buffer with one lane; with two, a queue that
keeps only the non-empty lists and barriers, so empty ones cost no generator cycle and two
updates enter per cycle): the generator's ``ready`` then never reaches the stages in front of
it, nor this unit's ``updates.ready``. A barrier update
becomes one kernel item with ``barrier=1`` behind the last edge of its round; it has no edges
to read, so it goes straight into D from A when every stage between is empty (four cycles less
per superstep: a barrier goes round every superstep), or from the list stage when the generator
is idle and the edge read empty (two cycles less). The edge index and
the edge array live here (synchronous-read memories) and are filled through the host write ports.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..lane_queue import LaneQueue
from ..layouts import hardware_id
from ..memory_ports import NO_READ_DURING_WRITE, write_port_signature
from ..skid_buffer import SkidBuffer

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
        lanes = config.pe.update_lanes
        # With several lanes each index word carries its list's "non-empty" bit, set as the host
        # writes it: the list queue's filter then starts at a register (the block RAM's output
        # register), not behind a compare of the length.
        index_layout = layouts.edge_index if lanes == 1 else data.StructLayout(
            {**layouts.edge_index.members, "nonempty": 1})
        m.submodules.index_mem = index_mem = memory.Memory(
            shape=index_layout, depth=2 ** config.vertexid_bits, init=[], attrs=NO_READ_DURING_WRITE)
        m.submodules.edge_mem = edge_mem = memory.Memory(
            shape=layouts.edge_word, depth=config.pe.edges_per_pe, init=[], attrs=NO_READ_DURING_WRITE)
        # With several lanes the last lane's index read shares its address with the host write
        # port (the host writes only before start), so synthesis can map the index to one
        # true-dual-port block RAM instead of a copy per lane.
        index_addr = self.index_wr.addr
        if lanes > 1:
            index_addr = Signal.like(self.index_wr.addr, name="index_shared_addr")
            m.d.comb += index_addr.eq(Mux(self.index_wr.en, self.index_wr.addr,
                                          self.updates.payload.lanes[lanes - 1].sender))
        index_word = self.index_wr.data if lanes == 1 else Cat(self.index_wr.data, self.index_wr.data.length != 0)
        for mem, port, addr, word in ((index_mem, self.index_wr, index_addr, index_word),
                                      (edge_mem, self.edge_wr, self.edge_wr.addr, self.edge_wr.data)):
            wr = mem.write_port()
            m.d.comb += [wr.addr.eq(addr), wr.en.eq(port.en), wr.data.eq(word)]
        index_rds = [index_mem.read_port() for _ in range(lanes)]
        edge_rd = edge_mem.read_port()

        def lane_items(payload):
            return [payload] if lanes == 1 else list(payload.lanes)

        # Stage A: edge-index read (one read port per lane).
        a_valid = Signal()
        a_item = Signal(layouts.pe_updates)
        a2_advance = Signal()
        a_advance = ~a_valid | a2_advance
        for lane, (item, index_rd) in enumerate(zip(lane_items(self.updates.payload), index_rds)):
            address = index_addr if lanes > 1 and lane == lanes - 1 else item.sender
            m.d.comb += [index_rd.addr.eq(address), index_rd.en.eq(a_advance)]
        m.d.comb += self.updates.ready.eq(a_advance)
        with m.If(a_advance):
            m.d.sync += [a_valid.eq(self.updates.valid), a_item.eq(self.updates.payload)]

        # Stage A2: the edge-index words in plain registers (the block RAM's late output goes
        # straight into flip-flops), with the list's length tests precomputed for stage B.
        a2_valid = Signal()
        a2_item = Signal(layouts.pe_updates)
        a2_starts = [Signal.like(index_rd.data.start, reset_less=True, name=f"a2_start{lane}")
                     for lane, index_rd in enumerate(index_rds)]
        a2_lengths = [Signal(config.pe.edge_len_bits, reset_less=True, name=f"a2_length{lane}")
                      for lane in range(lanes)]
        a2_nonempty = Signal(lanes, reset_less=True)
        a_skip = Signal()         # the barrier in A goes straight into D (stage D below)
        with m.If(a2_advance):
            m.d.sync += [a2_valid.eq(a_valid & ~a_skip), a2_item.eq(a_item)]
            for index_rd, start, length in zip(index_rds, a2_starts, a2_lengths):
                m.d.sync += [start.eq(index_rd.data.start), length.eq(index_rd.data.length)]
            if lanes > 1:
                m.d.sync += a2_nonempty.eq(Cat(index_rd.data.nonempty for index_rd in index_rds))

        # The lists stage B takes next, behind a registered ``ready``. One lane: a skid buffer
        # (one cycle more per superstep). More: the lanes' non-empty lists (and the barrier)
        # through a small in-order queue, so that a PE holding no edges for most senders takes
        # several updates per cycle but never loses a cycle on them.
        a_ready = Signal()
        entry = data.StructLayout({"item": layouts.net_update, "start": len(a2_starts[0]),
                                   "length": config.pe.edge_len_bits})
        if lanes == 1:
            # The generator's ``ready`` (from the kernel's and the message path's) would
            # otherwise ripple through A2 and A into the PE's input buffer.
            m.submodules.lists = lists = SkidBuffer(shape=entry)
            m.d.comb += [
                lists.i.valid.eq(a2_valid),
                lists.i.payload.item.eq(a2_item),
                lists.i.payload.start.eq(a2_starts[0]),
                lists.i.payload.length.eq(a2_lengths[0]),
                a2_advance.eq(~a2_valid | lists.i.ready),
                lists.o.ready.eq(a_ready),
            ]
        else:
            m.submodules.lists = lists = LaneQueue(shape=entry, lanes=lanes, depth=LIST_QUEUE_DEPTH)
            for lane, (item, start, length) in enumerate(zip(lane_items(a2_item), a2_starts, a2_lengths)):
                m.d.comb += [
                    lists.i.payload.lanes[lane].item.eq(item),
                    lists.i.payload.lanes[lane].start.eq(start),
                    lists.i.payload.lanes[lane].length.eq(length),
                    lists.i.payload.valid[lane].eq(a2_item.valid[lane] & (item.barrier | a2_nonempty[lane])),
                ]
            m.d.comb += [lists.i.valid.eq(a2_valid), a2_advance.eq(~a2_valid | lists.i.ready),
                         lists.o.ready.eq(a_ready)]
        next_valid, next_item = lists.o.valid, lists.o.payload.item
        next_start, next_length = lists.o.payload.start, lists.o.payload.length

        # Stage B: address generator. ``left`` counts the edges still to issue; its tests
        # (nonzero, one) are kept in registers so that ``fire`` is shallow logic.
        busy = Signal()
        address = Signal(config.pe.edge_addr_bits)
        left = Signal(config.pe.edge_len_bits)
        left_nonzero = Signal()
        left_one = Signal()
        length = Signal(config.pe.edge_len_bits)
        is_barrier = Signal()
        current = Signal(layouts.net_update)
        c_advance = Signal()
        b_valid = busy & (left_nonzero | is_barrier)
        fire = b_valid & c_advance
        last = is_barrier | left_one
        m.d.comb += a_ready.eq(~busy | (~is_barrier & ~left_nonzero) | (fire & last))
        lists_skip = Signal()     # the barrier at the list stage goes straight into D (below)
        barrier_skip = Signal()
        with m.If(a_ready):
            m.d.sync += busy.eq(next_valid & ~lists_skip)
            with m.If(next_valid):
                edges = ~next_item.barrier
                m.d.sync += [
                    address.eq(next_start),
                    left.eq(next_length & edges.replicate(config.pe.edge_len_bits)),
                    left_nonzero.eq(edges & (next_length != 0)),
                    left_one.eq(edges & (next_length == 1)),
                    length.eq(next_length),
                    is_barrier.eq(next_item.barrier),
                    current.eq(next_item),
                ]
        with m.Elif(fire):
            m.d.sync += [address.eq(address + 1), left.eq(left - 1),
                         left_nonzero.eq(~left_one), left_one.eq(left == 2)]

        rnd = round_strobes(m, self, config, edge_fire=fire & ~is_barrier,
                            barrier_fire=(fire & is_barrier) | barrier_skip)
        m.d.comb += self.stall.eq(b_valid & ~c_advance)

        # Stage C: edge-array read. Stage D: the read data in plain registers (the block RAM's
        # late output goes straight into flip-flops instead of through the kernel into the
        # message path; one cycle more per superstep), then the kernel.
        c_valid = Signal()
        c_item = Signal(layouts.net_update)
        c_round = Signal(config.pe.round_bits)
        c_length = Signal(config.pe.edge_len_bits)
        d_valid = Signal()
        d_item = Signal(layouts.net_update)
        d_round = Signal(config.pe.round_bits)
        d_length = Signal(config.pe.edge_len_bits)
        d_edge = Signal(layouts.edge_word, reset_less=True)
        d_advance = ~d_valid | kernel.i.ready
        m.d.comb += [c_advance.eq(~c_valid | d_advance),
                     edge_rd.addr.eq(address), edge_rd.en.eq(c_advance)]
        with m.If(c_advance):
            m.d.sync += [c_valid.eq(b_valid), c_item.eq(current), c_round.eq(rnd), c_length.eq(length)]
        # The barrier's shortcuts into D, from A (A2, the list stage, B and C empty) or from the
        # list stage (B idle, C empty): nothing can be ahead of it. From A: A moves on as usual
        # (A2 is empty, so A advances) and A2 does not take it. From the list stage: B pops it
        # and stays idle.
        a_barrier = lane_items(a_item)[0]         # a barrier travels alone in lane 0
        a_holds_barrier = a_valid & a_barrier.barrier & (a_item.valid[0] if lanes > 1 else 1)
        downstream_empty = ~b_valid & ~c_valid & d_advance
        m.d.comb += [
            a_skip.eq(a_holds_barrier & ~a2_valid & ~next_valid & downstream_empty),
            lists_skip.eq(next_valid & next_item.barrier & downstream_empty),
            barrier_skip.eq(a_skip | lists_skip),
        ]
        with m.If(d_advance):
            m.d.sync += [d_valid.eq(c_valid | barrier_skip), d_edge.eq(edge_rd.data)]
            with m.If(barrier_skip):
                m.d.sync += [d_item.eq(Mux(a_skip, a_barrier, next_item)), d_round.eq(rnd), d_length.eq(0)]
            with m.Else():
                m.d.sync += [d_item.eq(c_item), d_round.eq(c_round), d_length.eq(c_length)]
        k = kernel.i.payload
        m.d.comb += [
            kernel.i.valid.eq(d_valid),
            k.update.eq(d_item.update),
            k.sender.eq(d_item.sender),
            k.round.eq(d_round),
            k.barrier.eq(d_item.barrier),
            k.neighbor.eq(hardware_id(d_edge.dst, self._pe_index, config)),
            k.num_neighbors.eq(d_length),
            k.edge.eq(d_edge.edge),
            self.active.eq(a_valid | a2_valid | next_valid | busy | c_valid | d_valid),
        ]
        wiring.connect(m, wiring.flipped(self.messages), kernel.o)
        return m


def round_strobes(m, unit, config, *, edge_fire, barrier_fire):
    """A scatter unit's ``edge_strobe``, ``round_end``, ``round`` and ``round_messages`` from the
    cycles an edge or a barrier enters the kernel's pipeline; returns the round number those
    items carry (it counts the barriers that went before)."""
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
