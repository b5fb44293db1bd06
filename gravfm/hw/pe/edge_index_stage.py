"""The first stages of an on-chip scatter unit: each update's edge list from the edge index.

::

    updates ─▶ [A] edge-index read (one read port per lane) ─▶ [A2] index words registered ─▶ o

A2 holds the block RAM's late output in plain flip-flops. A barrier has no list: at the front of
A with A2 empty it is offered on ``barrier`` too, and a barrier taken there never enters A2.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import edge_list_layout, lanes_layout
from ..memory_ports import NO_READ_DURING_WRITE, write_port_signature

__all__ = ["EdgeIndexStage"]


class EdgeIndexStage(wiring.Component):
    """The edge index of a scatter unit and its read stages.

    Parameters
    ----------
    layouts : gravfm.hw.layouts.KernelLayouts
    config : gravfm.hw.SystemConfig
        ``vertexid_bits`` sets the index's depth, ``pe.update_lanes`` its read ports.

    Ports
    -----
    updates : In(stream pe_updates)
        Updates and barriers, ``config.pe.update_lanes`` per cycle.
    index_wr : In(write port, edge_index)
        Host writes to the edge index (address = sender's hardware id).
    o : Out(stream of ``edge_list_layout``, one per lane)
        The lists, one lane: every update. More lanes: ``valid`` marks the lanes holding a
        barrier or a non-empty list (empty lists are dropped).
    barrier : Out(stream net_update)
        The barrier in stage A when A2 is empty: nothing in this stage is ahead of it. Taken
        (``ready``), it leaves the stage and ``o`` never carries it.
    active : Out(1)
        A or A2 holds an item.
    """

    def __init__(self, *, layouts, config):
        self._layouts = layouts
        self._config = config
        lanes = config.pe.update_lanes
        super().__init__({
            "updates": In(stream.Signature(layouts.pe_updates)),
            "index_wr": In(write_port_signature(config.vertexid_bits, layouts.edge_index)),
            "o": Out(stream.Signature(lanes_layout(edge_list_layout(layouts, config), lanes))),
            "barrier": Out(stream.Signature(layouts.net_update)),
            "active": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        layouts, config = self._layouts, self._config
        lanes = config.pe.update_lanes
        index_rds, index_addr = self._index_memory(m)

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
        # straight into flip-flops), with the list's length tests precomputed for the generator.
        a2_valid = Signal()
        a2_item = Signal(layouts.pe_updates)
        a2_starts = [Signal.like(index_rd.data.start, reset_less=True, name=f"a2_start{lane}")
                     for lane, index_rd in enumerate(index_rds)]
        a2_lengths = [Signal(config.pe.edge_len_bits, reset_less=True, name=f"a2_length{lane}")
                      for lane in range(lanes)]
        a2_nonempty = Signal(lanes, reset_less=True)
        a_barrier = lane_items(a_item)[0]         # a barrier travels alone in lane 0
        a_holds_barrier = a_valid & a_barrier.barrier & (a_item.valid[0] if lanes > 1 else 1)
        a_skip = self.barrier.valid & self.barrier.ready
        m.d.comb += [self.barrier.valid.eq(a_holds_barrier & ~a2_valid), self.barrier.payload.eq(a_barrier)]
        with m.If(a2_advance):
            m.d.sync += [a2_valid.eq(a_valid & ~a_skip), a2_item.eq(a_item)]
            for index_rd, start, length in zip(index_rds, a2_starts, a2_lengths):
                m.d.sync += [start.eq(index_rd.data.start), length.eq(index_rd.data.length)]
            if lanes > 1:
                m.d.sync += a2_nonempty.eq(Cat(index_rd.data.nonempty for index_rd in index_rds))

        lists = [self.o.payload] if lanes == 1 else list(self.o.payload.lanes)
        for lane, (entry, item, start, length) in enumerate(zip(lists, lane_items(a2_item), a2_starts, a2_lengths)):
            m.d.comb += [entry.item.eq(item), entry.start.eq(start), entry.length.eq(length)]
            if lanes > 1:
                m.d.comb += self.o.payload.valid[lane].eq(a2_item.valid[lane] & (item.barrier | a2_nonempty[lane]))
        m.d.comb += [self.o.valid.eq(a2_valid), a2_advance.eq(~a2_valid | self.o.ready),
                     self.active.eq(a_valid | a2_valid)]
        return m

    def _index_memory(self, m):
        """The edge index and its host write port; returns its read ports (one per lane) and the
        address the last lane's port shares with the host's write."""
        layouts, config = self._layouts, self._config
        lanes = config.pe.update_lanes
        # With several lanes each index word carries its list's "non-empty" bit, set as the host
        # writes it: the list queue's filter then starts at a register (the block RAM's output
        # register), not behind a compare of the length.
        index_layout = layouts.edge_index if lanes == 1 else data.StructLayout(
            {**layouts.edge_index.members, "nonempty": 1})
        m.submodules.index_mem = index_mem = memory.Memory(
            shape=index_layout, depth=2 ** config.vertexid_bits, init=[], attrs=NO_READ_DURING_WRITE)
        # With several lanes the last lane's index read shares its address with the host write
        # port (the host writes only before start), so synthesis can map the index to one
        # true-dual-port block RAM instead of a copy per lane.
        index_addr = self.index_wr.addr
        if lanes > 1:
            index_addr = Signal.like(self.index_wr.addr, name="index_shared_addr")
            m.d.comb += index_addr.eq(Mux(self.index_wr.en, self.index_wr.addr,
                                          self.updates.payload.lanes[lanes - 1].sender))
        index_word = self.index_wr.data if lanes == 1 else Cat(self.index_wr.data, self.index_wr.data.length != 0)
        wr = index_mem.write_port()
        m.d.comb += [wr.addr.eq(index_addr), wr.en.eq(self.index_wr.en), wr.data.eq(index_word)]
        return [index_mem.read_port() for _ in range(lanes)], index_addr
