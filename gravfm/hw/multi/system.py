"""The top of a system of several FPGAs joined by simulated links, with one host interface.

The ports are those of :class:`gravfm.hw.System` (docs/interfaces.md §5): the global PE index
selects a PE on any FPGA, so both simulator back-ends drive a multi-FPGA system unchanged.
``host_wr_mem = 4`` loads the neighbor filter (bit ``f`` of the word of a vertex: FPGA ``f``
hosts one of its out-neighbours). Link counters are read with ``host_rd_mem = 4``, ``host_rd_pe``
= any PE of the sending FPGA, address ``6 * k + c`` for its ``k``-th outgoing link (to
``peers_of(fpga)[k]``) and ``c`` indexing :data:`LINK_COUNTER_NAMES`: 0 items into the link,
1 bits carried, 2 cycles link-bound, 3 items out of the link (delivered to the receiving FPGA),
4 barriers into the link, 5 barriers out of it. The last three tell a stalled run which link
holds what (``gravfm.run`` names the stuck link).

With ``config.arch == "gravf"`` the FPGAs are GraVF-baseline FPGAs: a link carries one message
per edge whose destination lives on the peer (``m_message`` bits: destination id, sender id,
message), no neighbor filter.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...errors import ConfigError
from ..config import SystemConfig
from ..host_read import delayed
from ..kernels import build_kernels
from ..protocol import HOST_READ_LATENCY
from ..protocol import LINK_COUNTER_NAMES, HostReadMem, link_counter_address
from ..layouts import KernelLayouts
from ..system import HostGeometry
from .fpga import FpgaNode, peers_of
from .link import LinkModel
from .link_config import LinkConfig

__all__ = ["MultiFpgaSystem"]


class MultiFpgaSystem(wiring.Component):
    """``config.fpgas`` FPGA tops, every pair joined by two :class:`LinkModel` s.

    Parameters
    ----------
    config : SystemConfig
        ``fpgas`` >= 1 (one FPGA gives a system without links).
    link : LinkConfig, optional
        The links (default: ``LinkConfig()``, one item per cycle, two cycles of latency).
    use_filter : bool
        Send updates only to FPGAs hosting a neighbour of the sender (the neighbor filter).

    Attributes
    ----------
    links : dict of (int, int) to LinkModel
        The link from FPGA ``a`` to FPGA ``b``, after elaboration.

    Ports
    -----
    As :class:`gravfm.hw.System`.
    """

    def __init__(self, config, *, link=None, use_filter=True):
        # A system that failed to construct must not also warn that it was never used.
        self._MustUse__silence = True
        if not isinstance(config, SystemConfig):
            raise TypeError(f"MultiFpgaSystem needs a SystemConfig, not {type(config).__name__}")
        link = LinkConfig() if link is None else link
        if not isinstance(link, LinkConfig):
            raise TypeError(f"link must be a LinkConfig, not {type(link).__name__}")
        self.config = config
        self.link_config = link
        self.use_filter = use_filter
        if config.arch == "gravf":
            from ..gravf import GravfLayouts

            self.layouts = GravfLayouts(config.algorithm, config)
        else:
            self.layouts = KernelLayouts(config.algorithm, config)
        self.geometry = geometry = HostGeometry(config, self.layouts)
        # The link counters must be addressable.
        geometry.addr_bits = max(geometry.addr_bits,
                                 (len(LINK_COUNTER_NAMES) * max(config.fpgas - 1, 1) - 1).bit_length())
        if config.arch == "gravfm" and config.fpgas > geometry.wr_data_bits:
            raise ConfigError(f"{config.fpgas} FPGAs: the filter word does not fit the "
                              f"{geometry.wr_data_bits}-bit host data")
        self._kernels = [build_kernels(config.algorithm, self.layouts) for _ in range(config.total_pes)]
        self.links = {}
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
        })
        self._MustUse__silence = False

    @property
    def item_bits(self):
        """Bits one item costs on a link: GraVF-M sender id + update payload (the model's
        m_update); GraVF destination id + sender id + message payload (the model's m_message)."""
        if self.config.arch == "gravf":
            return 2 * self.config.vertexid_bits + self.layouts.message.size
        return self.config.vertexid_bits + self.layouts.update.size

    @property
    def verilog_sources(self):
        """Verilog texts of kernels written in Verilog (one per module)."""
        texts = {}
        for kernels in self._kernels:
            for kernel in kernels.values():
                source = getattr(kernel, "verilog_source", None)
                if source is not None:
                    texts[kernel.module] = source
        return tuple(texts.values())

    def fpga_top(self, fpga):
        """The top of FPGA ``fpga`` alone, link ports included (what one board would hold)."""
        config, p = self.config, self.config.pes_per_fpga
        depth = max(self.link_config.reorder_window + 1, config.network_fifo_depth)
        return FpgaNode(config=config, layouts=self.layouts, geometry=self.geometry, fpga=fpga,
                        kernels=self._kernels[fpga * p:(fpga + 1) * p], receiver_depth=depth,
                        use_filter=self.use_filter)

    def elaborate(self, platform):
        m = Module()
        n = self.config.fpgas
        nodes = []
        self._link_ends = {}
        for f in range(n):
            node = self.fpga_top(f)
            m.submodules[f"fpga{f}"] = node
            nodes.append(node)
            for name in ("host_wr_en", "host_wr_pe", "host_wr_mem", "host_wr_addr", "host_wr_data",
                         "host_rd_pe", "host_rd_mem", "host_rd_addr", "start"):
                m.d.comb += getattr(node, name).eq(getattr(self, name))
        for a in range(n):
            for k, b in enumerate(peers_of(a, n)):
                link = LinkModel(shape=nodes[a].link_out[k].payload.shape(), config=self.link_config,
                                 item_bits=self.item_bits,
                                 seed=self.link_config.seed * 64 + a * n + b)
                m.submodules[f"link{a}_{b}"] = link
                self.links[a, b] = link
                wiring.connect(m, nodes[a].link_out[k], link.i)
                wiring.connect(m, link.o, nodes[b].link_in[peers_of(b, n).index(a)])
                self._count_link_ends(m, a, b, link)

        rd_pe_q, rd_mem_q, rd_addr_q = (delayed(m, getattr(self, f"host_rd_{name}"), HOST_READ_LATENCY,
                                                name=f"rd_{name}") for name in ("pe", "mem", "addr"))
        with m.If(rd_mem_q == HostReadMem.LINK_COUNTERS):
            self._read_link_counters(m, rd_pe_q, rd_addr_q)
        with m.Else():
            read = 0
            for node in nodes:
                read = read | node.host_rd_data
            m.d.comb += self.host_rd_data.eq(read)
        done = 1
        for node in nodes:
            done = done & node.done
        m.d.comb += [self.done.eq(done), self.superstep.eq(nodes[0].superstep)]
        return m

    def _count_link_ends(self, m, a, b, link):
        """Items leaving link ``a -> b``, barriers entering and leaving it (for the diagnosis)."""
        ends = {"delivered": (link.o, False), "barriers_sent": (link.i, True),
                "barriers_delivered": (link.o, True)}
        counters = {}
        for name, (port, barriers_only) in ends.items():
            counters[name] = counter = Signal(64, name=f"link{a}_{b}_{name}")
            fired = port.valid & port.ready
            if barriers_only:
                fired = fired & port.payload.item.barrier
            with m.If(fired):
                m.d.sync += counter.eq(counter + 1)
        self._link_ends[a, b] = counters

    def _read_link_counters(self, m, rd_pe, rd_addr):
        n, p = self.config.fpgas, self.config.pes_per_fpga
        for (a, b), link in self.links.items():
            k = peers_of(a, n).index(b)
            in_fpga = (rd_pe >= a * p) & (rd_pe < (a + 1) * p)
            values = {"items": link.items, "bits": link.items * self.item_bits, "bound_cycles": link.link_bound,
                      **self._link_ends[a, b]}
            for c, name in enumerate(LINK_COUNTER_NAMES):
                with m.If(in_fpga & (rd_addr == link_counter_address(k, c))):
                    m.d.comb += self.host_rd_data.eq(values[name])
