"""The top of one FPGA, for every architecture and FPGA count: PEs, network, link ends, host interface.

The architecture (:mod:`gravfm.hw.arch`, from ``config.arch``) supplies the network and each
PE's dataflow core; everything else is the same for both. With one FPGA this is the whole
system; with several, every FPGA carries the same top (as every board of a real system carries
the same bitstream): the host tells each its index (``HostMem.FPGA``), from which its PEs know
their global indices and GraVF's routers the way to each PE. The system around the tops
(:class:`gravfm.hw.multi.MultiFpgaSystem`, or the compiled simulator's harness) routes the host
bus by FPGA and joins link port ``k`` of FPGA ``f`` to FPGA ``peers_of(f)[k]``. A GraVF-M FPGA's
updates for a peer pass the neighbor filter (host-written, ``HostMem.FILTER``) in front of that
link.

The graph is not part of the RTL: before ``start`` the host writes vertex states, edge indices,
edge arrays and PE registers (:mod:`gravfm.hw.protocol`); after ``done`` it reads states,
counters and the per-round log.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..errors import ConfigError
from .arch import architecture
from .axi import memory_port_signature
from .config import SystemConfig
from .host import HostGeometry, host_ports, load_port_signature
from .host_read import pe_read_request, select_registered
from .kernels import build_kernels
from .link.ends import build_link_ends, end_counter_read, link_port_layout
from .link_check import LinkCheck
from .memory_ports import no_read_during_write
from .pe import ProcessingElement
from .pe.gather_forward import forwards
from .protocol import HOST_READ_LATENCY, FpgaRegister, HostMem
from .unused import silence_unused

__all__ = ["FpgaTop"]


class FpgaTop(wiring.Component):
    """The top of any FPGA of the system: ``p`` PEs, the network and one link port per peer.

    Parameters
    ----------
    config : SystemConfig
    receiver_depth : int, optional
        Depth of each parity FIFO of a link receiver (default ``config.network.fifo_depth``).
    use_filter : bool
        GraVF-M: send an update only to the peers that host a neighbour of its sender.
    link_check : gravfm.hw.link_check.LinkCheck, optional
        The link check in the link ends (default: off).
    load_ports : bool
        A write port per PE beside the host bus (``load``), for the compiled simulator.

    Attributes
    ----------
    config, architecture, layouts, geometry

    Ports
    -----
    host_*, start, done, superstep
        The host interface (:func:`gravfm.hw.host.host_ports`) with this FPGA's local PE indices
        (for one FPGA, the global ones); a write to ``HostMem.FPGA`` sets the FPGA's index.
    link_out, link_in : Out / In (array of ``fpgas - 1`` streams of link words), several FPGAs only
        Port ``k`` talks to the ``k``-th other FPGA in increasing order (``peers_of``).
    mem : Out (array of ``pes_per_fpga`` AXI4 read ports), off-chip edges only
        Local PE ``i``'s edge reads; all of them face the FPGA's one memory.
        Port ``k`` talks to the ``k``-th other FPGA in increasing order (``peers_of``); with the
        link check, frames (:func:`gravfm.hw.link.ends.link_port_layout`).
    link_error : Out(1), with the link check
        A link receiver latched an error (host reads name it: ``error_in``); the run must stop.
    load : In (array of ``pes_per_fpga`` PE write ports), ``load_ports`` only
        Local PE ``i``'s own write port (:func:`~gravfm.hw.host.load_port_signature`), taken
        before the host bus when both write: the compiled simulator loads every PE in the same
        cycle (a 64-PE FPGA's millions of writes otherwise take one cycle each). The top's own
        codes (``HostMem.FILTER``, ``HostMem.FPGA``) come over the host bus only. A board's top
        has no such ports; the hardware that runs is the same.

    Raises
    ------
    gravfm.errors.ConfigError
        A kernel's ports do not match the algorithm's layouts, or the filter word does not fit.
    """

    def __init__(self, config, *, receiver_depth=None, use_filter=True, link_check=None, load_ports=False):
        # A top that failed to construct must not also warn that it was never used.
        silence_unused(self)
        if not isinstance(config, SystemConfig):
            raise TypeError(f"FpgaTop needs a SystemConfig, not {type(config).__name__}")
        self.config = config
        self.architecture = arch = architecture(config.arch)
        self.layouts = layouts = arch.layouts(config.algorithm, config)
        self.geometry = geometry = HostGeometry.of(config, layouts, pes=config.pes_per_fpga)
        if arch.filters_links and config.fpgas - 1 > geometry.wr_data_bits:
            raise ConfigError(f"{config.fpgas} FPGAs: the filter word does not fit the "
                              f"{geometry.wr_data_bits}-bit host data")
        self._receiver_depth = receiver_depth or config.network.fifo_depth
        self._use_filter = use_filter
        self.link_check = LinkCheck() if link_check is None else link_check
        self.load_ports = load_ports
        # Built (and checked) now, so a bad kernel fails at construction.
        self._kernels = [build_kernels(config.algorithm, layouts) for _ in range(config.pes_per_fpga)]
        members = host_ports(geometry)
        if config.fpgas > 1:
            word = stream.Signature(link_port_layout(arch.network_item(layouts), self.link_check,
                                                     config.network.link_lanes))
            members["link_out"] = Out(word).array(config.fpgas - 1)
            members["link_in"] = In(word).array(config.fpgas - 1)
            if self.link_check.enabled:
                members["link_error"] = Out(1)
        if config.pe.offchip:
            members["mem"] = Out(memory_port_signature(config.pe)).array(config.pes_per_fpga)
        if load_ports:
            members["load"] = In(load_port_signature(geometry)).array(config.pes_per_fpga)
        super().__init__(members)
        silence_unused(self, False)

    def with_load_ports(self):
        """This top again, with a write port per PE (``load``) for the compiled simulator's
        parallel load; ``self`` is then never elaborated."""
        silence_unused(self)
        return FpgaTop(self.config, receiver_depth=self._receiver_depth, use_filter=self._use_filter,
                       link_check=self.link_check, load_ports=True)

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
        fpga_index, pe_indices = self._identity(m)
        m.submodules.network = network = arch.network(config=config, layouts=layouts, fpga_index=fpga_index)
        if config.network.hub_path:
            self._hub_senders(m, network)
        words = {}
        done = 1
        for i in range(config.pes_per_fpga):
            core = arch.pe_core(config=config, layouts=layouts, pe_index=pe_indices[i],
                                kernel=self._kernels[i]["scatter"])
            pe = ProcessingElement(layouts=layouts, config=config, pe_index=pe_indices[i], kernels=self._kernels[i],
                                   core=core, geometry=self.geometry)
            m.submodules[f"pe{i}"] = pe
            wiring.connect(m, pe.net_out, network.src[i])
            wiring.connect(m, network.dst[i], pe.net_in)
            m.d.comb += [
                pe.start.eq(self.start),
                pe.terminated.eq(network.terminated[i]),
                pe.waiting.eq(network.waiting[i]),
            ]
            self._pe_write(m, pe, i)
            if config.pe.offchip:
                wiring.connect(m, pe.mem, wiring.flipped(self.mem[i]))
            pe_read_request(m, i, top=self, pe=pe)
            words[i] = pe.rd_data
            if i == 0:
                m.d.comb += self.superstep.eq(pe.round)
            done = done & network.terminated[i]
        # The PEs' words are registers; their selects are delayed to match (gravfm.hw.host_read).
        read = select_registered(m, words, self.host_rd_pe, cycles=HOST_READ_LATENCY, name="rd_selected")
        m.d.comb += [self.done.eq(done), self.host_rd_data.eq(read)]
        if config.fpgas > 1:
            self._link_ends(m, network)
        return m

    def _pe_write(self, m, pe, i):
        """Local PE ``i``'s write port: the host bus, or (``load_ports``) its own port when that writes."""
        host = (self.host_wr_en & (self.host_wr_pe == i), self.host_wr_mem, self.host_wr_addr, self.host_wr_data)
        ports = (pe.wr_en, pe.wr_mem, pe.wr_addr, pe.wr_data)
        if not self.load_ports:
            m.d.comb += [port.eq(value) for port, value in zip(ports, host)]
            return
        own = self.load[i]
        m.d.comb += [port.eq(Mux(own.en, value, bus))
                     for port, value, bus in zip(ports, (own.en, own.mem, own.addr, own.data), host)]

    def _identity(self, m):
        """``(fpga_index, [global index of local PE i])``: registers the host loads
        (``HostMem.FPGA``), so that every FPGA of a system has the same top."""
        config = self.config
        p = config.pes_per_fpga
        fpga_index = Signal(range(config.fpgas), name="fpga_index")
        # One name for all: it is the PE's port name, and PEs with equal ports export as equal
        # modules, which the compiled simulator keeps once (gravfm.sim.shared_modules).
        pe_indices = [Signal(config.pe_bits, name="pe_index", init=i) for i in range(p)]
        written = (self.host_wr_en & (self.host_wr_mem == HostMem.FPGA)
                   & (self.host_wr_addr == FpgaRegister.INDEX))
        with m.If(written):
            index = self.host_wr_data[:len(fpga_index)]
            m.d.sync += fpga_index.eq(index)
            # A multiple of p plus a constant, computed once at load time, not in any datapath.
            m.d.sync += [pe_index.eq(index * p + i) for i, pe_index in enumerate(pe_indices)]
        return fpga_index, pe_indices

    def _hub_senders(self, m, network):
        """Each local PE's hub count (``FpgaRegister.HUB_SENDERS``, host-loaded with the graph)."""
        for i, port in enumerate(network.hub_senders):
            hubs = Signal.like(port, name=f"hub_senders{i}")
            with m.If(self.host_wr_en & (self.host_wr_mem == HostMem.FPGA) & (self.host_wr_pe == i)
                      & (self.host_wr_addr == FpgaRegister.HUB_SENDERS)):
                m.d.sync += hubs.eq(self.host_wr_data[:len(hubs)])
            m.d.comb += port.eq(hubs)

    def _link_ends(self, m, network):
        """One sender and one receiver per peer (:func:`~gravfm.hw.link.ends.build_link_ends`);
        GraVF-M's filter in front of each link's merger; with the link check, its error output
        and its counters on the host read path."""
        config, item = self.config, self.architecture.network_item(self.layouts)
        if self.architecture.filters_links:
            self._filter(m, network)
        failed, counters = build_link_ends(
            m, item_layout=item, local_pes=config.pes_per_fpga, receiver_depth=self._receiver_depth,
            check=self.link_check, start=self.start, done=self.done, remote_out=network.remote_out,
            remote_in=network.remote_in, link_out=self.link_out, link_in=self.link_in, lanes=config.network.link_lanes)
        if failed is not None:
            m.d.comb += self.link_error.eq(failed)
            word, selected = end_counter_read(m, counters=counters, rd_mem=self.host_rd_mem,
                                              rd_addr=self.host_rd_addr)
            with m.If(selected):
                m.d.comb += self.host_rd_data.eq(word)

    def _filter(self, m, network):
        """The neighbor filter: one bit per (local PE, link, vertex).

        Local PE ``i``'s FIFO towards link ``k`` carries only ``i``'s own vertices, so each pair
        gets its own one-bit memory with one read port, looked up by the update entering that FIFO.
        Bit ``k`` of a filter word is link ``k``'s (the host orders the bits by this FPGA's links).
        The read is registered and the memory a block RAM (timing plan, rule 2), addressed from
        flip-flops beside the link FIFO (:func:`~gravfm.hw.network.filtered_link_fifo`).
        """
        config = self.config
        local_bits = config.pe.local_bits
        links = config.fpgas - 1
        for i in range(config.pes_per_fpga):
            for k in range(links):
                index = i * links + k
                if not self._use_filter:
                    m.d.comb += network.link_keep[index].eq(1)
                    continue
                bits = memory.Memory(shape=1, depth=1 << local_bits, init=[], attrs=no_read_during_write("block"))
                m.submodules[f"filter{i}_{k}"] = bits
                write, read = bits.write_port(), bits.read_port(domain="sync")
                m.d.comb += [
                    write.en.eq(self.host_wr_en & (self.host_wr_mem == HostMem.FILTER) & (self.host_wr_pe == i)),
                    write.addr.eq(self.host_wr_addr[:local_bits]),
                    write.data.eq(self.host_wr_data[k]),
                    read.en.eq(network.link_lookup[index]),
                    read.addr.eq(network.link_sender[index][:local_bits]),
                    network.link_keep[index].eq(read.data),
                ]
