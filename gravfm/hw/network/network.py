"""On-chip network of one FPGA: update broadcast with per-source FIFOs at every destination.

Every local PE's update queue feeds a :class:`Broadcaster` that offers each update to one FIFO
per destination; each local destination merges its FIFOs in an :class:`Endpoint` (round-robin
arbitration among sources still in the current round, floating barrier, termination).

Remote FPGAs attach at explicit extra ports: ``remote_in[k]`` is one more source for every local
endpoint (updates arriving from FPGA link ``k``), and ``remote_out[k]`` receives a copy of every
local update (to be sent over link ``k``), merged one superstep at a time by a
:class:`RoundMerger` (the paper's sequentialized channels), each local source's barrier included.
The neighbor filter acts in front of the merger: the sender of each update entering a (local
source, link) FIFO's skid buffer is shown at ``link_sender``, ``link_keep``
answers whether it has an out-neighbour on that link's FPGA, and the answer is stored with the
update; at the FIFO's head an update without it is dropped (barriers always pass). Asking on entry
keeps the filter's lookup off the path from the FIFO's block RAM to the merger. Each FIFO drops
on its own, so the merger's one item per cycle goes to updates the peer needs. With one FPGA there
are none. The per-round counts of a remote source are ``count_bits`` wide, so a multi-FPGA build
must size ``count_bits`` for a whole FPGA's updates.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import lanes_layout
from ..skid_buffer import ReadySlice, SkidBuffer
from ..stream_fifo import StreamFIFO
from .broadcast import Broadcaster
from .endpoint import Endpoint
from .merge import RoundMerger

__all__ = ["Network", "build_crossbar", "filtered_link_fifo", "network_ports"]


def network_ports(layout, *, pes, remotes, dst_layout=None):
    """The ports every network has: ``src``/``dst`` streams per local PE, ``terminated`` and
    ``waiting`` per local destination, and with ``remotes`` links ``remote_in``/``remote_out``
    (``dst_layout``: what a PE receives, by default ``layout``)."""
    members = {
        "src": In(stream.Signature(layout)).array(pes),
        "dst": Out(stream.Signature(layout if dst_layout is None else dst_layout)).array(pes),
        "terminated": Out(pes),
        "waiting": Out(pes),
    }
    if remotes:
        members["remote_in"] = In(stream.Signature(layout)).array(remotes)
        members["remote_out"] = Out(stream.Signature(layout)).array(remotes)
    return members


class Network(wiring.Component):
    """Broadcast crossbar between ``pes`` local PEs (plus ``remotes`` link ports).

    Parameters
    ----------
    layout : StructLayout
        Network update layout.
    pes : int
        Local PEs (sources and destinations).
    remotes : int
        Remote link ports (extra sources and extra destinations).
    fifo_depth : int
        Depth of each (source, destination) FIFO.
    link_fifo_depth : int
        Depth of each (local source, link) FIFO (default: ``fifo_depth``).
    count_bits : int
        Width of per-round update counts.
    lanes : int
        Updates each local PE takes per cycle (see :class:`Endpoint`).

    Ports
    -----
    src : In(array of ``pes`` streams)
        Each local PE's outgoing updates and barriers.
    dst : Out(array of ``pes`` streams)
        Each local PE's incoming updates, one barrier per round (payload
        ``lanes_layout(layout, lanes)``).
    terminated, waiting : Out(pes)
        Per local destination: termination detected / waiting for barriers.
    remote_in : In(array of ``remotes`` streams)
    remote_out : Out(array of ``remotes`` streams)
    link_sender, link_lookup : Out(array of ``pes * remotes`` sender ids), Out(array of bits)
        Sender of the item that loads, when ``link_lookup``, into the entry register of local
        source ``s``'s FIFO to link ``k`` (index ``s * remotes + k``; :func:`filtered_link_fifo`).
    link_keep : In(array of ``pes * remotes`` bits)
        Send the item in that entry register: the neighbor filter's answer for its sender, read
        (registered) while ``link_lookup`` was high.
    """

    def __init__(self, *, layout, pes, remotes=0, fifo_depth=4, link_fifo_depth=None, count_bits=8, lanes=1):
        self._layout, self._pes, self._remotes, self._lanes = layout, pes, remotes, lanes
        self._fifo_depth, self._link_fifo_depth = fifo_depth, link_fifo_depth
        self._count_bits = count_bits
        members = network_ports(layout, pes=pes, remotes=remotes, dst_layout=lanes_layout(layout, lanes))
        if remotes:
            members["link_sender"] = Out(layout.members["sender"]).array(pes * remotes)
            members["link_lookup"] = Out(1).array(pes * remotes)
            members["link_keep"] = In(1).array(pes * remotes)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        pes, remotes = self._pes, self._remotes

        def broadcaster(s, local):
            # A remote source is only delivered to local PEs; a local one also to every link.
            return f"broadcast{s}", Broadcaster(shape=self._layout, count=pes + (remotes if local else 0))

        build_crossbar(m, self, layout=self._layout, pes=pes, remotes=remotes, fifo_depth=self._fifo_depth,
                       link_fifo_depth=self._link_fifo_depth, count_bits=self._count_bits,
                       distributor=broadcaster, lanes=self._lanes, filtered=True)
        return m


def build_crossbar(m, net, *, layout, pes, remotes, fifo_depth, count_bits, distributor, lanes=1,
                   link_fifo_depth=None, filtered=False):
    """Elaborate a network component ``net`` (ports as :class:`Network`) into ``m``.

    Every source (local PEs, then remote link inputs) feeds a distributor
    ``distributor(s, local) -> (name, component)`` whose outputs ``0..pes-1`` go through a FIFO
    to the local endpoints and, for a local source, outputs ``pes + k`` through a FIFO to the
    :class:`RoundMerger` of link ``k``. Shared by GraVF-M (broadcast) and the GraVF baseline
    (unicast router). ``lanes``: updates per cycle at each endpoint's output; ``link_fifo_depth``:
    depth of the FIFOs towards the links (default ``fifo_depth``); ``filtered``: drop the updates
    that ``net.link_keep`` rejects (the ports of :class:`Network`).
    """
    sources = list(net.src) + (list(net.remote_in) if remotes else [])
    endpoints = []
    for d in range(pes):
        endpoint = Endpoint(layout=layout, sources=len(sources), count_bits=count_bits, lanes=lanes)
        m.submodules[f"endpoint{d}"] = endpoint
        wiring.connect(m, endpoint.o, wiring.flipped(net.dst[d]))
        m.d.comb += [net.terminated[d].eq(endpoint.terminated), net.waiting[d].eq(endpoint.waiting)]
        endpoints.append(endpoint)
    mergers = []
    for k in range(remotes):
        merger = RoundMerger(layout=layout, sources=pes)
        m.submodules[f"link_merge{k}"] = merger
        wiring.connect(m, merger.o, wiring.flipped(net.remote_out[k]))
        mergers.append(merger)
    for s, source in enumerate(sources):
        local = s < pes
        name, spreader = distributor(s, local)
        m.submodules[name] = spreader
        if local:
            # A local source enters through a ready slice (timing plan, rule 2): the distributor's
            # ready, an AND over every FIFO it feeds, would otherwise run back into the PE's
            # update queue, through its read enable and fill count into its block RAM's address
            # (FPGA 0 of 2 x 4 PEs: 117.0 MHz on ECP5). The queue's head is a register already,
            # so only ready needed cutting: no cycle added.
            entry = ReadySlice(shape=layout)
            m.submodules[f"source_entry{s}"] = entry
            wiring.connect(m, wiring.flipped(source), entry.i)
            wiring.connect(m, entry.o, spreader.i)
        else:
            wiring.connect(m, wiring.flipped(source), spreader.i)
        for d in range(pes):
            buffer = crossbar_fifo(layout, fifo_depth)
            m.submodules[f"fifo{s}_{d}"] = buffer
            if local:
                wiring.connect(m, spreader.o[d], buffer.i)
            else:
                # A remote source's FIFOs sit by their endpoints, all over the chip; their fill
                # counts, ANDed into the distributor's ready and back into the link receiver's
                # output register, were the path of FPGA 0 of 2 x 4 PEs (105 MHz on ECP5). A
                # skid buffer in front of each makes that ready a flip-flop per destination.
                entry = SkidBuffer(shape=layout)
                m.submodules[f"entry{s}_{d}"] = entry
                wiring.connect(m, spreader.o[d], entry.i)
                wiring.connect(m, entry.o, buffer.i)
            # The FIFO's head reaches its endpoint through a ready slice (timing plan, rule 2):
            # the endpoint's grant ran through ``ready`` into the FIFO's read logic by its
            # memory and back into the head register by the endpoint, across the chip (FPGA 0
            # of 2 x 4 PEs: 119.8 MHz on ECP5, 93548c2, seed 2, 7.0 of 8.3 ns routing). The
            # slice adds no cycle: an item passes through while the endpoint takes it.
            head = ReadySlice(shape=layout)
            m.submodules[f"head{s}_{d}"] = head
            wiring.connect(m, buffer.o, head.i)
            wiring.connect(m, head.o, endpoints[d].i[s])
        if local:
            depth = fifo_depth if link_fifo_depth is None else link_fifo_depth
            # Link FIFOs are deep (block RAM): their head sits in a flip-flop, so the block RAM's
            # clock-to-out ends there; the merger takes them through skid buffers (RoundMerger).
            for k in range(remotes):
                if filtered:
                    buffer = filtered_link_fifo(m, spreader.o[pes + k], mergers[k].i[s], depth=depth,
                                                 sender=net.link_sender[s * remotes + k],
                                                 lookup=net.link_lookup[s * remotes + k],
                                                 keep=net.link_keep[s * remotes + k],
                                                 entry_name=f"link_entry{s}_{k}")
                else:
                    buffer = StreamFIFO(shape=layout, depth=depth, head_register=True)
                    wiring.connect(m, spreader.o[pes + k], buffer.i)
                    wiring.connect(m, buffer.o, mergers[k].i[s])
                m.submodules[f"link_fifo{s}_{k}"] = buffer


#: The deepest crossbar FIFO kept in LUT RAM: one 16-entry row, read without a multiplexer.
LUT_RAM_FIFO_DEPTH = 16


def crossbar_fifo(layout, depth):
    """The FIFO between a source's distributor and an endpoint, with the same timing at any depth.

    Shallow ones are LUT RAM, read asynchronously into the head register. A deeper one (64 from 8
    PEs on) is a block RAM read from registers alone into a small fabric queue
    (:class:`~gravfm.hw.prefetch_fifo.PrefetchFIFO`, same timing): in LUT RAM, 20 of them were 720
    DPR16X4 on FPGA 0 of 2 x 4 PEs, each with a four-way read multiplexer, and the crossbar was
    where router1 stalled; a block RAM read straight into the endpoint's arbitration gave that top
    70 MHz, and one read at the next head's address behind a fabric head register ran the
    endpoint's grant into the RAM's address across the chip (111.8-118.3 MHz, bf0e97f). The
    endpoint's ``ready`` depends on the head's ``barrier``: every bit of the head is a fabric
    register here.
    """
    if depth <= LUT_RAM_FIFO_DEPTH:
        return StreamFIFO(shape=layout, depth=depth, ram_style="distributed", bypass=True)
    return StreamFIFO(shape=layout, depth=depth, prefetch=True, bypass=True)


def filtered_link_fifo(m, source, merger_in, *, depth, sender, lookup, keep, entry_name):
    """A link FIFO from ``source`` to ``merger_in`` that drops the updates ``keep`` rejects.

    The update from ``source`` (the PE's update queue through a ready slice) passes an inlet
    :class:`SkidBuffer` and waits in a second one; as it loads into that one's output register,
    its sender is on ``sender`` with ``lookup``, and the neighbor filter, a memory with a
    registered read, answers on ``keep`` in step with it (barriers always pass). Both then enter
    one register stage, the answer into a flip-flop that nothing else feeds (timing rule 1: the
    block RAM's own output register), and the FIFO stores the answer with the update; at its head
    the answer gates only ``valid`` towards the merger, never the FIFO's read enable.

    Why (FPGA 0 of 2 x 4 PEs, ECP5-85):

    - a filter read without a register (LUT RAM) ran from the update queue's block RAM through
      the filter's read multiplexers into the skid register, placed apart: 116.4 MHz, 6.6 of its
      8.6 ns routing;
    - behind the buffer, from its register into the FIFO's block RAM: 116.2 MHz;
    - the answer written into the FIFO straight from the block RAM: 126.7 and 116.4 MHz
      (0eb2aa6, seeds 1 and 2);
    - the inlet puts the filter's address behind flip-flops by the FIFO (timing rule 2); without
      it the address ran from the update queue's block RAM in the PE through the broadcaster:
      123.4 MHz (7ffe113, seed 1). It costs one cycle more on an update's way to a link.
    """
    update = source.payload.shape()
    tagged = data.StructLayout({"item": update, "forward": 1})
    inlet = SkidBuffer(shape=update)
    m.submodules[f"{entry_name}_inlet"] = inlet
    entry = SkidBuffer(shape=update, lookahead=True)
    m.submodules[entry_name] = entry
    buffer = StreamFIFO(shape=tagged, depth=depth, head_register=True)
    head = buffer.o.payload
    wiring.connect(m, source, inlet.i)
    wiring.connect(m, inlet.o, entry.i)
    held, held_keep, held_valid = Signal(update), Signal(), Signal()
    advance = ~held_valid | buffer.i.ready
    with m.If(advance):
        m.d.sync += [held.eq(entry.o.payload), held_keep.eq(keep), held_valid.eq(entry.o.valid)]
    m.d.comb += [
        sender.eq(entry.next.sender),
        lookup.eq(entry.loads),
        entry.o.ready.eq(advance),
        buffer.i.payload.item.eq(held),
        buffer.i.payload.forward.eq(held_keep | held.barrier),
        buffer.i.valid.eq(held_valid),
        merger_in.payload.eq(head.item),
        merger_in.valid.eq(buffer.o.valid & head.forward),
        # Not ``| ~head.forward``: the forward bit comes from the block RAM's output register,
        # and through the read enable it ran back into the same block RAM's read address, placed
        # far apart (103.0 MHz on FPGA 0 of 2 x 4 PEs, cb0fbec, router1 seed 2). A dropped update
        # now leaves when the merger's registered ``ready`` is high, as a forwarded one does.
        buffer.o.ready.eq(merger_in.ready),
    ]
    return buffer
