"""The top of a system of several FPGAs joined by simulated links, with one host interface.

The ports are those of :class:`gravfm.hw.FpgaTop` (docs/host-interface.md) with global PE
indices: the system hands a write or read for global PE ``g`` to FPGA ``g // p`` as its local PE
``g % p``, as the compiled simulator's harness does for a system of separate FPGA models, so
both simulator back-ends drive a multi-FPGA system unchanged. The FPGAs carry identical tops;
each learns its index from a host write (``HostMem.FPGA``). ``host_wr_mem = 4`` loads the
neighbor filter (bit ``k`` of the word of a vertex: the FPGA's link ``k`` leads to one of its
out-neighbours). Link counters are read with ``host_rd_mem = 4``, ``host_rd_pe``
= any PE of the sending FPGA, address ``6 * k + c`` for its ``k``-th outgoing link (to
``peers_of(fpga)[k]``) and ``c`` indexing :data:`LINK_COUNTER_NAMES`: 0 items into the link,
1 bits carried, 2 cycles link-bound, 3 items out of the link (delivered to the receiving FPGA),
4 barriers into the link, 5 barriers out of it (these three tell a stalled run which link holds
what: the run report names the stuck link), 6-9 the faults the link injected; the link ends'
counters (:data:`~gravfm.hw.protocol.LINK_END_COUNTER_NAMES`) come from the FPGA itself.

With the link check on (``LinkConfig.check``) the FPGAs' link ends frame every item
(:mod:`gravfm.hw.link_check`); an item then costs the frame's added bits too, and a link error
raises ``done`` (the host reads the error words and reports the run as failed).

With the GraVF architecture (``config.arch``) the FPGAs are GraVF-baseline FPGAs: a link carries one message
per edge whose destination lives on the peer (``m_message`` bits: destination id, sender id,
message), no neighbor filter.
"""

from amaranth.hdl import Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..axi import memory_port_signature
from ..arch import architecture
from ..config import SystemConfig
from ..fpga import FpgaTop
from ..host import HostGeometry, host_ports
from ..host_read import delayed, select_registered
from ..link import LinkConfig, LinkModel
from ..link.frame import barrier_bit
from ..protocol import HOST_READ_LATENCY, LINK_MODEL_COUNTER_NAMES, HostReadMem, link_counter_address, peers_of
from ..unused import silence_unused

__all__ = ["MultiFpgaSystem"]


class MultiFpgaSystem(wiring.Component):
    """``config.fpgas`` FPGA tops, every pair joined by two :class:`~gravfm.hw.link.LinkModel` s.

    Parameters
    ----------
    config : SystemConfig
        ``fpgas`` >= 2.
    link : LinkConfig, optional
        The links (default: ``LinkConfig()``, one item per cycle, two cycles of latency).
    use_filter : bool
        Send updates only to FPGAs hosting a neighbour of the sender (the neighbor filter).

    Attributes
    ----------
    config, layouts, geometry, link_config
    tops : list of FpgaTop
        One per FPGA.
    links : dict of (int, int) to LinkModel
        The link from FPGA ``a`` to FPGA ``b``, after elaboration.

    Ports
    -----
    As :class:`gravfm.hw.FpgaTop` without the link ports.
    """

    def __init__(self, config, *, link=None, use_filter=True):
        # A system that failed to construct must not also warn that it was never used.
        silence_unused(self)
        if not isinstance(config, SystemConfig):
            raise TypeError(f"MultiFpgaSystem needs a SystemConfig, not {type(config).__name__}")
        link = LinkConfig() if link is None else link
        if not isinstance(link, LinkConfig):
            raise TypeError(f"link must be a LinkConfig, not {type(link).__name__}")
        link.check_fpgas(config.fpgas)
        self.config = config
        self.link_config = link
        self.use_filter = use_filter
        arch = architecture(config.arch)
        self.link_check = link.link_check(item_bits=arch.item_bits(config, arch.layouts(config.algorithm, config)))
        depth = max(link.reorder_window + 1, config.network.fifo_depth)
        self.tops = [FpgaTop(config, receiver_depth=depth, use_filter=use_filter, link_check=self.link_check)
                     for _ in range(config.fpgas)]
        for top in self.tops:   # used when this system is: only the system warns if it is not
            silence_unused(top)
        self.layouts = self.tops[0].layouts
        self.geometry = HostGeometry.of(config, self.layouts)
        self.links = {}
        members = host_ports(self.geometry)
        if config.pe.offchip:   # every FPGA's PE ports in turn: port f p + i is PE i of FPGA f
            members["mem"] = Out(memory_port_signature(config.pe)).array(config.total_pes)
        super().__init__(members)
        silence_unused(self, False)

    @property
    def item_bits(self):
        """Bits one item costs on a link: GraVF-M sender id + update payload (the model's
        m_update); GraVF destination id + sender id + message payload (the model's m_message);
        with the link check, plus the frame's sequence number, CRC (and acknowledgement)."""
        return self.tops[0].architecture.item_bits(self.config, self.layouts) + self.link_check.overhead_bits

    @property
    def gather_forwarding(self):
        """Whether the PEs forward gather results (the same on every FPGA)."""
        return self.tops[0].gather_forwarding

    @property
    def verilog_sources(self):
        """Verilog texts of kernels written in Verilog (one per module)."""
        return tuple(dict.fromkeys(text for top in self.tops for text in top.verilog_sources))

    def fpga_top(self, fpga):
        """The top of FPGA ``fpga`` alone, link ports included (what one board would hold)."""
        return self.tops[fpga]

    def elaborate(self, platform):
        m = Module()
        n = self.config.fpgas
        nodes = self.tops
        self._link_ends = {}
        p = self.config.pes_per_fpga
        rd_fpga = Signal(range(n), name="rd_fpga")
        for f, node in enumerate(nodes):
            m.submodules[f"fpga{f}"] = node
            for name in ("host_wr_mem", "host_wr_addr", "host_wr_data", "host_rd_mem", "host_rd_addr", "start"):
                m.d.comb += getattr(node, name).eq(getattr(self, name))
            # The host bus by FPGA: global PE g is local PE g - f p of FPGA f.
            m.d.comb += [node.host_wr_en.eq(self.host_wr_en & self._on_fpga(self.host_wr_pe, f)),
                         node.host_wr_pe.eq(self.host_wr_pe - f * p),
                         node.host_rd_pe.eq(self.host_rd_pe - f * p)]
            with m.If(self._on_fpga(self.host_rd_pe, f)):
                m.d.comb += rd_fpga.eq(f)
            if self.config.pe.offchip:
                for i in range(p):
                    wiring.connect(m, node.mem[i], wiring.flipped(self.mem[f * p + i]))
        for a in range(n):
            for k, b in enumerate(peers_of(a, n)):
                link = LinkModel(shape=nodes[a].link_out[k].payload.shape(), config=self.link_config,
                                 item_bits=self.item_bits, seed=self.link_config.link_seed(a, b, n),
                                 dead_after=self.link_config.dead_after(a, b))
                m.submodules[f"link{a}_{b}"] = link
                self.links[a, b] = link
                wiring.connect(m, nodes[a].link_out[k], link.i)
                wiring.connect(m, link.o, nodes[b].link_in[peers_of(b, n).index(a)])
                self._count_link_ends(m, a, b, link)

        done = 1
        for node in nodes:
            done = done & node.done
        if self.link_check.enabled:   # a link error ends the run: the host reads what it was
            for node in nodes:
                done = done | node.link_error
        self._link_values = self._link_counter_values(m, done)

        rd_pe_q, rd_mem_q, rd_addr_q = (delayed(m, getattr(self, f"host_rd_{name}"), HOST_READ_LATENCY,
                                                name=f"rd_{name}") for name in ("pe", "mem", "addr"))
        if self.link_check.enabled:
            # Every read goes to the FPGA (the link ends' counters are its own); the link models'
            # counters replace its answer.
            m.d.comb += self.host_rd_data.eq(self._fpga_read(m, nodes, rd_fpga))
            with m.If(rd_mem_q == HostReadMem.LINK_COUNTERS):
                self._read_link_counters(m, rd_pe_q, rd_addr_q)
        else:
            with m.If(rd_mem_q == HostReadMem.LINK_COUNTERS):
                self._read_link_counters(m, rd_pe_q, rd_addr_q)
            with m.Else():
                m.d.comb += self.host_rd_data.eq(self._fpga_read(m, nodes, rd_fpga))
        m.d.comb += [self.done.eq(done), self.superstep.eq(nodes[0].superstep)]
        return m

    @staticmethod
    def _fpga_read(m, nodes, rd_fpga):
        """The read data of the FPGA addressed."""
        return select_registered(m, {f: node.host_rd_data for f, node in enumerate(nodes)}, rd_fpga,
                                 cycles=HOST_READ_LATENCY, name="rd_fpga_selected")

    def _on_fpga(self, pe, fpga):
        """Whether global PE index ``pe`` (a signal) is one of FPGA ``fpga``'s PEs."""
        p = self.config.pes_per_fpga
        return (pe >= fpga * p) & (pe < (fpga + 1) * p)

    def _count_link_ends(self, m, a, b, link):
        """Items leaving link ``a -> b``, barriers entering and leaving it (for the diagnosis)."""
        ends = {"delivered": (link.o, False), "barriers_sent": (link.i, True),
                "barriers_delivered": (link.o, True)}
        counters = {}
        for name, (port, barriers_only) in ends.items():
            counters[name] = counter = Signal(64, name=f"link{a}_{b}_{name}")
            fired = port.valid & port.ready
            if barriers_only:   # the barrier flag of a link word, or of the word in a frame
                fired = fired & Value.cast(port.payload)[barrier_bit(port.payload.shape())]
            with m.If(fired):
                m.d.sync += counter.eq(counter + 1)
        self._link_ends[a, b] = counters

    def _link_counter_values(self, m, done):
        """Per link, the values of :data:`LINK_MODEL_COUNTER_NAMES`. With the link check they are
        held from the run's end (``done`` after ``start``) on, as the harness does: control frames
        keep flowing while the host reads."""
        values = {}
        finished = Signal(name="links_finished")
        if self.link_check.enabled:
            started = Signal(name="links_started")
            with m.If(self.start):
                m.d.sync += started.eq(1)
            with m.If(started & done):
                m.d.sync += finished.eq(1)
        for (a, b), link in self.links.items():
            counters = {"items": link.items, "bits": link.items * self.item_bits, "bound_cycles": link.link_bound,
                        **self._link_ends[a, b], "dropped": link.dropped, "duplicated": link.duplicated,
                        "flipped": link.flipped, "first_fault": link.first_fault}
            if self.link_check.enabled:
                for name, value in counters.items():
                    held = Signal(len(value), name=f"link{a}_{b}_{name}_held")
                    with m.If(~finished):
                        m.d.sync += held.eq(value)
                    counters[name] = Mux(finished, held, value)
            values[a, b] = counters
        return values

    def _read_link_counters(self, m, rd_pe, rd_addr):
        n = self.config.fpgas
        for (a, b), link in self.links.items():
            k = peers_of(a, n).index(b)
            in_fpga = self._on_fpga(rd_pe, a)
            values = self._link_values[a, b]
            for c, name in enumerate(LINK_MODEL_COUNTER_NAMES):
                with m.If(in_fpga & (rd_addr == link_counter_address(k, c))):
                    m.d.comb += self.host_rd_data.eq(values[name])
