"""Vertex-centric algorithms: layouts, hardware kernels, initial state and software reference.

``REGISTRY`` lists the built-in algorithms; a user passes their own :class:`Algorithm` anywhere a
registered one is accepted (see ``examples/``). Importing this package does not import Amaranth.
"""

from ..errors import ConfigError
from .base import VERTEXID, Algorithm
from .bfs import BFS
from .pagerank import PAGERANK, make_pagerank
from .sssp import SSSP
from .wcc import WCC

__all__ = ["Algorithm", "VERTEXID", "REGISTRY", "get_algorithm", "WCC", "BFS", "PAGERANK", "SSSP",
           "make_pagerank"]

#: Built-in algorithms by name.
REGISTRY = {algorithm.name: algorithm for algorithm in (WCC, BFS, PAGERANK, SSSP)}


def get_algorithm(name):
    """The registered algorithm called ``name`` (raises ConfigError naming the known ones).

    Examples
    --------
    >>> get_algorithm("wcc").vertex
    {'label': 'vertexid', 'active': 1}
    >>> get_algorithm("bsf")
    Traceback (most recent call last):
    gravfm.errors.ConfigError: unknown algorithm 'bsf' (known: bfs, pagerank, sssp, wcc)
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown algorithm {name!r} (known: {', '.join(sorted(REGISTRY))})") from None
