"""What the board layer needs of a generated FPGA top: its Verilog and its port figures.

:class:`BoardDesign` is taken once from an :class:`~gravfm.hw.FpgaTop` (Amaranth elaborates and
exports it); the SoC builders and the driver use only this record, so nothing in the board layer
re-elaborates the top or knows its Amaranth classes.
"""

from dataclasses import dataclass

from ..errors import ConfigError
from ..hw.host import HostGeometry
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
    """

    verilog: str
    geometry: HostGeometry
    pes: int
    memory: dict | None
    fpgas: int

    @classmethod
    def of(cls, top):
        """The design of an :class:`~gravfm.hw.FpgaTop` (exports its Verilog)."""
        config = top.config
        if config.fpgas > 1:
            raise ConfigError(f"a board carries one FPGA: a system of {config.fpgas} FPGAs needs the "
                              f"boards-joined layer (links on serial transceivers), not built yet")
        verilog = "\n".join((export_verilog(top, name=TOP_MODULE), *top.verilog_sources))
        memory = None
        if config.pe.offchip:
            memory = {"addr_bits": config.pe.memory_addr_bits, "word_bits": config.pe.memory_word_bits,
                      "id_bits": config.pe.memory_id_bits}
        return cls(verilog=verilog, geometry=top.geometry, pes=config.pes_per_fpga, memory=memory,
                   fpgas=config.fpgas)

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
        return {"design_id": self.identity, "pes": self.pes, "fpgas": self.fpgas,
                "edges": "offchip" if self.memory else "onchip", "memory_port": self.memory,
                "host": {"pe_bits": g.pe_bits, "addr_bits": g.addr_bits, "wr_data_bits": g.wr_data_bits,
                         "rd_data_bits": g.rd_data_bits}}
