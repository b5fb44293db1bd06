"""The top of a system of several FPGAs joined by simulated links, with one host interface.

The ports are those of :class:`gravfm.hw.System` (docs/interfaces.md §5): the global PE index
selects a PE on any FPGA, so both simulator back-ends drive a multi-FPGA system unchanged.
``host_wr_mem = 4`` loads the neighbor filter (bit ``f`` of the word of a vertex: FPGA ``f``
hosts one of its out-neighbours). Link counters are read with ``host_rd_mem = 4``, ``host_rd_pe``
= any PE of the sending FPGA, address ``3 * k + c`` for its ``k``-th outgoing link (to
``peers_of(fpga)[k]``) and ``c`` = 0 items, 1 bits carried, 2 cycles link-bound.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...errors import ConfigError
from ..config import SystemConfig
from ..kernels import build_kernels
from ..layouts import KernelLayouts
from ..system import HostGeometry
from .fpga import FpgaNode, peers_of
from .link import LinkModel
from .link_config import LinkConfig

__all__ = ["MultiFpgaSystem", "LINK_COUNTER_NAMES", "LINK_COUNTERS_MEM"]

#: Counters of each outgoing link, address ``3 * k + index``.
LINK_COUNTER_NAMES = ("items", "bits", "bound_cycles")
LINK_COUNTERS_MEM = 4


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
        self.layouts = KernelLayouts(config.algorithm, config)
        self.geometry = geometry = HostGeometry(config, self.layouts)
        if config.fpgas > geometry.wr_data_bits:
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
        """Bits one update costs on a link: sender id + update payload (the model's m_update)."""
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

    def elaborate(self, platform):
        m = Module()
        config, n, p = self.config, self.config.fpgas, self.config.pes_per_fpga
        depth = max(self.link_config.reorder_window + 1, config.network_fifo_depth)
        nodes = []
        for f in range(n):
            node = FpgaNode(config=config, layouts=self.layouts, geometry=self.geometry, fpga=f,
                            kernels=self._kernels[f * p:(f + 1) * p], receiver_depth=depth,
                            use_filter=self.use_filter)
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

        rd_pe_q = Signal.like(self.host_rd_pe)
        rd_mem_q = Signal.like(self.host_rd_mem)
        rd_addr_q = Signal.like(self.host_rd_addr)
        m.d.sync += [rd_pe_q.eq(self.host_rd_pe), rd_mem_q.eq(self.host_rd_mem),
                     rd_addr_q.eq(self.host_rd_addr)]
        with m.If(rd_mem_q == LINK_COUNTERS_MEM):
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

    def _read_link_counters(self, m, rd_pe, rd_addr):
        n, p = self.config.fpgas, self.config.pes_per_fpga
        for (a, b), link in self.links.items():
            k = peers_of(a, n).index(b)
            in_fpga = (rd_pe >= a * p) & (rd_pe < (a + 1) * p)
            values = (link.items, link.items * self.item_bits, link.link_bound)
            for c, value in enumerate(values):
                with m.If(in_fpga & (rd_addr == 3 * k + c)):
                    m.d.comb += self.host_rd_data.eq(value)
