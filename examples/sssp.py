"""A user-defined algorithm with edge data: single-source shortest paths (Bellman-Ford supersteps).

(gravfm has a built-in SSSP, ``gravfm.algorithms.SSSP``; this file shows how a user writes one
with edge data from scratch, outside the package.)

Edge weights travel in the edge array (``edge={"weight": 8}``) and reach the scatter kernel,
which adds them to the sender's distance. Distances saturate at the all-ones value, which also
means "unreached".

    python examples/sssp.py        # tiny weighted graph, 2 PEs, Amaranth simulator
"""

import numpy as np
from amaranth.hdl import Module, Mux
from amaranth.lib import wiring

from gravfm.algorithms import Algorithm
from gravfm.hw import apply_signature, gather_signature, scatter_signature

DISTANCE_BITS = 16
WEIGHT_BITS = 8
UNREACHED = (1 << DISTANCE_BITS) - 1


class SsspGather(wiring.Component):
    """Keep the shorter distance; mark the vertex active when it improved."""

    def __init__(self, layouts):
        super().__init__(gather_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        shorter = i.message.distance < i.state.distance
        m.d.comb += [
            o.nodeid.eq(i.nodeid),
            o.state.distance.eq(Mux(shorter, i.message.distance, i.state.distance)),
            o.state.active.eq(shorter | i.state.active),
            self.o.valid.eq(self.i.valid),
            self.i.ready.eq(self.o.ready),
        ]
        return m


class SsspApply(wiring.Component):
    """An improved vertex announces its distance."""

    def __init__(self, layouts):
        super().__init__(apply_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, st, up = self.i.payload, self.state_o.payload, self.update_o.payload
        m.d.comb += [
            st.nodeid.eq(i.nodeid),
            st.state.distance.eq(i.state.distance),
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


class SsspScatter(wiring.Component):
    """distance + weight of the edge, saturating, through a pipeline register."""

    def __init__(self, layouts):
        super().__init__(scatter_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        total = i.update.distance + i.edge.weight  # one bit wider than a distance
        m.d.comb += self.i.ready.eq(self.o.ready | ~self.o.valid)
        with m.If(self.i.ready):
            m.d.sync += [
                o.message.distance.eq(Mux(total > UNREACHED, UNREACHED, total)),
                o.neighbor.eq(i.neighbor),
                o.sender.eq(i.sender),
                o.round.eq(i.round),
                o.barrier.eq(i.barrier),
                self.o.valid.eq(self.i.valid),
            ]
        return m


def initial_state(graph, params):
    n = graph.num_vertices
    distance = np.full(n, UNREACHED, dtype=np.int64)
    active = np.zeros(n, dtype=np.int64)
    distance[params["root"]] = 0
    active[params["root"]] = 1
    return {"distance": distance, "active": active}


def edge_data(graph):
    weights = graph.weights if graph.weights is not None else np.ones(graph.num_edges, dtype=np.int64)
    return {"weight": np.asarray(weights, dtype=np.int64)}


def reference(graph, params):
    from gravfm.algorithms.reference import sssp
    return sssp(graph, params["root"], weights=edge_data(graph)["weight"])


def check(graph, params, state, result):
    from gravfm.algorithms.checks import compare_exact
    distance = np.asarray(state["distance"], dtype=np.int64)
    return compare_exact("distance", np.where(distance == UNREACHED, -1, distance), result.distance)


SSSP = Algorithm(
    name="example_sssp",
    vertex={"distance": DISTANCE_BITS, "active": 1},
    update={"distance": DISTANCE_BITS},
    message={"distance": DISTANCE_BITS},
    edge={"weight": WEIGHT_BITS},
    gather=SsspGather,
    apply=SsspApply,
    scatter=SsspScatter,
    initial_state=initial_state,
    reference=reference,
    check=check,
    edge_data=edge_data,
    default_params={"root": 0},
    sparse_apply=True,
)


if __name__ == "__main__":
    from gravfm.graph.tiny import tiny_graph
    from gravfm.sim.amaranth_backend import run_amaranth

    result = run_amaranth(SSSP, tiny_graph("weighted"), pes=2)
    print(f"verified: {result.ok} {result.detail}")
    print(f"distances: {result.state['distance'].tolist()}")
    raise SystemExit(0 if result.ok else 1)
