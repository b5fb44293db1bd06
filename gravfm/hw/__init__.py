"""Amaranth gateware of gravfm: layouts, kernels' interface, PE, network and the system top.

Nothing here names an algorithm: the system is built from a :class:`SystemConfig` holding any
:class:`gravfm.algorithms.Algorithm`.
"""

from .config import SystemConfig
from .counters import COUNTER_NAMES
from .kernels import apply_signature, build_kernels, gather_signature, scatter_signature
from .layouts import KernelLayouts
from .system import HostGeometry, System
from .verilog_kernel import VerilogKernel, verilog_kernel

__all__ = ["SystemConfig", "COUNTER_NAMES", "KernelLayouts", "System", "HostGeometry",
           "gather_signature", "apply_signature", "scatter_signature", "build_kernels",
           "verilog_kernel", "VerilogKernel"]
