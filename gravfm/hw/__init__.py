"""Amaranth gateware of gravfm: layouts, the kernel interface, PE, network and the system top.

Nothing here names an algorithm: the system is built from a :class:`SystemConfig` holding any
:class:`gravfm.algorithms.Algorithm`, whose kernels are checked against
:class:`KernelLayouts` when :class:`System` is constructed.

Architecture of one FPGA (GraVF-M, receiver-side scatter)::

          host_wr_* / host_rd_* / start / done
                        │
      ┌─────────────────┴──────────────────────────────────────────────┐
      │ PE g:  updates ─▶ scatter (edge index ─▶ address generator ─▶   │
      │        edge array ─▶ scatter kernel) ─▶ messages ─▶ gather      │
      │        (hazard CAM + parking slot, gather kernel, vertex memory)│
      │        ─▶ apply (full or touched-only pass, apply kernel)       │
      │        ─▶ update queue ─────────────┐                            │
      └─────────────────────────────────────┼───────────────────────────┘
                                            ▼
      network: Broadcaster per source ─▶ FIFO per (source, destination) ─▶ Endpoint per PE
      (round-robin among sources still in the round; floating barrier with per-source counts
      and "sent any"; termination detected by every endpoint on its own)

Modules: :mod:`.config` (SystemConfig), :mod:`.layouts`, :mod:`.kernels` (port signatures and
checks), :mod:`.verilog_kernel` (kernels in Verilog with the paper's port names), :mod:`.pe`
(ScatterUnit, GatherUnit, HazardUnit, ApplyUnit, ProcessingElement), :mod:`.network`
(Broadcaster, Endpoint, RoundMerger, Network), :mod:`.counters`, :mod:`.system` (the top).
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
