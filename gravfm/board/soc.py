"""SoCs around a generated FPGA top: LiteX's, with the top as one more core.

:func:`add_gravfm` is the one call every SoC makes (the litex-boards way: a board = platform +
BaseSoC + a few ``add_*`` calls): it adds the :class:`~gravfm.board.core.GravfmCore` with its
Verilog, its bus window at :data:`GRAVFM_BASE`, its clock domain from the caller, and (edges off
chip) one LiteDRAM port per PE. :class:`SimSoC` is the whole-SoC simulation: no CPU, UARTBone
over the simulator's TCP serial, a DDR3 model behind the real LiteDRAM controller. The boards
are in :mod:`gravfm.board.boards`.
"""

from functools import partial
from pathlib import Path
from types import SimpleNamespace

from litedram import modules as dram_modules
from litedram.frontend.dma import LiteDRAMDMAWriter
from litedram.phy.model import SDRAMPHYModel, get_sdram_phy_settings
from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.build.sim.config import SimConfig
from litex.soc.cores.uart import RS232PHYModel, UARTBone
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCMini
from litex.soc.interconnect.csr import CSRStatus, CSRStorage
from litex.gen import LiteXModule
from migen import ClockDomain, If, Signal
from migen.genlib.io import CRG
from migen.genlib.resetsync import AsyncResetSynchronizer

from ..hw.protocol import peers_of
from .core import GravfmCore, add_edge_ports
from .design import TOP_MODULE
from .link import SerwbPhy, SimWire
from .window import DESIGN_DOMAIN, GRAVFM_BASE, MAIN_RAM_BASE, WINDOW_BYTES

__all__ = ["add_gravfm", "SimSoC", "SimRack", "RACK_UART_MODULE", "SIM_MODULES", "GRAVFM_BASE", "MAIN_RAM_BASE",
           "sim_config", "SIM_DRAM_MODULE", "SIM_DRAM_BITS",
           "PcieImageLoader", "add_pcie_image_loader"]

#: The simulated DDR3 chip: 16 bits wide, 4 phases per controller cycle = the top's 128-bit word.
SIM_DRAM_MODULE = "MT41K128M16"
SIM_DRAM_BITS = 16
#: The simulation's nominal clock (UARTBone's inactivity timer counts it: 100 ms of it).
SIM_CLOCK_HZ = int(100e6)


def add_gravfm(soc, design, *, verilog_path, image_base=0, link_phys=None):
    """Add ``design`` (a :class:`~gravfm.board.design.BoardDesign`) to ``soc``, whose design clock
    domain (:data:`~gravfm.board.window.DESIGN_DOMAIN`) the caller has made; its Verilog was written
    to ``verilog_path``. Several FPGAs: ``link_phys``, per peer a factory of its link's PHY
    (:meth:`gravfm.board.boards.SerwbPins.phys`, :meth:`~gravfm.board.boards.TransceiverLanes.phys`)."""
    soc.platform.add_source(str(verilog_path))
    links = None
    if design.fpgas > 1:
        links = {"phys": link_phys, "frame_bits": design.link_bits, "checked": design.link_check != "off"}
    soc.gravfm = core = GravfmCore(top_name=TOP_MODULE, geometry=design.geometry, pes=design.pes,
                                   memory=design.memory, identity=design.identity, image_base=image_base,
                                   links=links)
    soc.bus.add_slave("gravfm_window", core.bus, SoCRegion(origin=GRAVFM_BASE, size=WINDOW_BYTES, cached=False))
    if design.memory:
        add_edge_ports(soc, core)
    return core


def _sim_io(boards):
    """The simulation's pads: both clocks and a serial line per board."""
    return [
        ("sys_clk", 0, Pins(1)),
        ("sys_rst", 0, Pins(1)),
        ("design_clk", 0, Pins(1)),
        *[("serial", k,
           Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)), Subsignal("source_data", Pins(8)),
           Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)), Subsignal("sink_data", Pins(8)))
          for k in range(boards)],
    ]


class _SimClocks(LiteXModule):
    """``sys`` from the simulator's clocker, ``design`` from a clocker of its own (the same
    frequency), reset together: every crossing of the board SoC is exercised."""

    def __init__(self, platform):
        self.crg = CRG(platform.request("sys_clk"))
        self.cd_design = ClockDomain(DESIGN_DOMAIN)
        self.comb += self.cd_design.clk.eq(platform.request("design_clk"))
        self.specials += AsyncResetSynchronizer(self.cd_design, self.crg.cd_sys.rst)


class SimSoC(SoCMini):
    """The whole-SoC simulation (Verilator through LiteX's simulator).

    No CPU: the DDR3 model needs no levelling, and the host drives everything over UARTBone.
    The design's clock is a clocker of its own (the same frequency as ``sys``), so every
    crossing of the board SoC is exercised.

    Parameters
    ----------
    design : gravfm.board.design.BoardDesign
    verilog_path : path-like
    dram_init : list of int
        32-bit words given to the DDR3 model at build time: markers by which the simulation
        finds each bank's memory file and puts the edge image there (:mod:`gravfm.board.sim`).
    platform : SimPlatform, optional
        One board of a :class:`SimRack`: the rack's platform and clocks (serial line ``index``).
    index : int
        The board's place in the rack.
    wire_latency : int
        Several FPGAs: cycles of each incoming wire (:class:`~gravfm.board.link.SimWire`, CSRs
        ``wire{k}_*``), whose input the rack joins to the peer's ``link_tx[k]``.
    """

    def __init__(self, design, *, verilog_path, dram_init, platform=None, index=0, wire_latency=16):
        if platform is None:   # a board alone: the clocks are its own
            platform = SimPlatform("SIM", _sim_io(1))
            self.clocks = _SimClocks(platform)
        SoCMini.__init__(self, platform, clk_freq=SIM_CLOCK_HZ, ident="gravfm whole-SoC simulation",
                         ident_version=False)
        self.uartbone_phy = RS232PHYModel(platform.request("serial", index))
        self.uartbone = UARTBone(phy=self.uartbone_phy, clk_freq=SIM_CLOCK_HZ, address_width=32)
        self.bus.add_master(name="uartbone", master=self.uartbone.wishbone)

        module = getattr(dram_modules, SIM_DRAM_MODULE)(SIM_CLOCK_HZ, "1:4")
        settings = get_sdram_phy_settings(memtype=module.memtype, data_width=SIM_DRAM_BITS, clk_freq=SIM_CLOCK_HZ)
        self.sdrphy = SDRAMPHYModel(module=module, settings=settings, clk_freq=SIM_CLOCK_HZ, init=list(dram_init))
        # No L2 cache: the host's writes must reach the DRAM that the PEs read around the bus.
        self.add_sdram("sdram", phy=self.sdrphy, module=module, origin=MAIN_RAM_BASE, l2_cache_size=0)
        pads = self._wires(design.fpgas - 1, latency=wire_latency, seed=index)
        add_gravfm(self, design, verilog_path=verilog_path, link_phys=[partial(SerwbPhy, p) for p in pads])

    def _wires(self, peers, *, latency, seed):
        """Per peer the link's pads: ``tx`` goes to the rack, ``rx`` comes from wire ``k``."""
        self.link_tx, pads = [], []
        for k in range(peers):
            wire = SimWire(latency=latency, seed=seed * 64 + k)
            setattr(self, f"wire{k}", wire)
            tx, rx = Signal(), Signal()
            self.comb += rx.eq(wire.o)
            self.link_tx.append(tx)
            pads.append(SimpleNamespace(tx=tx, rx=rx))
        return pads


class SimRack(LiteXModule):
    """Several board SoCs in one simulation, one per FPGA, joined by :class:`~gravfm.board.link.SimWire`:
    link ``k`` of board ``a`` (to ``peers_of(a)[k]``) reaches board ``b`` on the wire of its link to ``a``.
    Each board has its own DRAM model, serial line and CSR bus (the same map on each)."""

    def __init__(self, design, *, verilog_path, dram_inits, wire_latency):
        self.platform = platform = SimPlatform("SIM", _sim_io(design.fpgas))
        self.clocks = _SimClocks(platform)
        self.boards = [SimSoC(design, verilog_path=verilog_path, dram_init=init, platform=platform, index=a,
                              wire_latency=wire_latency) for a, init in enumerate(dram_inits)]
        for a, board in enumerate(self.boards):
            setattr(self, f"board{a}", board)
        for a, board in enumerate(self.boards):
            for k, b in enumerate(peers_of(a, design.fpgas)):
                wire = getattr(self.boards[b], f"wire{peers_of(b, design.fpgas).index(a)}")
                self.comb += wire.i.eq(board.link_tx[k])


#: The simulator module of a rack's serial lines (:file:`sim_modules/gravfm_uart`): LiteX's
#: ``serial2tcp`` keeps its clock-edge state in a static, so of two lines only one would move.
RACK_UART_MODULE = "gravfm_uart"
SIM_MODULES = Path(__file__).parent / "sim_modules"


def sim_config(*, tcp_ports):
    """The simulator's run-time configuration: both clocks, board ``k``'s serial line on ``tcp_ports[k]``."""
    config = SimConfig()
    config.add_clocker("sys_clk", freq_hz=SIM_CLOCK_HZ)
    config.add_clocker("design_clk", freq_hz=SIM_CLOCK_HZ)
    module = "serial2tcp" if len(tcp_ports) == 1 else RACK_UART_MODULE
    for k, port in enumerate(tcp_ports):
        config.add_module(module, ("serial", k), args={"port": port})
    return config


class PcieImageLoader(LiteXModule):
    """The edge image from host memory into DRAM over PCIe: LitePCIe's first DMA channel's
    host-to-board stream written to consecutive DRAM words from ``base`` (CSR; writing it restarts
    the address). ``words`` counts the words written, which the driver compares with what it sent."""

    def __init__(self, dma, port):
        self.base = CSRStorage(32, description="First DRAM word (of the port's width) of the image")
        self.words = CSRStatus(32, description="Words written since base was set")
        self.writer = writer = LiteDRAMDMAWriter(port, fifo_depth=16)
        address = Signal(32)
        self.comb += [
            writer.sink.valid.eq(dma.source.valid),
            writer.sink.address.eq(address),
            writer.sink.data.eq(dma.source.data),
            dma.source.ready.eq(writer.sink.ready),
        ]
        self.sync += [
            If(self.base.re, address.eq(self.base.storage), self.words.status.eq(0)).Elif(
                writer.sink.valid & writer.sink.ready, address.eq(address + 1),
                self.words.status.eq(self.words.status + 1)),
        ]


def add_pcie_image_loader(soc):
    """:class:`PcieImageLoader` on the SoC's ``pcie_dma0`` (the board target's ``add_pcie``)."""
    dma = soc.pcie_dma0
    port = soc.sdram.crossbar.get_port(mode="write", data_width=len(dma.source.data))
    soc.image_loader = PcieImageLoader(dma, port)
