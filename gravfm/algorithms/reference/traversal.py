"""Reference of BFS: the tree superstep by superstep, scipy's levels, and a check of any valid tree."""

import numpy as np
import scipy.sparse.csgraph

from ..checks import vertex_label
from ..params import check_root
from .results import BfsResult
from .rounds import adjacency_matrix, out_edges_of

__all__ = ["bfs", "bfs_levels", "check_bfs_parent"]


def bfs(graph, root):
    """Breadth-first search tree from ``root``.

    Round 0: the root (``parent = root``) emits. A message carries its sender's id. A vertex
    without a parent takes a sender of a message it receives as its parent, and emits in the
    next round; vertices that already have a parent ignore messages. So the vertices at level
    ``r`` emit in round ``r``, and ``supersteps = max level + 2``.

    Parameters
    ----------
    graph : gravfm.graph.Graph
    root : int

    Returns
    -------
    BfsResult
        This reference picks the lowest-id sender as parent when there are several.

    Raises
    ------
    gravfm.errors.ConfigError
        If ``root`` is not a vertex of the graph.
    """
    root = check_root(graph, root, "bfs")
    n = graph.num_vertices
    out_degree = np.diff(graph.offsets)
    parent = np.full(n, -1, dtype=np.int64)
    level = np.full(n, -1, dtype=np.int64)
    parent[root] = root
    level[root] = 0
    frontier = np.array([root], dtype=np.int64)
    updates, messages = [], []
    depth = 0
    while True:
        updates.append(frontier)
        messages.append(int(out_degree[frontier].sum()))
        if frontier.size == 0:
            break
        edge_index, sender_of_edge = out_edges_of(graph, frontier)
        receivers = graph.targets[edge_index].astype(np.int64)
        fresh = parent[receivers] == -1
        receivers, sender_of_edge = receivers[fresh], sender_of_edge[fresh]
        candidate = np.full(n, n, dtype=np.int64)
        np.minimum.at(candidate, receivers, sender_of_edge)
        frontier = np.unique(receivers)
        parent[frontier] = candidate[frontier]
        depth += 1
        level[frontier] = depth
    return BfsResult.from_rounds(updates, messages, root=root, parent=parent, level=level)


def bfs_levels(graph, root):
    """Hop distance of every vertex from ``root`` (-1 if unreachable), computed by scipy.

    Independent of :func:`bfs`, so it can check it.
    """
    root = check_root(graph, root, "bfs")
    adjacency = adjacency_matrix(graph, np.ones(graph.num_edges, dtype=np.int8))
    distance = scipy.sparse.csgraph.shortest_path(adjacency, directed=True, unweighted=True,
                                                  indices=root)
    level = np.full(graph.num_vertices, -1, dtype=np.int64)
    reached = np.isfinite(distance)
    level[reached] = distance[reached].astype(np.int64)
    return level


def check_bfs_parent(graph, root, parent):
    """Accept any valid BFS parent array.

    Valid means: ``parent[root] == root``; a vertex is unreachable from the root iff its parent
    is -1; for every other reachable vertex ``v``, ``(parent[v], v)`` is an edge of the graph and
    ``level[parent[v]] == level[v] - 1`` (so levels are BFS distances).

    Parameters
    ----------
    graph : gravfm.graph.Graph
    root : int
    parent : array_like of int
        One entry per vertex.

    Returns
    -------
    ok : bool
    detail : str
        Empty when ok; otherwise names the first bad vertex and why.
    """
    root = check_root(graph, root, "bfs")
    n = graph.num_vertices
    parent = np.asarray(parent)
    if parent.shape != (n,):
        return False, f"parent array has shape {parent.shape}, expected ({n},)"
    parent = parent.astype(np.int64)
    if parent[root] != root:
        name = vertex_label(graph, root)
        return False, f"vertex {name} (root): parent is {vertex_label(graph, parent[root])}, expected {name}"
    level = bfs_levels(graph, root)
    bad = np.zeros(n, dtype=bool)
    reason = np.zeros(n, dtype=np.int8)  # 1 unreachable given parent, 2 reachable without,
    # 3 parent out of range, 4 parent on a wrong level, 5 no such edge
    unreachable = level < 0
    r1 = unreachable & (parent != -1)
    r2 = ~unreachable & (parent == -1)
    r3 = ~unreachable & (parent != -1) & ((parent < 0) | (parent >= n))
    candidates = ~unreachable & ~r2 & ~r3
    candidates[root] = False
    safe_parent = np.where(candidates, parent, 0)
    r4 = candidates & (level[safe_parent] != level - 1)
    edge_key = graph.sources().astype(np.int64) * n + graph.targets
    query = safe_parent * n + np.arange(n, dtype=np.int64)
    found = np.zeros(n, dtype=bool)
    if edge_key.size:
        position = np.minimum(np.searchsorted(edge_key, query), edge_key.size - 1)
        found = edge_key[position] == query
    r5 = candidates & ~r4 & ~found
    for code, mask in ((5, r5), (4, r4), (3, r3), (2, r2), (1, r1)):
        reason[mask] = code
        bad |= mask
    if not bad.any():
        return True, ""
    v = int(np.flatnonzero(bad)[0])
    p = int(parent[v])
    name_v, name_p, name_root = (vertex_label(graph, x) for x in (v, p, root))  # as the user knows them
    messages = {
        1: f"vertex {name_v}: unreachable from {name_root} but has parent {name_p}",
        2: f"vertex {name_v}: reachable from {name_root} (level {level[v]}) but has no parent",
        3: f"vertex {name_v}: parent {name_p} is not a vertex id",
        4: f"vertex {name_v}: level {level[v]} but its parent {name_p} is at level {level[p] if 0 <= p < n else '?'}",
        5: f"vertex {name_v}: parent {name_p} but the graph has no edge ({name_p}, {name_v})",
    }
    return False, messages[int(reason[v])]
