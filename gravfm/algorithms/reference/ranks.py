"""Reference of PageRank in Pregel form, for a fixed number of supersteps."""

import numpy as np

from ...errors import ConfigError
from .results import PageRankResult
from .rounds import adjacency_matrix

__all__ = ["pagerank"]


def pagerank(graph, supersteps=30, damping=0.85, dtype=np.float64):
    """PageRank in Pregel form, for a fixed number of supersteps.

    Convention (N = number of vertices, d = damping, S = supersteps):

    - round 0: ``rank = 1/N``;
    - round ``r >= 1``: ``rank = (1 - d)/N + d * sum(received)``, where ``received`` are the
      messages scattered in round ``r - 1`` (no special handling of dangling vertices: their
      rank is not redistributed);
    - in every round ``r < S - 1`` EVERY vertex emits the update ``rank / out_degree`` (a vertex
      without out-edges emits too, its update produces no message); round ``S - 1`` is silent.

    So ``updates = [N] * (S-1) + [0]``, ``messages = [E] * (S-1) + [0]``, and the rank is
    updated ``S - 1`` times. All arithmetic is done in ``dtype``; messages to one vertex are
    summed in order of sender id, so float32 results may differ from hardware in the last bits.

    Parameters
    ----------
    graph : gravfm.graph.Graph
    supersteps : int
        Number of apply rounds, at least 1 (the paper uses 30).
    damping : float
    dtype : numpy floating dtype
        ``np.float32`` to mirror single-precision hardware, ``np.float64`` by default.

    Returns
    -------
    PageRankResult
    """
    if isinstance(supersteps, bool) or not isinstance(supersteps, (int, np.integer)) \
            or supersteps < 1:
        raise ConfigError(f"pagerank: supersteps must be a positive integer, not {supersteps!r}")
    if not 0.0 <= float(damping) <= 1.0:
        raise ConfigError(f"pagerank: damping must be between 0 and 1, not {damping!r}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ConfigError(f"pagerank: dtype must be a floating-point type, not {dtype}")
    n = graph.num_vertices
    if n == 0:
        raise ConfigError("pagerank: the graph has no vertices")
    out_degree = np.diff(graph.offsets)
    # A vertex without out-edges divides by 1: its update reaches nobody anyway.
    divisor = np.maximum(out_degree, 1).astype(dtype)
    # Transposed adjacency: row v lists its in-edges, so one product sums what v receives.
    incoming = adjacency_matrix(graph, np.ones(graph.num_edges, dtype=dtype)).T.tocsr()
    base = dtype.type((1.0 - damping) / n)
    d = dtype.type(damping)
    rank = np.full(n, 1.0 / n, dtype=dtype)
    for _ in range(supersteps - 1):
        contribution = rank / divisor
        received = (incoming @ contribution).astype(dtype, copy=False)
        rank = base + d * received
    updates = [n] * (supersteps - 1) + [0]
    messages = [graph.num_edges] * (supersteps - 1) + [0]
    return PageRankResult.from_rounds(updates, messages, rank=rank.astype(dtype, copy=False),
                                      damping=float(damping))
