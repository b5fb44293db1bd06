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
(Broadcaster, Endpoint, RoundMerger, Network), :mod:`.protocol` (host protocol, no Amaranth), :mod:`.system` (the top).
"""

import importlib

#: Public names and the submodule that defines each. Loaded on first use, so that
#: :mod:`gravfm.hw.protocol` (no Amaranth) can be imported without building any hardware.
_EXPORTS = {
    "SystemConfig": "config", "COUNTER_NAMES": "protocol", "KernelLayouts": "layouts",
    "System": "system", "HostGeometry": "system", "gather_signature": "kernels",
    "apply_signature": "kernels", "scatter_signature": "kernels", "build_kernels": "kernels",
    "verilog_kernel": "verilog_kernel", "VerilogKernel": "verilog_kernel",
}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
