"""Systems of several FPGAs: one :class:`gravfm.hw.FpgaTop` per FPGA joined by simulated links.

:func:`build_system` picks the top for a configuration (one FPGA: the FPGA top itself).
"""

from .build import build_system
from .system import MultiFpgaSystem

__all__ = ["build_system", "MultiFpgaSystem"]
