"""What the board layer needs of a generated FPGA top: its Verilog and its port figures.

:class:`BoardDesign` is taken once from an :class:`~gravfm.hw.FpgaTop` (Amaranth elaborates and
exports it); the SoC builders and the driver use only this record, so nothing in the board layer
re-elaborates the top or knows its Amaranth classes.
"""

from dataclasses import dataclass

from amaranth.hdl import Shape

from ..errors import ConfigError
from ..hw.host import HostGeometry
from ..hw.unused import silence_unused
from ..sim.verilator_build import export_verilog
from .window import RecordLayout, design_id

__all__ = ["BoardDesign", "TOP_MODULE"]

#: Verilog module name of the top inside a SoC.
TOP_MODULE = "gravfm_top"


@dataclass(frozen=True)
class BoardDesign:
    """One FPGA's top, ready for a SoC.

    Attributes
    ----------
    verilog : str
        The top's Verilog (module :data:`TOP_MODULE`; kernels in Verilog appended).
    geometry : gravfm.hw.host.HostGeometry
    pes : int
        PEs of the top.
    memory : dict or None
        Edges off chip: ``{"addr_bits", "word_bits", "id_bits"}`` of each PE's AXI4 read port.
    fpgas : int
        FPGAs of the system the top belongs to (one board carries one FPGA's top).
    link_bits : int
        Several FPGAs: width of a link port's frame; ``link_check``: the top's link check.
    """

    verilog: str
    geometry: HostGeometry
    pes: int
    memory: dict | None
    fpgas: int
    link_bits: int = 0
    link_check: str = "off"

    @classmethod
    def of(cls, top):
        """The design of an :class:`~gravfm.hw.FpgaTop`, or of the FPGAs of a system of several
        (one top serves every board: the host gives each its identity). Exports its Verilog."""
        if hasattr(top, "tops"):   # a system: its first top is exported, the SoCs are the rest of it
            silence_unused(top)
            top = top.tops[0]
        config = top.config
        link_bits = 0
        if config.fpgas > 1:
            if not top.link_check.retransmit:
                raise ConfigError(f"a board link cannot hold back its sender: {config.fpgas} FPGAs on boards need "
                                  f"--link-check retransmit (its replays recover what the wire drops), "
                                  f"not {top.link_check.mode}")
            link_bits = Shape.cast(top.link_out[0].payload.shape()).width
        verilog = "\n".join((export_verilog(top, name=TOP_MODULE), *top.verilog_sources))
        memory = None
        if config.pe.offchip:
            memory = {"addr_bits": config.pe.memory_addr_bits, "word_bits": config.pe.memory_word_bits,
                      "id_bits": config.pe.memory_id_bits}
        return cls(verilog=verilog, geometry=top.geometry, pes=config.pes_per_fpga, memory=memory,
                   fpgas=config.fpgas, link_bits=link_bits, link_check=top.link_check.mode)

    @property
    def identity(self):
        """The 32-bit design id the SoC carries (:func:`gravfm.board.window.design_id`)."""
        return design_id(self.verilog)

    @property
    def layout(self):
        return RecordLayout.of(self.geometry)

    def describe(self):
        """JSON-able figures of the design (the build's JSON, the driver's checks)."""
        g = self.geometry
        return {"design_id": self.identity, "pes": self.pes, "fpgas": self.fpgas, "link_bits": self.link_bits,
                "link_check": self.link_check,
                "edges": "offchip" if self.memory else "onchip", "memory_port": self.memory,
                "host": {"pe_bits": g.pe_bits, "addr_bits": g.addr_bits, "wr_data_bits": g.wr_data_bits,
                         "rd_data_bits": g.rd_data_bits}}
