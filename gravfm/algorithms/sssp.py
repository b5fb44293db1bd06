"""Single-source shortest paths with integer edge weights stored in the edge memory.

Bellman-Ford in supersteps (the reference is :func:`gravfm.algorithms.reference.sssp`): the root
starts at distance 0 and active; apply emits the distance of an active vertex and clears the
flag; scatter adds the weight of each out-edge (read from the edge array beside the
destination, edge layout ``{"weight": WEIGHT_BITS}``); gather keeps the minimum, records the
message's sender as the vertex's ``parent`` and marks the vertex active when it decreased. So the
state also holds a shortest-path tree, checked beside the distances (any tree whose every edge
is tight is accepted: ties between equally short paths may go either way).

Distances are ``DISTANCE_BITS`` wide; the all-ones value :data:`UNREACHED` means "not reached"
and reads back as -1, as in the reference. Scatter saturates ``distance + weight`` at
:data:`UNREACHED`, so no sum can wrap around; the graph is rejected up front (ConfigError) if a
real shortest distance would not fit below it.

Weights come from the graph (a weighted file, or ``Graph.weights``); a graph without weights
gets pseudo-random integer weights ``1 .. max_weight`` drawn with ``weight_seed`` in
:func:`_prepare`, so the reference and the hardware see the same weighted graph.
"""

import numpy as np

from ..errors import ConfigError
from ..graph import Graph
from .base import VERTEXID, Algorithm
from .checks import compare_exact, vertex_label
from .kernel_factories import block_kernel
from .params import root_of

__all__ = ["SSSP", "DISTANCE_BITS", "WEIGHT_BITS", "UNREACHED", "attach_weights", "check_parent"]

#: Width of a distance in the vertex state, update and message.
DISTANCE_BITS = 32
#: Width of an edge weight in the edge memory.
WEIGHT_BITS = 32
#: Distance of a vertex not (yet) reached.
UNREACHED = (1 << DISTANCE_BITS) - 1


def _saturated_message(i):
    """The scatter's message: ``distance + weight``, saturated at :data:`UNREACHED`."""
    from amaranth.hdl import Mux  # deferred: Amaranth (heavy)

    # One bit wider than a distance, so the carry tells an overflow.
    total = i.update.distance + i.edge.weight
    return {"distance": Mux(total >= UNREACHED, UNREACHED, total[:DISTANCE_BITS])}


def _root(graph, params):
    return root_of(graph, params, "sssp")


def attach_weights(graph, *, seed=1, max_weight=16):
    """``graph`` with integer weights: its own if it has some, else seeded ``1 .. max_weight``.

    Parameters
    ----------
    graph : gravfm.graph.Graph
    seed : int
        Seed of the generated weights (the same seed gives the same weights).
    max_weight : int
        Largest generated weight; must fit in :data:`WEIGHT_BITS` bits.

    Raises
    ------
    gravfm.errors.ConfigError
        Weights that are not non-negative integers below ``2**WEIGHT_BITS`` (naming the edge).
    """
    if graph.weights is None:
        if isinstance(max_weight, bool) or not isinstance(max_weight, (int, np.integer)) \
                or not 1 <= max_weight < 1 << WEIGHT_BITS:
            raise ConfigError(f"sssp: max_weight must be an integer in 1 .. {(1 << WEIGHT_BITS) - 1}, "
                              f"not {max_weight!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ConfigError(f"sssp: weight_seed must be an integer, not {seed!r}")
        rng = np.random.default_rng(int(seed))
        weights = rng.integers(1, int(max_weight) + 1, size=graph.num_edges, dtype=np.int64)
    else:
        weights = np.asarray(graph.weights)
        if weights.dtype.kind == "f":
            fractional = np.flatnonzero(weights != np.round(weights))
            if fractional.size:
                e = int(fractional[0])
                raise ConfigError(f"sssp: edge {e} has weight {float(weights[e])!r}; the hardware stores "
                                  f"integer weights")
        elif weights.dtype.kind not in "iub":
            raise ConfigError(f"sssp: edge weights must be numbers, not {weights.dtype}")
        weights = weights.astype(np.int64)
        bad = np.flatnonzero((weights < 0) | (weights >= 1 << WEIGHT_BITS))
        if bad.size:
            e = int(bad[0])
            raise ConfigError(f"sssp: edge {e} has weight {int(weights[e])}; the edge memory holds "
                              f"integers 0 .. {(1 << WEIGHT_BITS) - 1}")
        if graph.weights.dtype == np.int64:
            return graph
    return Graph(graph.offsets, graph.targets, weights, cleaning=graph.cleaning,
                 original_ids=graph.original_ids, name=graph.name)


def _prepare(graph, params):
    weighted = attach_weights(graph, seed=params["weight_seed"], max_weight=params["max_weight"])
    _root(weighted, params)
    return weighted


def _initial_state(graph, params):
    root = _root(graph, params)
    n = graph.num_vertices
    distance = np.full(n, UNREACHED, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)
    active = np.zeros(n, dtype=np.int64)
    distance[root] = 0
    parent[root] = root
    active[root] = 1
    return {"distance": distance, "parent": parent, "active": active}


def _reference(graph, params):
    from .reference import sssp  # deferred: scipy.sparse.csgraph (heavy), only to compute a reference
    result = sssp(graph, _root(graph, params))
    longest = int(result.distance.max()) if result.distance.size else 0
    if longest >= UNREACHED:
        far = int(np.argmax(result.distance))
        raise ConfigError(f"sssp: vertex {vertex_label(graph, far)} is at distance {longest}, which does not fit below the "
                          f"{DISTANCE_BITS}-bit 'unreached' value {UNREACHED}")
    return result


def _edge_data(graph):
    if graph.weights is None:
        raise ConfigError("sssp: the graph has no edge weights (run it through SSSP.prepare)")
    return {"weight": np.asarray(graph.weights, dtype=np.int64)}


def _check(graph, params, state, result):
    distance = np.asarray(state["distance"], dtype=np.int64)
    distance = np.where(distance == UNREACHED, -1, distance)
    ok, detail = compare_exact("distance", distance, result.distance, graph=graph)
    if not ok or "parent" not in state:
        return ok, detail
    return check_parent(graph, result.root, result.distance, np.asarray(state["parent"], dtype=np.int64))


def check_parent(graph, root, distance, parent):
    """Is ``parent`` a shortest-path tree for ``distance`` (-1 = unreached)?

    Valid means: the root is its own parent; an unreached vertex has parent -1; every other
    reached vertex ``v`` has a parent ``p`` with an edge ``(p, v)`` of weight
    ``distance[v] - distance[p]`` (a tight edge).

    Returns
    -------
    (bool, str)
        The detail names the first bad vertex.
    """
    def name(vertex):
        return vertex_label(graph, vertex)

    n = graph.num_vertices
    if parent[root] != root:
        return False, f"parent of root {name(root)} is {name(parent[root])}, expected {name(root)}"
    sources, weights = graph.sources().astype(np.int64), np.asarray(graph.weights, dtype=np.int64)
    tight = {}
    reached_edges = (distance[sources] >= 0) & (distance[graph.targets] >= 0)
    for p, v, w in zip(sources[reached_edges], graph.targets[reached_edges], weights[reached_edges]):
        if distance[p] + w == distance[v]:
            tight.setdefault(int(v), set()).add(int(p))
    for v in range(n):
        if v == root:
            continue
        p = int(parent[v])
        if distance[v] < 0:
            if p != -1:
                return False, f"vertex {name(v)}: unreached but has parent {name(p)}"
        elif p not in tight.get(v, ()):
            return False, (f"vertex {name(v)} (distance {distance[v]}): parent {name(p)} is not the source of a "
                           f"tight edge into it")
    return True, ""


SSSP = Algorithm(
    name="sssp",
    vertex={"distance": DISTANCE_BITS, "parent": VERTEXID, "active": 1},
    update={"distance": DISTANCE_BITS},
    message={"distance": DISTANCE_BITS},
    edge={"weight": WEIGHT_BITS},
    gather=block_kernel("ExtremumGather", field="distance", keep="min",
                        also=lambda i: {"parent": i.sender}),
    apply=block_kernel("EmitIfActiveApply"),  # the update is the distance
    scatter=block_kernel("MapScatter", message=_saturated_message),  # through one register
    initial_state=_initial_state,
    reference=_reference,
    check=_check,
    prepare=_prepare,
    edge_data=_edge_data,
    vertexid_fields=("parent",),
    default_params={"root": 0, "weight_seed": 1, "max_weight": 16},
    # A vertex no message reached since its last apply is inactive: its apply is a no-op.
    sparse_apply=True,
)
