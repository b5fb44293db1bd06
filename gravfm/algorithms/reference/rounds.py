"""The superstep machinery the references share: frontiers' out-edges, min-propagation, adjacency."""

import numpy as np
import scipy.sparse

__all__ = ["out_edges_of", "min_propagation", "adjacency_matrix"]


def out_edges_of(graph, senders):
    """Edge indices (CSR order) of all out-edges of ``senders``, and the sender of each.

    Costs O(len(senders) + their out-edges), not O(E), so sparse frontiers stay cheap.
    """
    offsets = graph.offsets
    starts = offsets[senders]
    lengths = offsets[senders + 1] - starts
    total = int(lengths.sum())
    sender_of_edge = np.repeat(senders, lengths)
    # Position within the frontier's concatenated edge lists, shifted to each list's start.
    first_in_concat = np.cumsum(lengths) - lengths
    edge_index = np.arange(total, dtype=np.int64) + np.repeat(starts - first_in_concat, lengths)
    return edge_index, sender_of_edge


def min_propagation(graph, values, active, edge_values):
    """Shared loop of WCC and SSSP: active vertices send ``values[sender] + edge_value``,
    each vertex keeps the minimum, and the vertices whose value decreased are active next.

    Returns
    -------
    (values, updates, messages)
        The final values, every apply round's senders (an array each) and its messages (counts).
    """
    out_degree = np.diff(graph.offsets)
    updates, messages = [], []
    while True:
        senders = np.flatnonzero(active)
        updates.append(senders)
        messages.append(int(out_degree[senders].sum()))
        if senders.size == 0:
            break
        edge_index, sender_of_edge = out_edges_of(graph, senders)
        carried = values[sender_of_edge]
        if edge_values is not None:
            carried = carried + edge_values[edge_index]
        gathered = values.copy()
        np.minimum.at(gathered, graph.targets[edge_index], carried)
        active = gathered < values
        values = gathered
    return values, updates, messages


def adjacency_matrix(graph, data):
    """The graph as a scipy CSR matrix whose entry of edge ``e`` is ``data[e]``."""
    n = graph.num_vertices
    return scipy.sparse.csr_matrix((data, graph.targets, graph.offsets), shape=(n, n))
