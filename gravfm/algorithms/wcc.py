"""Weakly connected components by label propagation (the paper's Listings 1-3).

A vertex's label starts as its own (original) id; every vertex emits its label in round 0;
gather keeps the minimum and marks the vertex active; apply emits the label of an active vertex
and clears the flag. Labels are original vertex ids, so the answer is directly comparable with
:func:`gravfm.algorithms.reference.wcc` (the lowest id of each component).
"""

import numpy as np

from .base import VERTEXID, Algorithm

__all__ = ["WCC"]


def _gather(layouts):
    from amaranth.hdl import Module, Mux
    from amaranth.lib import wiring

    from ..hw.kernels import gather_signature

    class WccGather(wiring.Component):
        """Keep the smaller label; mark the vertex active if it changed (Listing 1)."""

        combinational = True  # output in the cycle of the input: gather may forward results

        def __init__(self):
            super().__init__(gather_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            i, o = self.i.payload, self.o.payload
            new_label = i.message.label < i.state.label
            m.d.comb += [
                o.nodeid.eq(i.nodeid),
                o.state.label.eq(Mux(new_label, i.message.label, i.state.label)),
                o.state.active.eq(new_label | i.state.active),
                self.o.valid.eq(self.i.valid),
                self.i.ready.eq(self.o.ready),
            ]
            return m

    return WccGather()


def _apply(layouts):
    from amaranth.hdl import Module
    from amaranth.lib import wiring

    from ..hw.kernels import apply_signature

    class WccApply(wiring.Component):
        """Emit the label of an active vertex and clear its flag (Listing 2)."""

        def __init__(self):
            super().__init__(apply_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            i, st, up = self.i.payload, self.state_o.payload, self.update_o.payload
            m.d.comb += [
                st.nodeid.eq(i.nodeid),
                st.state.label.eq(i.state.label),
                st.state.active.eq(0),
                st.barrier.eq(i.barrier),
                self.state_o.valid.eq(self.i.valid),
                up.update.label.eq(i.state.label),
                up.sender.eq(i.nodeid),
                up.round.eq(i.round),
                up.barrier.eq(i.barrier),
                self.update_o.valid.eq(self.i.valid & (i.state.active | i.barrier)),
                self.i.ready.eq(self.update_o.ready | ~self.update_o.valid),
            ]
            return m

    return WccApply()


def _scatter(layouts):
    from amaranth.hdl import Module
    from amaranth.lib import wiring

    from ..hw.kernels import scatter_signature

    class WccScatter(wiring.Component):
        """Forward the label to the neighbor through one pipeline register (Listing 3)."""

        def __init__(self):
            super().__init__(scatter_signature(layouts))

        def elaborate(self, platform):
            m = Module()
            i, o = self.i.payload, self.o.payload
            m.d.comb += self.i.ready.eq(self.o.ready | ~self.o.valid)
            with m.If(self.i.ready):
                m.d.sync += [
                    o.message.label.eq(i.update.label),
                    o.neighbor.eq(i.neighbor),
                    o.sender.eq(i.sender),
                    o.round.eq(i.round),
                    o.barrier.eq(i.barrier),
                    self.o.valid.eq(self.i.valid),
                ]
            return m

    return WccScatter()


def _initial_state(graph, params):
    n = graph.num_vertices
    return {"label": np.arange(n, dtype=np.int64), "active": np.ones(n, dtype=np.int64)}


def _prepare(graph, params):
    return graph.symmetrize()


def _reference(graph, params):
    from .reference import wcc
    return wcc(graph)


def _check(graph, params, state, result):
    labels = np.asarray(state["label"], dtype=np.int64)
    wrong = np.flatnonzero(labels != result.labels)
    if wrong.size:
        v = int(wrong[0])
        return False, (f"{wrong.size} of {labels.size} labels differ; vertex {v}: "
                       f"hardware {labels[v]}, reference {result.labels[v]}")
    return True, ""


WCC = Algorithm(
    name="wcc",
    vertex={"label": VERTEXID, "active": 1},
    update={"label": VERTEXID},
    message={"label": VERTEXID},
    edge={},
    gather=_gather,
    apply=_apply,
    scatter=_scatter,
    initial_state=_initial_state,
    reference=_reference,
    check=_check,
    prepare=_prepare,
    sparse_apply=True,
)
