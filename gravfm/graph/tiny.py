"""Named tiny test graphs, shared by every test in the project.

``TINY_GRAPHS`` maps a name to a factory returning a fresh :class:`~gravfm.graph.Graph`; use
``tiny_graph(name)`` or the spec string ``tiny:NAME``. Each graph is small enough to check by hand
and stresses one thing (an isolated vertex, a self-loop, two components, ...). Edges are kept
exactly as listed (no cleaning), so a graph meant to have a self-loop or a duplicate has it.
"""

import numpy as np

from ..errors import SpecError
from .csr import Graph

__all__ = ["TINY_GRAPHS", "tiny_graph"]


def _graph(name, edges, num_vertices=None, weights=None):
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(edges[:, 0], edges[:, 1], num_vertices, weights, name=f"tiny:{name}")


def _undirected(pairs):
    """Both directions of every pair (the tiny graphs meant for WCC are already symmetric)."""
    return [edge for u, v in pairs for edge in ((u, v), (v, u))]


def path():
    """0 -> 1 -> ... -> 5, directed."""
    return _graph("path", [(i, i + 1) for i in range(5)])


def undirected_path():
    """0 - 1 - ... - 5, both directions."""
    return _graph("undirected_path", _undirected([(i, i + 1) for i in range(5)]))


def star():
    """Hub 0 with edges to and from leaves 1..6."""
    return _graph("star", _undirected([(0, leaf) for leaf in range(1, 7)]))


def out_star():
    """Hub 0 with directed edges to leaves 1..6 (leaves have no out-edges)."""
    return _graph("out_star", [(0, leaf) for leaf in range(1, 7)])


def cycle():
    """Directed cycle 0 -> 1 -> ... -> 6 -> 0."""
    return _graph("cycle", [(i, (i + 1) % 7) for i in range(7)])


def two_components():
    """Two undirected triangles {0,1,2} and {3,4,5} plus an edge 4 - 6."""
    return _graph("two_components", _undirected([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (4, 6)]))


def self_loop():
    """Path 0 - 1 - 2 (both directions) with self-loops on 1 and 2."""
    return _graph("self_loop", _undirected([(0, 1), (1, 2)]) + [(1, 1), (2, 2)])


def isolated():
    """Edge 1 - 3 (both directions) among 6 vertices: 0, 2, 4 and 5 have no edges at all."""
    return _graph("isolated", _undirected([(1, 3)]), num_vertices=6)


def duplicates():
    """Path 0 -> 1 -> 2 -> 3 with the edge 1 -> 2 listed three times."""
    return _graph("duplicates", [(0, 1), (1, 2), (1, 2), (1, 2), (2, 3)])


def complete():
    """Complete directed graph on 5 vertices, no self-loops."""
    return _graph("complete", [(u, v) for u in range(5) for v in range(5) if u != v])


def dag():
    """A small directed acyclic graph with two sources (0, 1), a diamond and a sink (7)."""
    return _graph("dag", [(0, 2), (0, 3), (1, 3), (2, 4), (3, 4), (3, 5), (4, 6), (5, 6), (6, 7), (1, 7)])


def binary_tree():
    """Complete binary tree of 15 vertices, edges parent -> child and child -> parent."""
    return _graph("binary_tree", _undirected([((child - 1) // 2, child) for child in range(1, 15)]))


def grid():
    """4 x 4 undirected grid (vertex ``4*row + col``)."""
    pairs = [(4 * r + c, 4 * r + c + 1) for r in range(4) for c in range(3)]
    pairs += [(4 * r + c, 4 * (r + 1) + c) for r in range(3) for c in range(4)]
    return _graph("grid", _undirected(pairs))


def weighted():
    """Directed graph with integer weights, two routes 0 -> 4 of different lengths."""
    edges = [(0, 1), (1, 4), (0, 2), (2, 3), (3, 4), (4, 5)]
    return _graph("weighted", edges, weights=np.array([5, 6, 1, 2, 3, 1], dtype=np.int64))


def single_vertex():
    """One vertex, no edges."""
    return _graph("single_vertex", [], num_vertices=1)


def empty():
    """No vertices at all."""
    return _graph("empty", [], num_vertices=0)


#: Name -> factory of every tiny graph.
TINY_GRAPHS = {factory.__name__: factory for factory in (
    path, undirected_path, star, out_star, cycle, two_components, self_loop, isolated, duplicates,
    complete, dag, binary_tree, grid, weighted, single_vertex, empty,
)}


def tiny_graph(name):
    """A fresh copy of the tiny graph called ``name`` (raises SpecError naming the known ones).

    Examples
    --------
    >>> grid = tiny_graph("grid")
    >>> grid.num_vertices, grid.num_edges
    (16, 48)
    >>> grid.targets[grid.offsets[0]:grid.offsets[1]].tolist()  # vertex 0's out-neighbours
    [1, 4]
    """
    try:
        factory = TINY_GRAPHS[name]
    except KeyError:
        raise SpecError(f"unknown tiny graph {name!r} (known: {', '.join(TINY_GRAPHS)})") from None
    return factory()
