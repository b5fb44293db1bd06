"""Breadth-first search: the parent of every vertex in a BFS tree from ``root``.

The root starts visited and active (its parent is itself). A message carries nothing but its
sender; gather makes the sender the parent of a vertex not yet visited and marks it active;
apply emits an (empty) update for an active vertex and clears the flag. Several parents can be
valid, so the answer is checked with :func:`gravfm.algorithms.reference.check_bfs_parent`.
"""

import numpy as np

from .base import VERTEXID, Algorithm
from .kernel_factories import block_kernel
from .params import root_of

__all__ = ["BFS"]


def _root(graph, params):
    return root_of(graph, params, "bfs")


def _initial_state(graph, params):
    root = _root(graph, params)
    n = graph.num_vertices
    parent = np.full(n, -1, dtype=np.int64)
    visited = np.zeros(n, dtype=np.int64)
    parent[root] = root
    visited[root] = 1
    return {"parent": parent, "visited": visited, "active": visited.copy()}


def _initially_active(graph, params):
    active = np.zeros(graph.num_vertices, dtype=bool)
    active[_root(graph, params)] = True
    return active


def _reference(graph, params):
    from .reference import bfs  # deferred: scipy.sparse.csgraph (heavy), only to compute a reference
    return bfs(graph, _root(graph, params))


def _check(graph, params, state, result):
    from .reference import check_bfs_parent  # deferred: scipy.sparse.csgraph (heavy), only to compute a reference
    parent = np.where(np.asarray(state["visited"]) != 0, np.asarray(state["parent"]), -1)
    return check_bfs_parent(graph, _root(graph, params), parent)


BFS = Algorithm(
    name="bfs",
    vertex={"parent": VERTEXID, "visited": 1, "active": 1},
    update={},
    message={},
    edge={},
    # The first message a vertex receives makes its sender the parent.
    gather=block_kernel("ConditionalGather", condition=lambda i: ~i.state.visited,
                        take=lambda i: {"parent": i.sender, "visited": 1}),
    apply=block_kernel("EmitIfActiveApply"),  # the (empty) update says "my sender is your parent"
    scatter=block_kernel("MapScatter", registered=False),  # nothing to compute: no register needed
    initial_state=_initial_state,
    reference=_reference,
    check=_check,
    vertexid_fields=("parent",),
    default_params={"root": 0},
    sparse_apply=True,
    initially_active=_initially_active,
)
