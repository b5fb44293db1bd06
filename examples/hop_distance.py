"""A user-defined algorithm in its own file: hop distance from a root (BFS levels).

Nothing in gravfm knows this algorithm: the file defines its layouts, its three kernels and its
reference binding, and hands the :class:`~gravfm.algorithms.Algorithm` to the framework.

Run it in Amaranth's simulator::

    python examples/hop_distance.py            # tiny grid, 2 PEs

or through the CLI: ``gravfm run examples/hop_distance.py:HOP_DISTANCE --graph tiny:grid``.
"""

import numpy as np
from amaranth.hdl import Module, Mux
from amaranth.lib import wiring

from gravfm.algorithms import Algorithm
from gravfm.hw import apply_signature, gather_signature, scatter_signature

DISTANCE_BITS = 8  # distances up to 255 hops


class HopGather(wiring.Component):
    """The first message a vertex receives carries its distance."""

    def __init__(self, layouts):
        super().__init__(gather_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        first = ~i.state.visited
        m.d.comb += [
            o.nodeid.eq(i.nodeid),
            o.state.distance.eq(Mux(first, i.message.distance, i.state.distance)),
            o.state.visited.eq(1),
            o.state.active.eq(first | i.state.active),
            self.o.valid.eq(self.i.valid),
            self.i.ready.eq(self.o.ready),
        ]
        return m


class HopApply(wiring.Component):
    """A vertex reached in the last round announces its distance once."""

    def __init__(self, layouts):
        super().__init__(apply_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, st, up = self.i.payload, self.state_o.payload, self.update_o.payload
        m.d.comb += [
            st.nodeid.eq(i.nodeid),
            st.state.distance.eq(i.state.distance),
            st.state.visited.eq(i.state.visited),
            st.state.active.eq(0),
            st.barrier.eq(i.barrier),
            self.state_o.valid.eq(self.i.valid),
            up.update.distance.eq(i.state.distance),
            up.sender.eq(i.nodeid),
            up.round.eq(i.round),
            up.barrier.eq(i.barrier),
            self.update_o.valid.eq(self.i.valid & (i.state.active | i.barrier)),
            self.i.ready.eq(self.update_o.ready | ~self.update_o.valid),
        ]
        return m


class HopScatter(wiring.Component):
    """One hop further: distance + 1, through a pipeline register."""

    def __init__(self, layouts):
        super().__init__(scatter_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        m.d.comb += self.i.ready.eq(self.o.ready | ~self.o.valid)
        with m.If(self.i.ready):
            m.d.sync += [
                o.message.distance.eq(i.update.distance + 1),
                o.neighbor.eq(i.neighbor),
                o.sender.eq(i.sender),
                o.round.eq(i.round),
                o.barrier.eq(i.barrier),
                self.o.valid.eq(self.i.valid),
            ]
        return m


def initial_state(graph, params):
    n = graph.num_vertices
    root = params["root"]
    visited = np.zeros(n, dtype=np.int64)
    visited[root] = 1
    return {"distance": np.zeros(n, dtype=np.int64), "visited": visited, "active": visited.copy()}


def reference(graph, params):
    from gravfm.algorithms.reference import bfs
    return bfs(graph, params["root"])  # same supersteps and messages; its `level` is the answer


def check(graph, params, state, result):
    distance = np.where(np.asarray(state["visited"]) != 0, np.asarray(state["distance"]), -1)
    wrong = np.flatnonzero(distance != result.level)
    if wrong.size:
        v = int(wrong[0])
        return False, f"vertex {v}: distance {distance[v]}, reference {result.level[v]}"
    return True, ""


HOP_DISTANCE = Algorithm(
    name="hop_distance",
    vertex={"distance": DISTANCE_BITS, "visited": 1, "active": 1},
    update={"distance": DISTANCE_BITS},
    message={"distance": DISTANCE_BITS},
    edge={},
    gather=HopGather,
    apply=HopApply,
    scatter=HopScatter,
    initial_state=initial_state,
    reference=reference,
    check=check,
    default_params={"root": 0},
)


if __name__ == "__main__":
    from gravfm.flow import RunOptions, run

    report = run(RunOptions(algorithm=HOP_DISTANCE, graph="tiny:grid", pes=2, backend="amaranth"))
    print(f"verified: {report.verified} {report.check_detail}")
    print(f"distances: {report.readback.state['distance'].tolist()}")
    print(f"{report.cycles} cycles, {report.supersteps} supersteps, "
          f"messages per superstep {list(report.readback.messages_per_superstep)}")
    raise SystemExit(0 if report.verified else 1)
