"""Reference of WCC: label propagation, and scipy's components to check it."""

import numpy as np
import scipy.sparse.csgraph

from .results import WccResult
from .rounds import adjacency_matrix, min_propagation

__all__ = ["wcc", "wcc_components"]


def wcc(graph):
    """Label propagation (weakly connected components on a symmetric graph).

    Round 0: every vertex's label is its own id and every vertex emits it. A message carries the
    sender's label; gather keeps the minimum. In round ``r >= 1`` a vertex emits its label iff
    the gather of round ``r - 1``'s messages lowered it.

    Parameters
    ----------
    graph : gravfm.graph.Graph
        Used as given (directed). Symmetrize it first to get weakly connected components.

    Returns
    -------
    WccResult
    """
    labels = np.arange(graph.num_vertices, dtype=np.int64)
    active = np.ones(graph.num_vertices, dtype=bool)
    labels, updates, messages = min_propagation(graph, labels, active, None)
    return WccResult.from_rounds(updates, messages, labels=labels)


def wcc_components(graph):
    """Lowest vertex id of each vertex's weakly connected component (scipy, no supersteps).

    Equal to ``wcc(graph.symmetrize()).labels``.

    Returns
    -------
    np.ndarray of int64
    """
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    adjacency = adjacency_matrix(graph, np.ones(graph.num_edges, dtype=np.int8))
    _, component = scipy.sparse.csgraph.connected_components(adjacency, directed=True,
                                                             connection="weak")
    # Vertices are scanned in id order, so a component's first occurrence is its lowest id.
    _, first_vertex = np.unique(component, return_index=True)
    return first_vertex[component].astype(np.int64)
