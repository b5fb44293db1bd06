"""On-chip networks of the hybrid architecture: updates to their owner's scatter unit, messages
through a multistage network to their destination's PE.

Per local PE ``d`` (its ports ``src[d]`` and ``dst[d]`` each carry an ``updates`` and a
``messages`` stream)::

    src[d].updates ─ Broadcaster ─┬─ FIFO ─────────────────────────┐
                                  └─ filtered link FIFO ─▶ RoundMerger k ─▶ remote_out[k]
    remote_in[k] ─ OwnerRouter ─ (skid, FIFO) per d ───────────────┤
                                                  Endpoint d (1 + remotes sources) ─▶ dst[d].updates
    src[d].messages ─▶ MultistageNetwork ─▶ dst[d].messages

The hub path (``hub_path``): a hub sender's edges into its FPGA are dealt over all the FPGA's
scatter units (:mod:`gravfm.partition.hybrid_store`), so every unit takes its update. PE ``d``'s
local updates are split by sender: a local index below ``hub_senders[d]`` (each PE numbers its
hubs first) joins the hub stream, the rest go to its endpoint as before::

    src[d].updates ─ (Broadcaster) ─ split ─┬─ FIFO ─▶ Endpoint d
                                            └─ FIFO ─▶ RoundCombiner ─ copy to all ─ FIFO ─▶ Endpoint e (each)

Each split output's barrier counts what it took; the combiner sends one barrier per round once
every PE's is in, and the copy to every endpoint counts the round's hubs for each. One hub
stream moves one update per cycle: a hub has more out-edges than there are units, so its edges
keep them busier than its update does. A hub's update to other FPGAs goes to its owner there.

With ``link_lanes`` 2 there are a merger and a router per port and lane: PE ``d``'s filtered
link FIFOs feed lane ``d`` mod 2, and a lane's router feeds only the endpoints of that residue
(every sender on lane ``l`` is owned by a PE ``l`` mod 2), each endpoint one source per peer.

Owner of a sender (which scatter unit takes its update): its PE's local index, the sender's
global PE index mod ``pes``. Why this owner: (1) a local update needs no on-chip crossbar at all
(PE ``d``'s updates are PE ``d``'s scatter unit's): only the links' updates are routed, so the
update side holds ``pes * (1 + remotes)`` FIFOs, not ``pes**2``; (2) a scatter unit's edges are
its PEs' out-edges into this FPGA, and the default greedy partition balances the PEs' out-edges
(GraVF's balance); (3) the owner is a slice of the sender's id (no table). The cost: a scatter
unit sees only some of the round's barriers, so it cannot tell a silent round by itself (below).

Termination and the floating barrier. Endpoint ``d`` (``forward_silent``) counts its sources'
updates as GraVF-M's does (a local source's count is its apply's; a link's is counted per
destination by the :class:`OwnerRouter`) and always sends the round's barrier, its ``sent_any``
the OR of its sources'. The scatter unit sends that ``sent_any`` on its own barrier into the
message network behind all its round's messages; the network's last combiners OR them: the
sources of all endpoints of an FPGA are every local PE and every peer FPGA (whose link barrier
ORs its PEs'), so a round is silent at the destinations exactly when no PE of the system sent
an update, on every FPGA alike. The combiner then raises ``terminated`` (``terminated[d]``).

Why no message of round ``r`` can arrive at gather after its round-``r`` barrier: each scatter
unit's output is round-sorted (its barrier follows its round's last edge), and every switch of
the :class:`~gravfm.hw.network.MultistageNetwork` sends a round's barrier only after every
input's, holding back an input's next round: the destination's barrier follows every source's
round-``r`` messages. Why no deadlock: the update side is GraVF-M's (in-order per-source FIFOs,
per-source counts, the apply pass's queue holding a whole pass, links at most a round ahead:
a peer's round ``r+1`` needs this FPGA's round-``r`` barrier at its endpoints); on the message
side no buffer holds a round-``r+1`` item ahead of a round-``r`` one, so the oldest round always
drains as long as gather takes its messages, which it does once its apply pass ends, and an
apply pass always ends (its queue has room for it). Scatter units of an FPGA are at most one
round apart (PE ``d``'s round ``r+2`` update barrier needs gather ``d``'s round-``r+1`` barrier,
i.e. every local scatter unit's round ``r+1``).
"""

from amaranth.hdl import Cat, Const, Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..network import Broadcaster, Endpoint, MultistageNetwork, RoundCombiner, RoundMerger
from ..network.broadcast import route_counted
from ..network.network import filtered_link_fifo
from ..skid_buffer import SkidBuffer
from ..stream_fifo import StreamFIFO
from .router import OwnerRouter

__all__ = ["HybridNetwork", "pe_port_signature"]


def pe_port_signature(update_layout, message_layout):
    """A PE's side of its network port, as it sends (``Out``): an ``updates`` and a ``messages``
    stream (receiving PEs take it flipped)."""
    return wiring.Signature({"updates": Out(stream.Signature(update_layout)),
                             "messages": Out(stream.Signature(message_layout))})


class HybridNetwork(wiring.Component):
    """The hybrid's update network and message network between ``pes`` local PEs.

    Parameters
    ----------
    update_layout, message_layout : StructLayout
        ``net_update`` and ``net_message`` (:class:`~gravfm.hw.hybrid.HybridLayouts`).
    pes : int
        Local PEs (a power of two).
    local_bits : int
        Local-index bits of a hardware id.
    remotes : int
        Link ports (FPGAs - 1).
    link_lanes : int
        Update lanes per link port: lane ``l`` carries the updates of the PEs ``l`` mod
        ``link_lanes`` (its own merger) and, arriving, goes only to those PEs' scatter units (its
        own router), so an endpoint keeps one source per peer and a port moves ``link_lanes``
        updates per cycle.
    fifo_depth, link_fifo_depth, count_bits
        As :class:`~gravfm.hw.network.Network`'s.
    switch_depth : int
        Depth of the message network's crosspoint FIFOs (at least 2).
    hub_path : bool
        Every scatter unit also takes the FPGA's hub senders' updates (module docstring).

    Ports
    -----
    src : In(array of ``pes`` :func:`pe_port_signature`)
        Each PE's updates (apply) and messages (its scatter unit), each stream round-sorted.
    dst : Out(array of ``pes`` :func:`pe_port_signature`)
        Each PE's scatter unit's updates (one barrier per round, ``sent_any`` set if any of its
        sources sent), and its gather's messages (one barrier per round).
    terminated, waiting : Out(pes)
        A silent round ended the run (message network) / a barrier wait on either side.
    hub_senders : In(array of ``pes`` of local_bits + 1), ``hub_path`` only
        PE ``d``'s hubs: its senders whose local index is below it (host-loaded).
    remote_in, remote_out, link_sender, link_lookup, link_keep
        As :class:`~gravfm.hw.network.Network`'s (several FPGAs), ``remote_in[k link_lanes + l]``
        and ``remote_out[k link_lanes + l]`` lane ``l`` of port ``k``.
    """

    def __init__(self, *, update_layout, message_layout, pes, local_bits, remotes=0, link_lanes=1, fifo_depth=4,
                 link_fifo_depth=None, count_bits=8, switch_depth=4, hub_path=False):
        self._update, self._message = update_layout, message_layout
        self._hub_path = hub_path
        self._pes, self._local_bits, self._remotes, self._lanes = pes, local_bits, remotes, link_lanes
        self._fifo_depth, self._link_fifo_depth = fifo_depth, link_fifo_depth
        self._count_bits, self._switch_depth = count_bits, switch_depth
        port = pe_port_signature(update_layout, message_layout)
        members = {"src": In(port).array(pes), "dst": Out(port).array(pes), "terminated": Out(pes),
                   "waiting": Out(pes)}
        if remotes:
            members["remote_in"] = In(stream.Signature(update_layout)).array(remotes * link_lanes)
            members["remote_out"] = Out(stream.Signature(update_layout)).array(remotes * link_lanes)
            members["link_sender"] = Out(update_layout.members["sender"]).array(pes * remotes)
            members["link_lookup"] = Out(1).array(pes * remotes)
            members["link_keep"] = In(1).array(pes * remotes)
        if hub_path:
            members["hub_senders"] = In(local_bits + 1).array(pes)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p = self._pes
        m.submodules.messages = messages = MultistageNetwork(layout=self._message, pes=p, local_bits=self._local_bits,
                                                             depth=self._switch_depth)
        endpoints = []
        for d in range(p):
            endpoint = Endpoint(layout=self._update, sources=1 + self._remotes + self._hub_path,
                                count_bits=self._count_bits, forward_silent=True)
            m.submodules[f"endpoint{d}"] = endpoint
            wiring.connect(m, endpoint.o, wiring.flipped(self.dst[d].updates))
            wiring.connect(m, wiring.flipped(self.src[d].messages), messages.src[d])
            wiring.connect(m, messages.dst[d], wiring.flipped(self.dst[d].messages))
            m.d.comb += [self.terminated[d].eq(messages.terminated[d]),
                         self.waiting[d].eq(messages.waiting[d] | endpoint.waiting)]
            endpoints.append(endpoint)
        self._local_updates(m, endpoints)
        lanes = self._lanes
        for k in range(self._remotes):
            for lane in range(lanes):
                # The lane's senders all have local PE index ``lane`` mod ``lanes``: its router
                # picks among their owners by the PE bits above the lane's.
                router = OwnerRouter(layout=self._update, pes=p // lanes,
                                     local_bits=self._local_bits + (lanes.bit_length() - 1))
                m.submodules[f"router{k}" if lanes == 1 else f"router{k}_{lane}"] = router
                wiring.connect(m, wiring.flipped(self.remote_in[k * lanes + lane]), router.i)
                for j in range(p // lanes):
                    d = j * lanes + lane
                    # As GraVF-M's remote FIFOs: a skid buffer makes the router's ready a flip-flop.
                    m.submodules[f"entry{k}_{d}"] = entry = SkidBuffer(shape=self._update)
                    m.submodules[f"remote_fifo{k}_{d}"] = fifo = self._fifo()
                    wiring.connect(m, router.o[j], entry.i)
                    wiring.connect(m, entry.o, fifo.i)
                    wiring.connect(m, fifo.o, endpoints[d].i[1 + k])
        return m

    def _fifo(self):
        """An endpoint's per-source FIFO (LUT RAM, as GraVF-M's: the endpoint's arbitration runs
        from its output back into its read enable)."""
        return StreamFIFO(shape=self._update, depth=self._fifo_depth, ram_style="distributed", bypass=True)

    def _local_updates(self, m, endpoints):
        """PE ``d``'s updates to its own endpoint and, through the neighbor filter, to every link."""
        p, remotes, lanes = self._pes, self._remotes, self._lanes
        mergers = []                 # [k lanes + lane]: lane ``lane`` of port ``k``
        for k in range(remotes):
            for lane in range(lanes):
                merger = RoundMerger(layout=self._update, sources=p // lanes)
                m.submodules[f"link_merge{k}" if lanes == 1 else f"link_merge{k}_{lane}"] = merger
                wiring.connect(m, merger.o, wiring.flipped(self.remote_out[k * lanes + lane]))
                mergers.append(merger)
        depth = self._fifo_depth if self._link_fifo_depth is None else self._link_fifo_depth
        hubs = self._hub_streams(m, endpoints) if self._hub_path else None
        for d in range(p):
            m.submodules[f"fifo{d}"] = fifo = self._fifo()
            wiring.connect(m, fifo.o, endpoints[d].i[0])
            local = wiring.flipped(self.src[d].updates)
            if remotes:
                m.submodules[f"broadcast{d}"] = copies = Broadcaster(shape=self._update, count=1 + remotes)
                wiring.connect(m, local, copies.i)
                local = copies.o[0]
            if hubs is None:
                wiring.connect(m, local, fifo.i)
            else:
                self._split_hubs(m, d, local, own=fifo.i, hub=hubs[d])
            for k in range(remotes):
                index = d * remotes + k
                m.submodules[f"link_fifo{d}_{k}"] = filtered_link_fifo(
                    m, copies.o[1 + k], mergers[k * lanes + d % lanes].i[d // lanes], depth=depth,
                    sender=self.link_sender[index],
                    lookup=self.link_lookup[index], keep=self.link_keep[index],
                    entry_name=f"link_entry{d}_{k}")

    def _hub_streams(self, m, endpoints):
        """The hub stream: every PE's hub updates, one barrier per round, copied to every
        endpoint's last source. Returns each PE's input to it."""
        p = self._pes
        m.submodules.hub_combiner = combiner = RoundCombiner(layout=self._update, sources=p)
        outputs = []
        for d in range(p):
            # A skid buffer makes each endpoint FIFO's ready a flip-flop for the copy.
            m.submodules[f"hub_entry{d}"] = entry = SkidBuffer(shape=self._update)
            m.submodules[f"hub_fifo{d}"] = fifo = self._fifo()
            wiring.connect(m, entry.o, fifo.i)
            wiring.connect(m, fifo.o, endpoints[d].i[-1])
            outputs.append(entry.i)
        route_counted(m, combiner.o, outputs, target=Const(0, p), copy=1)
        return combiner.i

    def _split_hubs(self, m, d, local, *, own, hub):
        """PE ``d``'s local updates: a hub's (local index below ``hub_senders[d]``) to ``hub``,
        the rest to ``own``, each barrier counting what its side took."""
        # Registered in front: the split's choice runs from flip-flops. Behind, a FIFO as deep as
        # an endpoint's: the split is in order, so a hub waiting for the hub stream (which waits
        # for the slowest endpoint) held the PE's own updates behind it. With a 2-deep buffer
        # there, BFS on RMAT scale 18 at 1 x 64 (hubs of more than 512 edges) spent 46,027 cycles
        # in its second superstep, 31,298 by the busiest unit's count.
        m.submodules[f"hub_split{d}"] = entry = SkidBuffer(shape=self._update)
        m.submodules[f"hub_out{d}"] = to_hubs = self._fifo()
        wiring.connect(m, local, entry.i)
        wiring.connect(m, to_hubs.o, hub)
        sender = entry.o.payload.sender[:self._local_bits]
        is_hub = sender < self.hub_senders[d]
        route_counted(m, entry.o, [own, to_hubs.i], target=Cat(~is_hub, is_hub))
