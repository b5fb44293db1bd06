"""Breadth-first search: the parent of every vertex in a BFS tree from ``root``.

The root starts visited and active (its parent is itself). A message carries nothing but its
sender; gather makes the sender the parent of a vertex not yet visited and marks it active;
apply emits an (empty) update for an active vertex and clears the flag. Several parents can be
valid, so the answer is checked with :func:`gravfm.algorithms.reference.check_bfs_parent`.
"""

import numpy as np

from .base import VERTEXID, Algorithm

__all__ = ["BFS"]


def _gather(layouts):
    from amaranth.hdl import Module, Mux
    from amaranth.lib import wiring

    from ..hw.kernels import gather_signature

    class BfsGather(wiring.Component):
        """Adopt the sender as parent of an unvisited vertex."""

        combinational = True  # output in the cycle of the input: gather may forward results

        def __init__(self):
            super().__init__(gather_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            i, o = self.i.payload, self.o.payload
            first_visit = ~i.state.visited
            m.d.comb += [
                o.nodeid.eq(i.nodeid),
                o.state.parent.eq(Mux(first_visit, i.sender, i.state.parent)),
                o.state.visited.eq(1),
                o.state.active.eq(first_visit | i.state.active),
                self.o.valid.eq(self.i.valid),
                self.i.ready.eq(self.o.ready),
            ]
            return m

    return BfsGather()


def _apply(layouts):
    from amaranth.hdl import Module
    from amaranth.lib import wiring

    from ..hw.kernels import apply_signature

    class BfsApply(wiring.Component):
        """A vertex visited in the last round announces itself once."""

        def __init__(self):
            super().__init__(apply_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            i, st, up = self.i.payload, self.state_o.payload, self.update_o.payload
            m.d.comb += [
                st.nodeid.eq(i.nodeid),
                st.state.parent.eq(i.state.parent),
                st.state.visited.eq(i.state.visited),
                st.state.active.eq(0),
                st.barrier.eq(i.barrier),
                self.state_o.valid.eq(self.i.valid),
                up.sender.eq(i.nodeid),
                up.round.eq(i.round),
                up.barrier.eq(i.barrier),
                self.update_o.valid.eq(self.i.valid & (i.state.active | i.barrier)),
                self.i.ready.eq(self.update_o.ready | ~self.update_o.valid),
            ]
            return m

    return BfsApply()


def _scatter(layouts):
    from amaranth.hdl import Module
    from amaranth.lib import wiring

    from ..hw.kernels import scatter_signature

    class BfsScatter(wiring.Component):
        """Send the sender's id to the neighbor (combinational)."""

        def __init__(self):
            super().__init__(scatter_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            i, o = self.i.payload, self.o.payload
            m.d.comb += [
                o.neighbor.eq(i.neighbor),
                o.sender.eq(i.sender),
                o.round.eq(i.round),
                o.barrier.eq(i.barrier),
                self.o.valid.eq(self.i.valid),
                self.i.ready.eq(self.o.ready),
            ]
            return m

    return BfsScatter()


def _root(graph, params):
    from .reference import _check_root
    return _check_root(graph, params["root"], "bfs")


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
    from .reference import bfs
    return bfs(graph, _root(graph, params))


def _check(graph, params, state, result):
    from .reference import check_bfs_parent
    parent = np.where(np.asarray(state["visited"]) != 0, np.asarray(state["parent"]), -1)
    return check_bfs_parent(graph, _root(graph, params), parent)


BFS = Algorithm(
    name="bfs",
    vertex={"parent": VERTEXID, "visited": 1, "active": 1},
    update={},
    message={},
    edge={},
    gather=_gather,
    apply=_apply,
    scatter=_scatter,
    initial_state=_initial_state,
    reference=_reference,
    check=_check,
    vertexid_fields=("parent",),
    default_params={"root": 0},
    sparse_apply=True,
    initially_active=_initially_active,
)
