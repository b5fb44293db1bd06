"""A user-defined algorithm in its own file: hop distance from a root (BFS levels).

Nothing in gravfm knows this algorithm: the file defines its layouts, its three kernels (each one
call of a kernel building block, :mod:`gravfm.algorithms.blocks`) and its reference binding, and
hands the :class:`~gravfm.algorithms.Algorithm` to the framework.

Run it in Amaranth's simulator::

    python examples/hop_distance.py            # tiny grid, 2 PEs

or through the CLI: ``gravfm run examples/hop_distance.py:HOP_DISTANCE --graph tiny:grid``.
"""

import numpy as np

from gravfm.algorithms import Algorithm
from gravfm.algorithms.blocks import ConditionalGather, EmitIfActiveApply, MapScatter

DISTANCE_BITS = 8  # distances up to 255 hops


def gather(layouts):
    """The first message a vertex receives carries its distance."""
    # combinational=False: messages to a vertex in flight wait for its write-back instead of
    # taking the in-flight result (True lets the PE forward, as the built-in kernels do).
    return ConditionalGather(layouts, condition=lambda i: ~i.state.visited,
                             take=lambda i: {"distance": i.message.distance, "visited": 1},
                             combinational=False)


def apply(layouts):
    """A vertex reached in the last round announces its distance once."""
    return EmitIfActiveApply(layouts)  # update.distance = state.distance


def scatter(layouts):
    """One hop further: distance + 1, through a pipeline register."""
    return MapScatter(layouts, message=lambda i: {"distance": i.update.distance + 1})


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
    gather=gather,
    apply=apply,
    scatter=scatter,
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
