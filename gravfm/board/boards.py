"""The boards gravfm builds for: a litex-boards target, the gravfm core added, a bitstream or a project.

A :class:`Board` names the litex-boards target module that makes its SoC (CRG, DRAM PHY and
controller, host bridge pins) and what gravfm needs of it: the device's size (for the fit check),
the DRAM's size, the host transport, and whether an open flow builds it here. Every board SoC has
a soft CPU (VexRiscv, ``minimal``) whose BIOS initialises and levels the DRAM at power-up, and the
host bridge beside it: UARTBone on the board's USB UART with the CPU's console as a crossover UART
(ECP5 boards), or PCIe (Xilinx boards: LitePCIe's BAR bridge, and a DMA channel that writes the
edge image into DRAM). The design's clock comes from the board's PLL.

A board that joins a rack names how its links may run (:attr:`Board.links`, the first the
default; ``--link NAME`` picks another): :class:`SerwbPins` (SERWB over a connector's pins, ECP5
boards), :class:`TransceiverLanes` (Xilinx serial transceivers, one lane per peer) or
:class:`DcuLane` (one ECP5 SERDES channel: a pair of boards). Each kind checks a rack against the
board, lists its links for the build's figures and makes their PHYs (LiteX imported only there).
"""

from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["Board", "BOARDS", "get_board", "SerwbPins", "Lane", "TransceiverLanes", "DcuLane"]


@dataclass(frozen=True)
class SerwbPins:
    """Links on LiteICLink's SERWB PHY over ``connector``'s pins (:class:`gravfm.board.link.SerwbPhy`):
    link ``k``'s ``tx`` on pin ``2k``, its ``rx`` on pin ``2k + 1``; ``name``: what ``--link`` calls it."""

    name: str
    connector: str

    @property
    def summary(self):
        return f"SERWB over {self.connector}'s pins"

    def check(self, board, links):
        """Every rack of ``--fpgas`` up to 4 fits a connector's eight pins."""

    def rows(self, board, links):
        """The links as the build records them: ``{"link", "tx", "rx"}`` (``connector:pin``)."""
        return [{"link": k, "tx": f"{self.connector}:{2 * k}", "rx": f"{self.connector}:{2 * k + 1}"}
                for k in range(links)]

    def phys(self, soc, board, links):
        """Per link, a factory of its PHY (:func:`gravfm.board.link.pin_phys`)."""
        from .link import pin_phys  # deferred: the board extra (LiteX)

        return pin_phys(soc.platform, [(row["tx"], row["rx"]) for row in self.rows(board, links)])

    def link_config(self, config, board, design_clk_hz):
        """The link the top's link check is planned for (:func:`gravfm.board.serwb.serwb_link_of`)."""
        from .serwb import serwb_link_of  # deferred: Amaranth (the link check's planner)
        from .sim import WIRE_LATENCY_CYCLES  # deferred: numpy and the build cache

        return serwb_link_of(config, wire_latency=WIRE_LATENCY_CYCLES)

    def figures(self, board, links):
        """What the build records of the PHY (a bit per ``sys`` cycle, 40 line bits per word)."""
        from .serwb import LINE_BITS_PER_WORD, PACKET_OVERHEAD_WORDS  # deferred: Amaranth (serwb plans the check)

        return {"phy": "LiteICLink SERWB generic PHY (8b10b, one pin each way)", "lanes": links,
                "line_rate_gbps": board.sys_clk_hz / 1e9, "encoding": "8b10b", "word_bits": 32,
                "words_per_sys_cycle": 1 / LINE_BITS_PER_WORD,
                "link_gbps": 32 * board.sys_clk_hz / LINE_BITS_PER_WORD / 1e9,
                "framing": f"a frame of b bits: ceil(b/32) words + {PACKET_OVERHEAD_WORDS} (preamble, port/length)"}


class _LaneLinks:
    """What the link kinds on transceiver lanes share: the link check's plan and the build's
    figures follow from the lane's :class:`~gravfm.board.lanes.LaneRate` (:attr:`RATE`, its name
    in :mod:`gravfm.board.lanes`) and the PHY (:attr:`phy`)."""

    RATE = "GT_LANE"

    def link_config(self, config, board, design_clk_hz):
        """The link the top's link check is planned for (:func:`gravfm.board.lanes.lane_link_of`)."""
        from . import lanes  # deferred: Amaranth (the link check's planner)

        return lanes.lane_link_of(config, sys_hz=board.sys_clk_hz, design_hz=design_clk_hz,
                                  rate=getattr(lanes, self.RATE))

    def figures(self, board, links):
        """What the build records of the PHY (:func:`gravfm.board.lanes.lane_figures`)."""
        from . import lanes  # deferred: Amaranth (lanes plan the check)

        return {**lanes.lane_figures(phy=self.phy, rate=getattr(lanes, self.RATE), sys_hz=board.sys_clk_hz,
                                     lanes=links), "cabling": self.cabling}


@dataclass(frozen=True)
class Lane:
    """One transceiver lane of a board, as its litex-boards platform names it.

    Attributes
    ----------
    name : str
        What the wiring calls it (``SFP+ cage 0``, ``QSFP28 cage 1 lane 0``).
    resource : tuple of (str, int)
        The platform's record with ``txp``/``txn``/``rxp``/``rxn`` (the lane's pins are read there).
    index : int
        The lane within that record.
    refclk : tuple of (str, int)
        The platform's record (``p``/``n``) of the lane's MGT reference clock.
    enable : tuple of (str, int) or None
        A pin to drive high for the lane to transmit (an SFP+ cage's ``tx_disable_n``).
    """

    name: str
    resource: tuple
    index: int
    refclk: tuple
    enable: tuple | None = None


@dataclass(frozen=True)
class TransceiverLanes(_LaneLinks):
    """Links on a board's serial transceivers (:class:`gravfm.board.transceiver.TransceiverPhy`):
    link ``k`` on ``lanes[k]``, one lane per peer, so a board joins racks of up to ``len(lanes) + 1``
    FPGAs (``--fpgas`` stops at 4).

    Attributes
    ----------
    name : str
        What ``--link`` calls them.
    family : str
        ``gth`` (UltraScale, GTHE3) or ``gty`` (UltraScale+, GTYE4).
    cabling : str
        What joins two lanes (for the docs and the build's figures).
    lanes : tuple of Lane
    """

    name: str
    family: str
    cabling: str
    lanes: tuple

    @property
    def summary(self):
        return f"{self.family.upper()} transceivers, {len(self.lanes)} lanes ({self.cabling})"

    def check(self, board, links):
        """Refuse, in one line, a rack that needs more links per board than the board has lanes."""
        if links > len(self.lanes):
            raise ConfigError(f"{board.name}: {links + 1} FPGAs need {links} links per board, it has "
                              f"{len(self.lanes)} transceiver lanes ({', '.join(lane.name for lane in self.lanes)}): "
                              f"at most {len(self.lanes) + 1} FPGAs")

    def rows(self, board, links):
        """The links as the build records them: lane, pins and reference clock (from the platform)."""
        from .transceiver import lane_rows  # deferred: the board extra (litex-boards' platform)

        return lane_rows(board, self.lanes[:links])

    def phys(self, soc, board, links):
        """Per link, a factory of its PHY (:func:`gravfm.board.transceiver.lane_phys`)."""
        from .transceiver import lane_phys  # deferred: the board extra (LiteX, LiteICLink)

        return lane_phys(soc, board, self.family, self.lanes[:links])

    @property
    def phy(self):
        return f"LiteICLink {self.family.upper()} (8b10b, clock aligner, buffers bypassed)"


@dataclass(frozen=True)
class DcuLane(_LaneLinks):
    """One link on a channel of an ECP5-5G DCU (:class:`gravfm.board.ecp5_serdes.EcpSerdesPhy`): a
    board with one such lane joins a pair of boards, no more.

    Attributes
    ----------
    name : str
        What ``--link`` calls it.
    connector : str
        Where the lane comes out (``SATA connector``).
    resource : tuple of (str, int)
        The platform's record with the lane's pins (``tx_p``/``tx_n``, ``rx_p``/``rx_n``) and the
        DCU's reference-clock input (``clk_p``/``clk_n``).
    dual, channel : int
        The DCU and its channel.
    cabling : str
        What joins two lanes.
    """

    name: str
    connector: str
    resource: tuple
    dual: int
    channel: int
    cabling: str

    RATE = "ECP5_LANE"
    phy = "LiteICLink SerDesECP5 (8b10b in the fabric, the DCU's comma aligner, words aligned in the fabric)"

    @property
    def summary(self):
        return f"ECP5 SERDES (DCU{self.dual} channel {self.channel}) on the {self.connector}, 2 FPGAs"

    def check(self, board, links):
        """Refuse, in one line, a rack of more than two boards."""
        if links > 1:
            raise ConfigError(f"{board.name}: --link {self.name} joins 2 FPGAs, not {links + 1}: the board has one "
                              f"{self.connector} lane (DCU{self.dual} channel {self.channel}); {links + 1} FPGAs need "
                              f"{links} links per board: use --link {board.links[0].name}")

    def rows(self, board, links):
        """The link as the build records it: lane, pins and reference clock (from the platform)."""
        from .ecp5_serdes import dcu_rows  # deferred: the board extra (LiteX, litex-boards' platform)

        return dcu_rows(board, self)

    def phys(self, soc, board, links):
        """The link's PHY factory (:func:`gravfm.board.ecp5_serdes.dcu_phys`)."""
        from .ecp5_serdes import dcu_phys  # deferred: the board extra (LiteX, LiteICLink)

        return dcu_phys(soc, board, self)


def _sfp(k):
    return Lane(f"SFP+ cage {k}", ("sfp", k), 0, refclk=("si570_refclk", 0), enable=("sfp_tx_disable_n", k))


def _qsfp28(cage, lane):
    return Lane(f"QSFP28 cage {cage} lane {lane}", ("qsfp28", cage), lane, refclk=("qsfp_156mhz_clock", cage))


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
    links : tuple of SerwbPins, TransceiverLanes or DcuLane
        Several FPGAs: how the links may run, the first by default (module docstring); empty: no
        links built for it.
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
    links: tuple = ()

    @property
    def link(self):
        """The default link kind (None: no links)."""
        return self.links[0] if self.links else None

    def links_for(self, fpgas, kind=None):
        """The board's link kind ``kind`` (a name; None: the default) for a rack of ``fpgas`` (None
        for one FPGA); a board without links, an unknown kind, or too few links for the rack, is
        refused in one line."""
        if fpgas == 1:
            return None
        if self.link is None:
            known = "; ".join(f"{b.name}: {b.link.summary}" for b in BOARDS.values() if b.link)
            raise ConfigError(f"{self.name}: links between boards are not built for it yet (boards with links: "
                              f"{known})")
        link = self.link if kind is None else next((k for k in self.links if k.name == kind), None)
        if link is None:
            raise ConfigError(f"{self.name} has no link {kind!r} (its links: "
                              f"{'; '.join(f'{k.name}: {k.summary}' for k in self.links)})")
        link.check(self, fpgas - 1)
        return link


BOARDS = {board.name: board for board in (
    Board("ecpix5", "LambdaConcept ECPIX-5 (ECP5 LFE5UM5G-85F, 512 MiB DDR3, FT2232 UART)",
          "lambdaconcept_ecpix5", (("device", "85F"),), sys_clk_hz=75e6, design_clk_hz=75e6,
          synth_target="ecp5-85", dram_bytes=512 << 20, transport="uart", open_flow=True,
          links=(SerwbPins("pmod", "pmod0"),
                 DcuLane("sata", "SATA connector", ("sata", 0), dual=1, channel=0,
                         cabling="a SATA cable crossing its two pairs (one board's TX to the other's RX)"))),
    Board("ulx3s", "Radiona ULX3S (ECP5 LFE5U-85F speed 6, 32 MiB SDRAM, FT231X UART)",
          "radiona_ulx3s", (("device", "LFE5U-85F"), ("revision", "2.0"), ("sdram_module_cls", "MT48LC16M16")),
          sys_clk_hz=50e6, design_clk_hz=50e6, synth_target="ecp5-85-6", dram_bytes=32 << 20,
          transport="uart", open_flow=True),
    Board("kcu105", "Xilinx KCU105 (Kintex UltraScale KU040, the paper's family; 2 GiB DDR4, PCIe x4 gen3)",
          "xilinx_kcu105", (("with_pcie", True),), sys_clk_hz=125e6, design_clk_hz=200e6,
          synth_target="xcu", dram_bytes=2 << 30, transport="pcie", open_flow=False,
          links=(TransceiverLanes("sfp", "gth", "SFP+ direct-attach copper cable, cage to cage", (_sfp(0), _sfp(1))),)),
    Board("alveo-u280", "Xilinx Alveo U280 (Virtex UltraScale+ XCU280; DDR4 channel 0, PCIe x4 gen3)",
          "xilinx_alveo_u280", (("with_pcie", True), ("ddram_channel", 0)), sys_clk_hz=150e6,
          design_clk_hz=200e6, synth_target=None, dram_bytes=16 << 30, transport="pcie", open_flow=False,
          # Link k on cage k % 2: three boards join with whole QSFP28 cables (lane 0 of each);
          # a fourth needs the lanes fanned out (docs/boards.md).
          links=(TransceiverLanes("qsfp28", "gty", "QSFP28 direct-attach copper cable, cage to cage",
                                  tuple(_qsfp28(cage, lane) for lane in range(4) for cage in range(2))),)),
)}


def get_board(name):
    """The :class:`Board` called ``name``; an unknown name is a one-line error listing the boards."""
    try:
        return BOARDS[name]
    except KeyError:
        raise ConfigError(f"unknown board {name!r} (known: {', '.join(BOARDS)})") from None
