"""The generated top of one FPGA in the GraVF baseline architecture (``arch="gravf"``).

Same ports, host memory codes and read-back as :class:`gravfm.hw.System` (docs/interfaces.md
§5), except the edge storage: the edge index (mem 1) is addressed by the hardware id of one of
the PE's own vertices and lists its complete out-edges, and an edge word (mem 2) is
``{dst: vertexid_bits, edge fields...}`` (destination = hardware id). PEs exchange messages
through :class:`~gravfm.hw.gravf.network.GravfNetwork`.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...errors import ConfigError
from ..config import SystemConfig
from ..host_read import HOST_READ_LATENCY, pe_read_request, select_registered
from ..kernels import build_kernels
from ..system import HostGeometry
from .layouts import GravfLayouts
from .network import GravfNetwork
from .pe import GravfProcessingElement

__all__ = ["GravfSystem"]


class GravfSystem(wiring.Component):
    """Top of a single-FPGA GraVF-baseline system.

    Parameters
    ----------
    config : SystemConfig
        ``config.arch`` must be ``"gravf"`` and ``config.fpgas`` 1.

    Ports
    -----
    As :class:`gravfm.hw.System`.

    Raises
    ------
    gravfm.errors.ConfigError
        Several FPGAs, another architecture, or kernels that do not match the layouts.
    """

    def __init__(self, config):
        if not isinstance(config, SystemConfig):
            raise TypeError(f"GravfSystem needs a SystemConfig, not {type(config).__name__}")
        self._MustUse__silence = True
        if config.fpgas != 1:
            raise ConfigError(f"GravfSystem is the top of one FPGA; fpgas = {config.fpgas} needs "
                              f"gravfm.hw.multi.MultiFpgaSystem (build_system picks it)")
        if getattr(config, "arch", "gravf") != "gravf":
            raise ConfigError(f"GravfSystem builds arch 'gravf', the configuration says {config.arch!r}")
        self.config = config
        self.layouts = GravfLayouts(config.algorithm, config)
        self.geometry = geometry = HostGeometry(config, self.layouts)
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
        m.submodules.network = network = GravfNetwork(
            layout=layouts.net_message, pes=pes, local_bits=config.local_bits,
            fifo_depth=config.network_fifo_depth)
        words = {}
        done = 1
        for g in range(pes):
            pe = GravfProcessingElement(
                layouts=layouts, config=config, pe_index=g, kernels=self._kernels[g],
                addr_bits=geometry.addr_bits, wr_data_bits=geometry.wr_data_bits,
                rd_data_bits=geometry.rd_data_bits)
            m.submodules[f"pe{g}"] = pe
            wiring.connect(m, pe.messages_out, network.src[g])
            wiring.connect(m, network.dst[g], pe.messages_in)
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
        read = select_registered(m, words, self.host_rd_pe, cycles=HOST_READ_LATENCY, name="rd_selected")
        m.d.comb += [self.done.eq(done), self.host_rd_data.eq(read)]
        return m
