"""One FPGA of a multi-FPGA system: its PEs, its network, the neighbor filter and link endpoints.

The architecture (``config.arch``) picks the PE and the on-chip network: GraVF-M's PEs broadcast
updates (filtered per peer FPGA by the neighbor-filter bitmap); the GraVF baseline's PEs scatter
themselves and send one message per edge, routed to the FPGA of its destination. Both use the
same link endpoints (one counted barrier per round and link) and the same links.
"""

from amaranth.hdl import Module
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..host_read import HOST_READ_LATENCY, pe_read_request, select_registered
from ..memory_ports import NO_READ_DURING_WRITE
from ..network import Network
from ..pe import ProcessingElement
from ..protocol import HostMem
from .endpoints import LinkReceiver, LinkSender, link_word_layout

__all__ = ["FpgaNode", "network_item", "peers_of"]


def network_item(config, layouts):
    """Layout of what the on-chip network and the links carry: updates (GraVF-M) or messages (GraVF)."""
    return layouts.net_message if config.arch == "gravf" else layouts.net_update


def peers_of(fpga, fpgas):
    """The other FPGAs, in the order of this FPGA's link ports."""
    return [j for j in range(fpgas) if j != fpga]


class FpgaNode(wiring.Component):
    """The top of FPGA ``fpga``: PEs ``fpga * p .. fpga * p + p - 1`` and one link port per peer.

    Parameters
    ----------
    config : gravfm.hw.SystemConfig
    layouts : gravfm.hw.layouts.KernelLayouts
        (:class:`gravfm.hw.gravf.GravfLayouts` for ``config.arch == "gravf"``).
    geometry : gravfm.hw.system.HostGeometry
    fpga : int
    kernels : list of dict
        Kernels of this FPGA's PEs.
    receiver_depth : int
        Depth of each parity FIFO of a link receiver.
    use_filter : bool
        Send an update only to the peers that host a neighbour of its sender (GraVF-M; the
        GraVF baseline sends each message to its destination's FPGA only, and has no filter).

    Ports
    -----
    host_* , start : In
        The host interface of docs/interfaces.md §5 with global PE indices; this FPGA takes
        the writes and answers the reads of its own PEs. ``host_wr_mem = 4`` fills the filter
        (GraVF-M).
    host_rd_data : Out
        Zero unless the read PE is on this FPGA.
    done : Out(1)
        Every local PE has detected termination.
    superstep : Out(32)
        Round of this FPGA's first PE.
    link_out, link_in : Out / In (array of ``fpgas - 1`` streams of link words)
        Port ``k`` talks to FPGA ``peers_of(fpga, fpgas)[k]``.
    """

    def __init__(self, *, config, layouts, geometry, fpga, kernels, receiver_depth, use_filter=True):
        self._config = config
        self._layouts = layouts
        self._geometry = geometry
        self._fpga = fpga
        self._kernels = kernels
        self._receiver_depth = receiver_depth
        self._use_filter = use_filter
        links = config.fpgas - 1
        word = stream.Signature(link_word_layout(network_item(config, layouts)))
        super().__init__({
            "host_wr_en": In(1),
            "host_wr_pe": In(geometry.pe_bits),
            "host_wr_mem": In(3),
            "host_wr_addr": In(geometry.addr_bits),
            "host_wr_data": In(geometry.wr_data_bits),
            "host_rd_pe": In(geometry.pe_bits),
            "host_rd_mem": In(3),
            "host_rd_addr": In(geometry.addr_bits),
            "host_rd_data": Out(geometry.rd_data_bits),
            "start": In(1),
            "done": Out(1),
            "superstep": Out(32),
            "link_out": Out(word).array(links),
            "link_in": In(word).array(links),
        })

    def elaborate(self, platform):
        m = Module()
        config, layouts, geometry = self._config, self._layouts, self._geometry
        p, links = config.pes_per_fpga, config.fpgas - 1
        first = self._fpga * p
        gravf = config.arch == "gravf"
        item = network_item(config, layouts)
        if gravf:
            from ..gravf import GravfNetwork, GravfProcessingElement

            network = GravfNetwork(layout=item, pes=p, local_bits=config.local_bits,
                                   fifo_depth=config.network_fifo_depth, link_fifo_depth=config.link_fifo_depth,
                                   fpga=self._fpga, fpgas=config.fpgas)
            pe_class, pe_out, pe_in = GravfProcessingElement, "messages_out", "messages_in"
        else:
            network = Network(layout=item, pes=p, remotes=links, fifo_depth=config.network_fifo_depth,
                              link_fifo_depth=config.link_fifo_depth, count_bits=config.count_bits,
                              lanes=config.update_lanes)
            pe_class, pe_out, pe_in = ProcessingElement, "updates_out", "updates_in"
        m.submodules.network = network

        words = {}
        done = 1
        for i in range(p):
            g = first + i
            pe = pe_class(layouts=layouts, config=config, pe_index=g, kernels=self._kernels[i],
                          addr_bits=geometry.addr_bits, wr_data_bits=geometry.wr_data_bits,
                          rd_data_bits=geometry.rd_data_bits)
            m.submodules[f"pe{g}"] = pe
            wiring.connect(m, getattr(pe, pe_out), network.src[i])
            wiring.connect(m, network.dst[i], getattr(pe, pe_in))
            m.d.comb += [
                pe.start.eq(self.start),
                pe.terminated.eq(network.terminated[i]),
                pe.waiting.eq(network.waiting[i]),
                pe.wr_en.eq(self.host_wr_en & (self.host_wr_pe == g)),
                pe.wr_mem.eq(self.host_wr_mem),
                pe.wr_addr.eq(self.host_wr_addr),
                pe.wr_data.eq(self.host_wr_data),
            ]
            pe_read_request(m, g, top=self, pe=pe)
            words[g] = pe.rd_data
            if i == 0:
                m.d.comb += self.superstep.eq(pe.round)
            done = done & network.terminated[i]
        m.d.comb += self.done.eq(done)
        m.d.comb += self.host_rd_data.eq(
            select_registered(m, words, self.host_rd_pe, cycles=HOST_READ_LATENCY, name="rd_selected"))

        if not gravf and links:
            self._filter(m, network, first)
        self._senders(m, network)
        for k in range(links):
            receiver = LinkReceiver(layout=item, depth=self._receiver_depth)
            m.submodules[f"link_receiver{k}"] = receiver
            wiring.connect(m, wiring.flipped(self.link_in[k]), receiver.i)
            wiring.connect(m, receiver.o, network.remote_in[k])
        return m

    def _filter(self, m, network, first):
        """The neighbor filter (written by the host, mem 4): one bit per (local PE, peer, vertex).

        Local PE ``i``'s FIFO towards peer ``k`` carries only ``i``'s own vertices, so each pair
        gets its own one-bit memory with one read port, looked up by the update entering that FIFO.
        """
        config = self._config
        p, local_bits = config.pes_per_fpga, config.local_bits
        peers = peers_of(self._fpga, config.fpgas)
        for i in range(p):
            for k, peer in enumerate(peers):
                index = i * len(peers) + k
                if not self._use_filter:
                    m.d.comb += network.link_keep[index].eq(1)
                    continue
                bits = memory.Memory(shape=1, depth=1 << local_bits, init=[], attrs=NO_READ_DURING_WRITE)
                m.submodules[f"filter{i}_{k}"] = bits
                write, read = bits.write_port(), bits.read_port(domain="comb")
                m.d.comb += [
                    write.en.eq(self.host_wr_en & (self.host_wr_mem == HostMem.FILTER)
                                & (self.host_wr_pe == first + i)),
                    write.addr.eq(self.host_wr_addr[:local_bits]),
                    write.data.eq(self.host_wr_data[peer]),
                    read.addr.eq(network.link_sender[index][:local_bits]),
                    network.link_keep[index].eq(read.data),
                ]

    def _senders(self, m, network):
        """One sender per outgoing link."""
        config = self._config
        for k in range(config.fpgas - 1):
            sender = LinkSender(layout=network_item(config, self._layouts), local_pes=config.pes_per_fpga)
            m.submodules[f"link_sender{k}"] = sender
            wiring.connect(m, network.remote_out[k], sender.i)
            wiring.connect(m, sender.o, wiring.flipped(self.link_out[k]))
