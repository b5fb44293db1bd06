"""The boards gravfm builds for: a litex-boards target, the gravfm core added, a bitstream or a project.

A :class:`Board` names the litex-boards target module that makes its SoC (CRG, DRAM PHY and
controller, host bridge pins) and what gravfm needs of it: the device's size (for the fit check),
the DRAM's size, the host transport, and whether an open flow builds it here. Every board SoC has
a soft CPU (VexRiscv, ``minimal``) whose BIOS initialises and levels the DRAM at power-up, and the
host bridge beside it: UARTBone on the board's USB UART with the CPU's console as a crossover UART
(ECP5 boards), or PCIe (Xilinx boards: LitePCIe's BAR bridge, and a DMA channel that writes the
edge image into DRAM). The design's clock comes from the board's PLL.
"""

from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["Board", "BOARDS", "get_board"]


@dataclass(frozen=True)
class Board:
    """One board (module docstring).

    Attributes
    ----------
    name, description : str
    target : str
        The ``litex_boards.targets`` module.
    soc_options : tuple of (str, object)
        Keyword arguments of its ``BaseSoC`` (device, DRAM choice, PCIe).
    sys_clk_hz : float
        The SoC's clock (the DRAM controller's).
    design_clk_hz : float
        The design's clock asked of the PLL by default.
    synth_target : str or None
        The :data:`gravfm.synth.targets.TARGETS` entry of its FPGA (device size for the fit check).
    dram_bytes : int
    transport : str
        The host bridge: ``uart`` or ``pcie``.
    open_flow : bool
        Yosys + nextpnr + ecppack build its bitstream here; else a Vivado project is generated.
    soc_bram_blocks : int
        Block RAMs the SoC itself takes (BIOS ROM, SRAM, FIFOs), kept out of the design's share.
    link_connector : str or None
        Several FPGAs: the connector whose pins carry the SERWB links (link ``k``: ``tx`` on pin
        ``2k``, ``rx`` on pin ``2k + 1``; :mod:`gravfm.board.link`); None: no links built for it.
    """

    name: str
    description: str
    target: str
    soc_options: tuple
    sys_clk_hz: float
    design_clk_hz: float
    synth_target: str | None
    dram_bytes: int
    transport: str
    open_flow: bool
    soc_bram_blocks: int = 40
    link_connector: str | None = None

    def link_pins(self, links):
        """``[(tx, rx), ...]``: the connector pins of each link (``connector:index``)."""
        if self.link_connector is None:
            raise ConfigError(f"{self.name}: links between boards are not built for it yet (ECP5 boards over "
                              f"their PMOD pins are: {', '.join(b.name for b in BOARDS.values() if b.link_connector)})")
        return [(f"{self.link_connector}:{2 * k}", f"{self.link_connector}:{2 * k + 1}") for k in range(links)]


BOARDS = {board.name: board for board in (
    Board("ecpix5", "LambdaConcept ECPIX-5 (ECP5 LFE5UM5G-85F, 512 MiB DDR3, FT2232 UART)",
          "lambdaconcept_ecpix5", (("device", "85F"),), sys_clk_hz=75e6, design_clk_hz=75e6,
          synth_target="ecp5-85", dram_bytes=512 << 20, transport="uart", open_flow=True, link_connector="pmod0"),
    Board("ulx3s", "Radiona ULX3S (ECP5 LFE5U-85F speed 6, 32 MiB SDRAM, FT231X UART)",
          "radiona_ulx3s", (("device", "LFE5U-85F"), ("revision", "2.0"), ("sdram_module_cls", "MT48LC16M16")),
          sys_clk_hz=50e6, design_clk_hz=50e6, synth_target="ecp5-85-6", dram_bytes=32 << 20,
          transport="uart", open_flow=True),
    Board("kcu105", "Xilinx KCU105 (Kintex UltraScale KU040, the paper's family; 2 GiB DDR4, PCIe x4 gen3)",
          "xilinx_kcu105", (("with_pcie", True),), sys_clk_hz=125e6, design_clk_hz=200e6,
          synth_target="xcu", dram_bytes=2 << 30, transport="pcie", open_flow=False),
    Board("alveo-u280", "Xilinx Alveo U280 (Virtex UltraScale+ XCU280; DDR4 channel 0, PCIe x4 gen3)",
          "xilinx_alveo_u280", (("with_pcie", True), ("ddram_channel", 0)), sys_clk_hz=150e6,
          design_clk_hz=200e6, synth_target=None, dram_bytes=16 << 30, transport="pcie", open_flow=False),
)}


def get_board(name):
    """The :class:`Board` called ``name``; an unknown name is a one-line error listing the boards."""
    try:
        return BOARDS[name]
    except KeyError:
        raise ConfigError(f"unknown board {name!r} (known: {', '.join(BOARDS)})") from None
