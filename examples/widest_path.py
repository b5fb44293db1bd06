"""A user-defined algorithm with edge data and a pipelined gather: widest paths from a root.

The width of a path is its narrowest edge's capacity; every vertex learns the widest path from
``root`` to it (0: unreachable; the root itself is "unbounded", the all-ones width). The
algorithm is the one the tutorial (docs/tutorial.md, "Your own algorithm") builds, step by step:

* layouts, with an 8-bit ``capacity`` per edge (:func:`edge_data`);
* apply and scatter, each one call of a building block (:mod:`gravfm.algorithms.blocks`);
* gather written by hand in Amaranth: a two-stage pipeline that declares ``latency=2`` on its signature;
* the software reference: the same three steps in numpy, run by
  :func:`gravfm.algorithms.engine.run_supersteps`, which counts the messages of every superstep
  as the hardware does.

Run it in Amaranth's simulator (``python examples/widest_path.py``: 2 FPGAs x 2 PEs) or through
the CLI: ``gravfm run examples/widest_path.py:WIDEST_PATH --graph tiny:grid --pes 2``.
"""

import numpy as np

from gravfm.algorithms import Algorithm
from gravfm.algorithms.engine import run_supersteps, state_check

WIDTH_BITS = 8
UNBOUNDED = (1 << WIDTH_BITS) - 1  # the root's width


# --- hardware kernels ---------------------------------------------------------------------------

def gather(layouts):
    """Keep the wider of the state's and the message's width, in a 2-stage pipeline."""
    from amaranth.hdl import Module, Mux, Signal
    from amaranth.lib import wiring

    from gravfm.hw.kernels import gather_signature

    class PipelinedMaxGather(wiring.Component):
        def __init__(self):
            # latency: cycles from an input's handshake to its output's (checked before each build)
            super().__init__(gather_signature(layouts, latency=2))

        def elaborate(self, platform):
            m = Module()
            i, o = self.i.payload, self.o.payload
            # Both stages move together unless the output is offered and not taken, so `o.valid`
            # is a register and the output is held until it is taken.
            advance = ~self.o.valid | self.o.ready
            m.d.comb += self.i.ready.eq(advance)
            held_valid, held = Signal(), Signal(layouts.gather_in)  # stage 1: the input, compared
            wider = Signal()
            with m.If(advance):
                m.d.sync += [held_valid.eq(self.i.valid), held.eq(i),
                             wider.eq(i.message.width > i.state.width)]
                m.d.sync += [  # stage 2: the new state
                    self.o.valid.eq(held_valid),
                    o.nodeid.eq(held.nodeid),  # the output goes to its input's vertex
                    o.state.width.eq(Mux(wider, held.message.width, held.state.width)),
                    o.state.active.eq(held.state.active | wider),
                ]
            return m

    return PipelinedMaxGather()


def apply(layouts):
    """An active vertex announces its width once (update.width = state.width)."""
    from gravfm.algorithms.blocks import EmitIfActiveApply
    return EmitIfActiveApply(layouts)


def scatter(layouts):
    """Over an edge, the width is at most the edge's capacity."""
    from amaranth.hdl import Mux

    from gravfm.algorithms.blocks import MapScatter

    def narrower(i):
        return {"width": Mux(i.update.width < i.edge.capacity, i.update.width, i.edge.capacity)}

    return MapScatter(layouts, message=narrower)


# --- host side: initial state, edge data -------------------------------------------------------------

def initial_state(graph, params):
    n, root = graph.num_vertices, params["root"]
    width, active = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    width[root], active[root] = UNBOUNDED, 1
    return {"width": width, "active": active}


def initially_active(graph, params):
    return initial_state(graph, params)["active"] == 1  # round 0 applies the root only


def edge_data(graph):
    """Each edge's capacity: the graph's weights, or else ``1 + (source + target) % 15``."""
    if graph.weights is not None:
        return {"capacity": np.asarray(graph.weights, dtype=np.int64)}
    return {"capacity": 1 + (graph.sources().astype(np.int64) + graph.targets) % 15}


# --- software reference: the same three steps in numpy -------------------------------------------------

def reference_apply(i):
    """EmitIfActiveApply: (state changes, who emits, the update)."""
    return {"active": 0}, i.state.active == 1, {"width": i.state.width}


def reference_scatter(i):
    return {"width": np.minimum(i.update.width, i.edge.capacity)}


def reference_gather(i):
    width = i.reduce(i.message.width, "max", start=i.state.width)
    return {"width": width, "active": i.state.active | (width > i.state.width)}


def reference(graph, params):
    return run_supersteps(graph, initial=initial_state(graph, params), edge=edge_data(graph),
                          gather=reference_gather, apply=reference_apply, scatter=reference_scatter,
                          sparse=True, initially_active=initially_active(graph, params))


WIDEST_PATH = Algorithm(
    name="widest_path",
    vertex={"width": WIDTH_BITS, "active": 1},
    update={"width": WIDTH_BITS},
    message={"width": WIDTH_BITS},
    edge={"capacity": WIDTH_BITS},
    gather=gather,
    apply=apply,
    scatter=scatter,
    initial_state=initial_state,
    reference=reference,
    check=state_check("width"),
    edge_data=edge_data,
    default_params={"root": 0},
    sparse_apply=True,  # apply changes nothing on a vertex no message widened
    initially_active=initially_active,
)


if __name__ == "__main__":
    from gravfm.flow import RunOptions, run

    report = run(RunOptions(algorithm=WIDEST_PATH, graph="tiny:grid", fpgas=2, pes=2, backend="amaranth",
                            edge_memory="onchip"))
    print(f"verified: {report.verified} {report.check_detail}")
    print(f"widths: {report.readback.state['width'].tolist()}")
    print(f"{report.cycles} cycles, {report.supersteps} supersteps, "
          f"messages per superstep {list(report.readback.messages_per_superstep)}")
    raise SystemExit(0 if report.verified else 1)
