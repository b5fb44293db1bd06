"""Reference of SSSP: Bellman-Ford in supersteps."""

import numpy as np

from ...errors import ConfigError
from ..params import check_root
from .results import SsspResult
from .rounds import min_propagation

__all__ = ["sssp"]


def sssp(graph, root, weights=None):
    """Single-source shortest paths by Bellman-Ford supersteps.

    Round 0: the root (distance 0) emits 0. A message carries ``distance + weight`` of its edge;
    gather keeps the minimum. In round ``r >= 1`` a vertex emits its distance iff the gather of
    round ``r - 1`` lowered it. Weights must be non-negative (so the rounds terminate).

    Parameters
    ----------
    graph : gravfm.graph.Graph
    root : int
    weights : array_like, optional
        One weight per edge (CSR order). Defaults to ``graph.weights``, and to 1 for every edge
        when the graph has none.

    Returns
    -------
    SsspResult
        Integer weights give int64 distances with -1 for unreachable vertices; floating-point
        weights give float64 distances with ``inf`` for unreachable ones.
    """
    root = check_root(graph, root, "sssp")
    if weights is None:
        weights = graph.weights
    if weights is None:
        weights = np.ones(graph.num_edges, dtype=np.int64)
    weights = np.asarray(weights)
    if weights.shape != (graph.num_edges,):
        raise ConfigError(
            f"sssp: expected {graph.num_edges} edge weights, got shape {weights.shape}")
    integer = weights.dtype.kind in "iub"
    if not integer and weights.dtype.kind != "f":
        raise ConfigError(f"sssp: edge weights must be numbers, not {weights.dtype}")
    weights = weights.astype(np.int64 if integer else np.float64)
    if weights.size and not integer and np.isnan(weights).any():
        raise ConfigError(f"sssp: edge {int(np.flatnonzero(np.isnan(weights))[0])} has a NaN weight")
    if weights.size and weights.min() < 0:
        raise ConfigError(
            f"sssp: edge {int(np.argmin(weights))} has negative weight {weights.min()}")
    n = graph.num_vertices
    unreached = np.iinfo(np.int64).max if integer else np.inf
    distance = np.full(n, unreached, dtype=weights.dtype)
    distance[root] = 0
    active = np.zeros(n, dtype=bool)
    active[root] = True
    distance, updates, messages = min_propagation(graph, distance, active, weights)
    if integer:
        distance[distance == unreached] = -1
    return SsspResult.from_rounds(updates, messages, root=root, distance=distance)
