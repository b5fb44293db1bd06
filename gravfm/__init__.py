"""gravfm: generate, simulate, verify and model vertex-centric graph accelerators for FPGAs.

The front door. Graphs, partitions, algorithms and the model are pure Python (no Amaranth import);
the hardware and simulation entry points (``RunOptions`` for :func:`gravfm.flow.run`, ``FpgaTop``, ``SystemConfig``)
load on first use. The contracts between the parts are in ``docs/interfaces.md``.
"""

import importlib

from .algorithms import REGISTRY, Algorithm, get_algorithm
from .errors import ConfigError, GraphFormatError, GravfmError, SpecError
from .graph import Graph, load_graph, tiny_graph
from .model import load_platform, predict
from .partition import gravfm_edge_stores, partition, partition_report
from .version import __version__

# Names served lazily from modules that import Amaranth, so `import gravfm` stays light.
_LAZY = {"RunOptions": "gravfm.flow", "run": "gravfm.flow", "FpgaTop": "gravfm.hw",
         "SystemConfig": "gravfm.hw", "build_system": "gravfm.hw.multi.build"}

__all__ = ["__version__", "Graph", "load_graph", "tiny_graph", "partition", "partition_report",
           "gravfm_edge_stores", "Algorithm", "REGISTRY", "get_algorithm", "predict", "load_platform",
           "GravfmError", "GraphFormatError", "SpecError", "ConfigError", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gravfm' has no attribute {name!r}")
