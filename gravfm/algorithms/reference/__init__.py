"""Software references for the built-in algorithms, superstep by superstep.

Each function runs the algorithm with exactly the superstep semantics of ``docs/interfaces.md`` §2,
vectorized over one superstep at a time with numpy/scipy, and returns the answer together with
the number of updates and messages of every superstep. The hardware's counters are checked
against these counts, so the counting rules are part of each function's contract:

- round ``r`` starts with the apply of every vertex; ``updates[r]`` counts the vertices that emit
  an update in that apply;
- every update is scattered over every out-edge of its sender, so ``messages[r]`` is the sum of
  the out-degrees (with duplicate edges counted) of the vertices that emitted in round ``r``;
- the run ends after the first round whose apply emits nothing; ``supersteps`` counts the apply
  rounds, that silent last one included.

The graph is used as given (directed, duplicates and self-loops included); preparing it (e.g.
symmetrizing for WCC) is the caller's business.
"""

from .components import wcc, wcc_components
from .paths import sssp
from .ranks import pagerank
from .results import (BfsResult, PageRankResult, RootedResult, SsspResult, SuperstepCounts, SuperstepResult,
                      WccResult)
from .traversal import bfs, bfs_levels, check_bfs_parent

__all__ = [
    "SuperstepCounts",
    "RootedResult",
    "WccResult",
    "BfsResult",
    "PageRankResult",
    "SsspResult",
    "SuperstepResult",
    "wcc",
    "wcc_components",
    "bfs",
    "bfs_levels",
    "check_bfs_parent",
    "pagerank",
    "sssp",
]
