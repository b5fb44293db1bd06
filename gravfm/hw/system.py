"""The generated top of one FPGA: PEs, network and the host interface of docs/interfaces.md §5.

The graph is not part of the RTL: before ``start`` the host writes vertex states, edge indices,
edge arrays and PE registers through ``host_wr_*`` (one word per cycle); after ``done`` it reads
states, counters and the per-round log through ``host_rd_*``. A run begins from reset.

Host memory codes (``host_wr_mem``): 0 vertex state (addr = local index), 1 edge index
(addr = sender's hardware id; word = ``{start, length}``), 2 edge array (word = ``{dst, edge}``),
3 PE registers (addr 0 = number of local vertices), 4 neighbor filter (multi-FPGA; ignored here).
Read codes (``host_rd_mem``): 0 vertex state, 3 counters (addr = index in ``COUNTER_NAMES``),
5/6/7 round log (addr = round): messages scattered, updates emitted, cycle at which the round's
apply ended (counted from ``start``).
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..errors import ConfigError
from .config import SystemConfig
from .host_read import HOST_READ_LATENCY, pe_read_request, select_registered
from .kernels import build_kernels
from .layouts import KernelLayouts
from .network import Network
from .pe import ProcessingElement
from .protocol import COUNTER_BITS, COUNTER_NAMES, LOG_BITS

__all__ = ["System", "HostGeometry"]


class HostGeometry:
    """Widths of the host interface of a configuration (shared with the loader and back-ends).

    Attributes
    ----------
    pe_bits, addr_bits, wr_data_bits, rd_data_bits : int
    """

    def __init__(self, config, layouts):
        self.pe_bits = config.pe_bits
        self.addr_bits = max(config.vertexid_bits, config.edge_addr_bits,
                             config.local_bits, (config.max_rounds - 1).bit_length(),
                             (len(COUNTER_NAMES) - 1).bit_length(), 1)
        self.wr_data_bits = max(layouts.vertex.size, layouts.edge_index.size, layouts.edge_word.size,
                                config.local_bits + 1, 1)
        self.rd_data_bits = max(layouts.vertex.size, COUNTER_BITS, LOG_BITS)


class System(wiring.Component):
    """Top of a single-FPGA system.

    Parameters
    ----------
    config : SystemConfig

    Ports
    -----
    host_wr_en, host_wr_pe, host_wr_mem, host_wr_addr, host_wr_data : In
        Host write, one word per cycle, before ``start``.
    host_rd_pe, host_rd_mem, host_rd_addr : In; host_rd_data : Out
        Host read; data valid ``HOST_READ_LATENCY`` (gravfm.hw.host_read) cycles after the address.
    start : In(1)
        Pulse: every PE runs round 0's apply.
    done : Out(1)
        Every PE has detected termination.
    superstep : Out(32)
        Round of PE 0's apply (progress display).

    Raises
    ------
    gravfm.errors.ConfigError
        If a kernel's ports do not match the algorithm's layouts.
    """

    def __init__(self, config):
        if not isinstance(config, SystemConfig):
            raise TypeError(f"System needs a SystemConfig, not {type(config).__name__}")
        if config.fpgas != 1:
            self._MustUse__silence = True   # refused: no "never used" warning on top of the error
            raise ConfigError(f"System is one FPGA; for fpgas = {config.fpgas} build "
                              f"gravfm.hw.multi.MultiFpgaSystem")
        if config.arch != "gravfm":
            self._MustUse__silence = True
            raise ConfigError(f"System is the GraVF-M top; for arch = {config.arch!r} use "
                              f"gravfm.hw.multi.build_system")
        self.config = config
        self.layouts = KernelLayouts(config.algorithm, config)
        self.geometry = geometry = HostGeometry(config, self.layouts)
        # Build (and check) the kernels now, so a bad kernel fails at construction; a system
        # that failed to construct must not also warn that it was never used.
        self._MustUse__silence = True
        self._kernels = [build_kernels(config.algorithm, self.layouts) for _ in range(config.total_pes)]
        self._MustUse__silence = False
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
        config, layouts, geometry = self.config, self.layouts, self.geometry
        pes = config.total_pes
        m.submodules.network = network = Network(
            layout=layouts.net_update, pes=pes, remotes=0,
            fifo_depth=config.network_fifo_depth, count_bits=config.count_bits, lanes=config.update_lanes)
        words = {}
        done = 1
        for g in range(pes):
            pe = ProcessingElement(layouts=layouts, config=config, pe_index=g, kernels=self._kernels[g],
                                   addr_bits=geometry.addr_bits, wr_data_bits=geometry.wr_data_bits,
                                   rd_data_bits=geometry.rd_data_bits)
            m.submodules[f"pe{g}"] = pe
            wiring.connect(m, pe.updates_out, network.src[g])
            wiring.connect(m, network.dst[g], pe.updates_in)
            m.d.comb += [
                pe.start.eq(self.start),
                pe.terminated.eq(network.terminated[g]),
                pe.waiting.eq(network.waiting[g]),
                pe.wr_en.eq(self.host_wr_en & (self.host_wr_pe == g)),
                pe.wr_mem.eq(self.host_wr_mem),
                pe.wr_addr.eq(self.host_wr_addr),
                pe.wr_data.eq(self.host_wr_data),
            ]
            pe_read_request(m, g, top=self, pe=pe)
            words[g] = pe.rd_data
            if g == 0:
                m.d.comb += self.superstep.eq(pe.round)
            done = done & network.terminated[g]
        # The PEs' words are registers; their selects are delayed to match (gravfm.hw.host_read).
        read = select_registered(m, words, self.host_rd_pe, cycles=HOST_READ_LATENCY, name="rd_selected")
        m.d.comb += [self.done.eq(done), self.host_rd_data.eq(read)]
        return m
