"""The top of one FPGA, for every architecture and FPGA count: PEs, network, link ends, host interface.

The architecture (:mod:`gravfm.hw.arch`, from ``config.arch``) supplies the network and each
PE's dataflow core; everything else is the same for both. With one FPGA this is the whole
system; with several, :class:`gravfm.hw.multi.MultiFpgaSystem` joins one per FPGA by links.
A GraVF-M FPGA's updates for a peer pass the neighbor filter (host-written, ``HostMem.FILTER``)
in front of that link.

The graph is not part of the RTL: before ``start`` the host writes vertex states, edge indices,
edge arrays and PE registers (:mod:`gravfm.hw.protocol`); after ``done`` it reads states,
counters and the per-round log.
"""

from amaranth.hdl import Module
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..errors import ConfigError
from .arch import architecture
from .config import SystemConfig
from .host import HostGeometry, host_ports
from .host_read import pe_read_request, select_registered
from .kernels import build_kernels
from .link import LinkReceiver, LinkSender, link_word_layout
from .memory_ports import NO_READ_DURING_WRITE
from .pe import ProcessingElement
from .pe.gather_forward import forwards
from .protocol import HOST_READ_LATENCY, HostMem, peers_of

__all__ = ["FpgaTop"]


class FpgaTop(wiring.Component):
    """The top of FPGA ``fpga``: PEs ``fpga * p .. fpga * p + p - 1`` and one link port per peer.

    Parameters
    ----------
    config : SystemConfig
    fpga : int
        This FPGA's index (0 for a single FPGA).
    receiver_depth : int, optional
        Depth of each parity FIFO of a link receiver (default ``config.network.fifo_depth``).
    use_filter : bool
        GraVF-M: send an update only to the peers that host a neighbour of its sender.

    Attributes
    ----------
    config, architecture, layouts, geometry

    Ports
    -----
    host_*, start, done, superstep
        The host interface (:func:`gravfm.hw.host.host_ports`) with global PE indices: this FPGA
        takes the writes and answers the reads of its own PEs (``host_rd_data`` is zero for
        another FPGA's PE).
    link_out, link_in : Out / In (array of ``fpgas - 1`` streams of link words), several FPGAs only
        Port ``k`` talks to FPGA ``peers_of(fpga, fpgas)[k]``.

    Raises
    ------
    gravfm.errors.ConfigError
        A kernel's ports do not match the algorithm's layouts, or the filter word does not fit.
    """

    def __init__(self, config, *, fpga=0, receiver_depth=None, use_filter=True):
        # A top that failed to construct must not also warn that it was never used.
        self._MustUse__silence = True
        if not isinstance(config, SystemConfig):
            raise TypeError(f"FpgaTop needs a SystemConfig, not {type(config).__name__}")
        if not 0 <= fpga < config.fpgas:
            raise ConfigError(f"FPGA {fpga} does not exist in a system of {config.fpgas}")
        self.config = config
        self.architecture = arch = architecture(config.arch)
        self.layouts = layouts = arch.layouts(config.algorithm, config)
        self.geometry = geometry = HostGeometry.of(config, layouts)
        if arch.filters_links and config.fpgas > geometry.wr_data_bits:
            raise ConfigError(f"{config.fpgas} FPGAs: the filter word does not fit the "
                              f"{geometry.wr_data_bits}-bit host data")
        self.fpga = fpga
        self._receiver_depth = receiver_depth or config.network.fifo_depth
        self._use_filter = use_filter
        # Built (and checked) now, so a bad kernel fails at construction.
        self._kernels = [build_kernels(config.algorithm, layouts) for _ in range(config.pes_per_fpga)]
        members = host_ports(geometry)
        if config.fpgas > 1:
            word = stream.Signature(link_word_layout(arch.network_item(layouts)))
            members["link_out"] = Out(word).array(config.fpgas - 1)
            members["link_in"] = In(word).array(config.fpgas - 1)
        super().__init__(members)
        self._MustUse__silence = False

    @property
    def gather_forwarding(self):
        """Whether this top's PEs forward gather results (:func:`~gravfm.hw.pe.gather_forward.forwards`)."""
        return bool(self._kernels) and forwards(self.config, self._kernels[0]["gather"])

    @property
    def verilog_sources(self):
        """Verilog texts of kernels written in Verilog (one per module), to compile beside the top."""
        texts = {}
        for kernels in self._kernels:
            for kernel in kernels.values():
                source = getattr(kernel, "verilog_source", None)
                if source is not None:
                    texts[kernel.module] = source
        return tuple(texts.values())

    def elaborate(self, platform):
        m = Module()
        config, layouts, arch = self.config, self.layouts, self.architecture
        p, first = config.pes_per_fpga, self.fpga * config.pes_per_fpga
        m.submodules.network = network = arch.network(config=config, layouts=layouts, fpga=self.fpga)
        words = {}
        done = 1
        for i in range(p):
            g = first + i
            core = arch.pe_core(config=config, layouts=layouts, pe_index=g, kernel=self._kernels[i]["scatter"])
            pe = ProcessingElement(layouts=layouts, config=config, pe_index=g, kernels=self._kernels[i],
                                   core=core, geometry=self.geometry)
            m.submodules[f"pe{g}"] = pe
            wiring.connect(m, pe.net_out, network.src[i])
            wiring.connect(m, network.dst[i], pe.net_in)
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
        # The PEs' words are registers; their selects are delayed to match (gravfm.hw.host_read).
        read = select_registered(m, words, self.host_rd_pe, cycles=HOST_READ_LATENCY, name="rd_selected")
        m.d.comb += [self.done.eq(done), self.host_rd_data.eq(read)]
        if config.fpgas > 1:
            self._link_ends(m, network, first)
        return m

    def _link_ends(self, m, network, first):
        """One sender and one receiver per peer; GraVF-M's filter in front of each link's merger."""
        config, item = self.config, self.architecture.network_item(self.layouts)
        if self.architecture.filters_links:
            self._filter(m, network, first)
        for k in range(config.fpgas - 1):
            sender = LinkSender(layout=item, local_pes=config.pes_per_fpga)
            m.submodules[f"link_sender{k}"] = sender
            wiring.connect(m, network.remote_out[k], sender.i)
            wiring.connect(m, sender.o, wiring.flipped(self.link_out[k]))
            receiver = LinkReceiver(layout=item, depth=self._receiver_depth)
            m.submodules[f"link_receiver{k}"] = receiver
            wiring.connect(m, wiring.flipped(self.link_in[k]), receiver.i)
            wiring.connect(m, receiver.o, network.remote_in[k])

    def _filter(self, m, network, first):
        """The neighbor filter: one bit per (local PE, peer, vertex).

        Local PE ``i``'s FIFO towards peer ``k`` carries only ``i``'s own vertices, so each pair
        gets its own one-bit memory with one read port, looked up by the update entering that FIFO.
        """
        config = self.config
        p, local_bits = config.pes_per_fpga, config.pe.local_bits
        peers = peers_of(self.fpga, config.fpgas)
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
