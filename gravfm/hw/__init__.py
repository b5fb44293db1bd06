"""Amaranth gateware of gravfm: the host protocol, layouts, kernels, PEs, networks and the FPGA top.

Nothing here names an algorithm: the system is built from a :class:`SystemConfig` holding any
:class:`gravfm.algorithms.Algorithm`, whose kernels are checked against the layouts when the
:class:`FpgaTop` is constructed.

Layers (docs/architecture.md):

* :mod:`.protocol` — the host protocol's constants (no Amaranth); :mod:`.host` — the host ports;
* :mod:`.config`, :mod:`.layouts`, :mod:`.kernels` (port signatures and checks),
  :mod:`.verilog` (kernels in Verilog with the paper's port names);
* building blocks: :mod:`.stream_fifo`, :mod:`.skid_buffer`, :mod:`.lane_queue`, :mod:`.fp`;
* :mod:`.pe` — the PE shell and its units (scatter, gather, hazard, apply) and the two
  dataflow cores (:mod:`.pe.cores`); :mod:`.network` (GraVF-M broadcast) and :mod:`.gravf`
  (GraVF unicast); :mod:`.arch` — the two architectures as objects;
* :mod:`.fpga` — the one FPGA top; :mod:`.link` — link ends and link model;
  :mod:`.multi` — several FPGA tops joined by link models (one simulation model).
"""

import importlib

#: Public names and the submodule that defines each. Loaded on first use, so that
#: :mod:`gravfm.hw.protocol` (no Amaranth) can be imported without building any hardware.
_EXPORTS = {
    "SystemConfig": "config", "COUNTER_NAMES": "protocol", "KernelLayouts": "layouts",
    "FpgaTop": "fpga", "HostGeometry": "host", "architecture": "arch", "gather_signature": "kernels",
    "apply_signature": "kernels", "scatter_signature": "kernels", "build_kernels": "kernels",
    "verilog_kernel": "verilog", "VerilogKernel": "verilog",
}
__all__ = list(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
