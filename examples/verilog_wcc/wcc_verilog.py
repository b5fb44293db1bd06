"""WCC with its three kernels written in Verilog (the paper's Listings 1-3), plugged into gravfm.

The layouts, initial state and reference are WCC's; only the kernels change. The Verilog
modules are instantiated with the paper's port names (see :mod:`gravfm.hw.verilog`), so
this algorithm runs in the compiled (Verilator) back-end, not in Amaranth's simulator::

    gravfm run examples/verilog_wcc/wcc_verilog.py:WCC_VERILOG --graph tiny:grid
"""

import dataclasses
from pathlib import Path

from gravfm.algorithms import WCC
from gravfm.hw import verilog_kernel

HERE = Path(__file__).resolve().parent


def _widths(layouts):
    return {"W": layouts.vertexid_bits}


def _scatter_widths(layouts):
    return {"W": layouts.vertexid_bits, "N": layouts.scatter_in["num_neighbors"].shape.width}


WCC_VERILOG = dataclasses.replace(
    WCC,
    name="wcc_verilog",
    gather=verilog_kernel("gather", module="wcc_gather", source=HERE / "wcc_gather.v", parameters=_widths),
    apply=verilog_kernel("apply", module="wcc_apply", source=HERE / "wcc_apply.v", parameters=_widths),
    scatter=verilog_kernel("scatter", module="wcc_scatter", source=HERE / "wcc_scatter.v",
                           parameters=_scatter_widths),
)
