"""Software references for the built-in algorithms, superstep by superstep.

Each function runs the algorithm with exactly the superstep semantics of ``docs/interfaces.md`` §2,
vectorized over one superstep at a time with numpy/scipy, and returns the answer together with
the number of updates and messages of every superstep. The hardware's counters are checked
against these counts, so the counting rules are part of each function's contract:

- round ``r`` starts with the apply of every vertex; ``updates[r]`` counts the vertices that emit
  an update in that apply;
- every update is scattered over every out-edge of its sender, so ``messages[r]`` is the sum of
  the out-degrees (with duplicate edges counted) of the vertices that emitted in round ``r``;
- the run ends after the first round whose apply emits nothing; ``supersteps`` counts the apply
  rounds, that silent last one included.

The graph is used as given (directed, duplicates and self-loops included); preparing it (e.g.
symmetrizing for WCC) is the caller's business.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph

from ..errors import ConfigError

__all__ = [
    "SuperstepCounts",
    "WccResult",
    "BfsResult",
    "PageRankResult",
    "SsspResult",
    "wcc",
    "wcc_components",
    "bfs",
    "bfs_levels",
    "check_bfs_parent",
    "pagerank",
    "sssp",
]


@dataclass(frozen=True)
class SuperstepCounts:
    """Work done in each superstep of a run.

    Attributes
    ----------
    supersteps : int
        Number of apply rounds executed, including the last one that emitted nothing.
    messages_per_superstep : tuple of int
        ``messages[r]``: messages produced by the scatter of round ``r`` (traversed edges).
        Has ``supersteps`` entries; the last one is 0.
    updates_per_superstep : tuple of int
        ``updates[r]``: updates emitted by the apply of round ``r``. Last entry is 0.
    """

    supersteps: int
    messages_per_superstep: tuple
    updates_per_superstep: tuple

    @property
    def total_messages(self):
        """Messages over the whole run: the numerator of TEPS."""
        return sum(self.messages_per_superstep)

    @property
    def total_updates(self):
        """Updates over the whole run."""
        return sum(self.updates_per_superstep)


@dataclass(frozen=True)
class WccResult(SuperstepCounts):
    """Result of :func:`wcc`.

    Attributes
    ----------
    labels : np.ndarray of int64
        Final label of each vertex: the lowest id among the vertices that can reach it
        (itself included). On a symmetric graph, the lowest id of its component.
    """

    labels: np.ndarray


@dataclass(frozen=True)
class BfsResult(SuperstepCounts):
    """Result of :func:`bfs`.

    Attributes
    ----------
    root : int
        The root vertex.
    parent : np.ndarray of int64
        BFS parent of each vertex; ``parent[root] == root``; -1 for unreachable vertices.
        Where several parents are valid this reference picks the lowest sender id; the
        hardware may pick any (check with :func:`check_bfs_parent`).
    level : np.ndarray of int64
        Hop distance from the root; -1 for unreachable vertices.
    """

    root: int
    parent: np.ndarray
    level: np.ndarray


@dataclass(frozen=True)
class PageRankResult(SuperstepCounts):
    """Result of :func:`pagerank`.

    Attributes
    ----------
    rank : np.ndarray
        Rank of each vertex after the last superstep, in the dtype asked for.
    damping : float
        The damping factor used.
    """

    rank: np.ndarray
    damping: float


@dataclass(frozen=True)
class SsspResult(SuperstepCounts):
    """Result of :func:`sssp`.

    Attributes
    ----------
    root : int
        The root vertex.
    distance : np.ndarray
        Shortest-path distance from the root. With integer weights (or none): int64 and -1 for
        unreachable vertices. With floating-point weights: float64 and ``inf`` for unreachable.
    """

    root: int
    distance: np.ndarray


# --- helpers ---------------------------------------------------------------------------------

def _out_edges_of(graph, senders):
    """Edge indices (CSR order) of all out-edges of ``senders``, and the sender of each.

    Costs O(len(senders) + their out-edges), not O(E), so sparse frontiers stay cheap.
    """
    offsets = graph.offsets
    starts = offsets[senders]
    lengths = offsets[senders + 1] - starts
    total = int(lengths.sum())
    sender_of_edge = np.repeat(senders, lengths)
    # Position within the frontier's concatenated edge lists, shifted to each list's start.
    first_in_concat = np.cumsum(lengths) - lengths
    edge_index = np.arange(total, dtype=np.int64) + np.repeat(starts - first_in_concat, lengths)
    return edge_index, sender_of_edge


def _check_root(graph, root, name):
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)):
        raise ConfigError(f"{name}: root must be an integer vertex id, not {root!r}")
    root = int(root)
    if not 0 <= root < graph.num_vertices:
        raise ConfigError(
            f"{name}: root {root} is out of range for a graph of {graph.num_vertices} vertices")
    return root


def _freeze(counts):
    return tuple(int(c) for c in counts)


def _min_propagation(graph, values, active, edge_values):
    """Shared loop of WCC and SSSP: active vertices send ``values[sender] + edge_value``,
    each vertex keeps the minimum, and the vertices whose value decreased are active next.
    """
    out_degree = np.diff(graph.offsets)
    updates, messages = [], []
    while True:
        senders = np.flatnonzero(active)
        updates.append(senders.size)
        messages.append(int(out_degree[senders].sum()))
        if senders.size == 0:
            break
        edge_index, sender_of_edge = _out_edges_of(graph, senders)
        carried = values[sender_of_edge]
        if edge_values is not None:
            carried = carried + edge_values[edge_index]
        gathered = values.copy()
        np.minimum.at(gathered, graph.targets[edge_index], carried)
        active = gathered < values
        values = gathered
    return values, updates, messages


# --- WCC -------------------------------------------------------------------------------------

def wcc(graph):
    """Label propagation (weakly connected components on a symmetric graph).

    Round 0: every vertex's label is its own id and every vertex emits it. A message carries the
    sender's label; gather keeps the minimum. In round ``r >= 1`` a vertex emits its label iff
    the gather of round ``r - 1``'s messages lowered it.

    Parameters
    ----------
    graph : gravfm.graph.Graph
        Used as given (directed). Symmetrize it first to get weakly connected components.

    Returns
    -------
    WccResult
    """
    labels = np.arange(graph.num_vertices, dtype=np.int64)
    active = np.ones(graph.num_vertices, dtype=bool)
    labels, updates, messages = _min_propagation(graph, labels, active, None)
    return WccResult(
        supersteps=len(updates),
        messages_per_superstep=_freeze(messages),
        updates_per_superstep=_freeze(updates),
        labels=labels,
    )


def wcc_components(graph):
    """Lowest vertex id of each vertex's weakly connected component (scipy, no supersteps).

    Equal to ``wcc(graph.symmetrize()).labels``.

    Returns
    -------
    np.ndarray of int64
    """
    n = graph.num_vertices
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    adjacency = _adjacency(graph, np.ones(graph.num_edges, dtype=np.int8))
    _, component = scipy.sparse.csgraph.connected_components(adjacency, directed=True,
                                                             connection="weak")
    # Vertices are scanned in id order, so a component's first occurrence is its lowest id.
    _, first_vertex = np.unique(component, return_index=True)
    return first_vertex[component].astype(np.int64)


def _adjacency(graph, data):
    n = graph.num_vertices
    return scipy.sparse.csr_matrix((data, graph.targets, graph.offsets), shape=(n, n))


# --- BFS -------------------------------------------------------------------------------------

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
    root = _check_root(graph, root, "bfs")
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
        updates.append(frontier.size)
        messages.append(int(out_degree[frontier].sum()))
        if frontier.size == 0:
            break
        edge_index, sender_of_edge = _out_edges_of(graph, frontier)
        receivers = graph.targets[edge_index].astype(np.int64)
        fresh = parent[receivers] == -1
        receivers, sender_of_edge = receivers[fresh], sender_of_edge[fresh]
        candidate = np.full(n, n, dtype=np.int64)
        np.minimum.at(candidate, receivers, sender_of_edge)
        frontier = np.unique(receivers)
        parent[frontier] = candidate[frontier]
        depth += 1
        level[frontier] = depth
    return BfsResult(
        supersteps=len(updates),
        messages_per_superstep=_freeze(messages),
        updates_per_superstep=_freeze(updates),
        root=root,
        parent=parent,
        level=level,
    )


def bfs_levels(graph, root):
    """Hop distance of every vertex from ``root`` (-1 if unreachable), computed by scipy.

    Independent of :func:`bfs`, so it can check it.
    """
    root = _check_root(graph, root, "bfs")
    adjacency = _adjacency(graph, np.ones(graph.num_edges, dtype=np.int8))
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
    root = _check_root(graph, root, "bfs")
    n = graph.num_vertices
    parent = np.asarray(parent)
    if parent.shape != (n,):
        return False, f"parent array has shape {parent.shape}, expected ({n},)"
    parent = parent.astype(np.int64)
    if parent[root] != root:
        return False, f"vertex {root} (root): parent is {parent[root]}, expected {root}"
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
    messages = {
        1: f"vertex {v}: unreachable from {root} but has parent {p}",
        2: f"vertex {v}: reachable from {root} (level {level[v]}) but has no parent",
        3: f"vertex {v}: parent {p} is not a vertex id",
        4: f"vertex {v}: level {level[v]} but its parent {p} is at level {level[p] if 0 <= p < n else '?'}",
        5: f"vertex {v}: parent {p} but the graph has no edge ({p}, {v})",
    }
    return False, messages[int(reason[v])]


# --- PageRank --------------------------------------------------------------------------------

def pagerank(graph, supersteps=30, damping=0.85, dtype=np.float64):
    """PageRank in Pregel form, for a fixed number of supersteps.

    Convention (N = number of vertices, d = damping, S = supersteps):

    - round 0: ``rank = 1/N``;
    - round ``r >= 1``: ``rank = (1 - d)/N + d * sum(received)``, where ``received`` are the
      messages scattered in round ``r - 1`` (no special handling of dangling vertices: their
      rank is not redistributed);
    - in every round ``r < S - 1`` EVERY vertex emits the update ``rank / out_degree`` (a vertex
      without out-edges emits too, its update produces no message); round ``S - 1`` is silent.

    So ``updates = [N] * (S-1) + [0]``, ``messages = [E] * (S-1) + [0]``, and the rank is
    updated ``S - 1`` times. All arithmetic is done in ``dtype``; messages to one vertex are
    summed in order of sender id, so float32 results may differ from hardware in the last bits.

    Parameters
    ----------
    graph : gravfm.graph.Graph
    supersteps : int
        Number of apply rounds, at least 1 (the paper uses 30).
    damping : float
    dtype : numpy floating dtype
        ``np.float32`` to mirror single-precision hardware, ``np.float64`` by default.

    Returns
    -------
    PageRankResult
    """
    if isinstance(supersteps, bool) or not isinstance(supersteps, (int, np.integer)) \
            or supersteps < 1:
        raise ConfigError(f"pagerank: supersteps must be a positive integer, not {supersteps!r}")
    if not 0.0 <= float(damping) <= 1.0:
        raise ConfigError(f"pagerank: damping must be between 0 and 1, not {damping!r}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ConfigError(f"pagerank: dtype must be a floating-point type, not {dtype}")
    n = graph.num_vertices
    if n == 0:
        raise ConfigError("pagerank: the graph has no vertices")
    out_degree = np.diff(graph.offsets)
    # A vertex without out-edges divides by 1: its update reaches nobody anyway.
    divisor = np.maximum(out_degree, 1).astype(dtype)
    # Transposed adjacency: row v lists its in-edges, so one product sums what v receives.
    incoming = _adjacency(graph, np.ones(graph.num_edges, dtype=dtype)).T.tocsr()
    base = dtype.type((1.0 - damping) / n)
    d = dtype.type(damping)
    rank = np.full(n, 1.0 / n, dtype=dtype)
    for _ in range(supersteps - 1):
        contribution = rank / divisor
        received = (incoming @ contribution).astype(dtype, copy=False)
        rank = base + d * received
    counts_updates = [n] * (supersteps - 1) + [0]
    counts_messages = [graph.num_edges] * (supersteps - 1) + [0]
    return PageRankResult(
        supersteps=supersteps,
        messages_per_superstep=_freeze(counts_messages),
        updates_per_superstep=_freeze(counts_updates),
        rank=rank.astype(dtype, copy=False),
        damping=float(damping),
    )


# --- SSSP ------------------------------------------------------------------------------------

def sssp(graph, root, weights=None):
    """Single-source shortest paths by Bellman-Ford supersteps.

    Round 0: the root (distance 0) emits 0. A message carries ``distance + weight`` of its edge;
    gather keeps the minimum. In round ``r >= 1`` a vertex emits its distance iff the gather of
    round ``r - 1`` lowered it. Weights must be non-negative (so the rounds terminate).

    Parameters
    ----------
    graph : gravfm.graph.Graph
    root : int
    weights : array_like, optional
        One weight per edge (CSR order). Defaults to ``graph.weights``, and to 1 for every edge
        when the graph has none.

    Returns
    -------
    SsspResult
        Integer weights give int64 distances with -1 for unreachable vertices; floating-point
        weights give float64 distances with ``inf`` for unreachable ones.
    """
    root = _check_root(graph, root, "sssp")
    if weights is None:
        weights = graph.weights
    if weights is None:
        weights = np.ones(graph.num_edges, dtype=np.int64)
    weights = np.asarray(weights)
    if weights.shape != (graph.num_edges,):
        raise ConfigError(
            f"sssp: expected {graph.num_edges} edge weights, got shape {weights.shape}")
    integer = weights.dtype.kind in "iub"
    if not integer and weights.dtype.kind != "f":
        raise ConfigError(f"sssp: edge weights must be numbers, not {weights.dtype}")
    weights = weights.astype(np.int64 if integer else np.float64)
    if weights.size and not integer and np.isnan(weights).any():
        raise ConfigError(f"sssp: edge {int(np.flatnonzero(np.isnan(weights))[0])} has a NaN weight")
    if weights.size and weights.min() < 0:
        raise ConfigError(
            f"sssp: edge {int(np.argmin(weights))} has negative weight {weights.min()}")
    n = graph.num_vertices
    unreached = np.iinfo(np.int64).max if integer else np.inf
    distance = np.full(n, unreached, dtype=weights.dtype)
    distance[root] = 0
    active = np.zeros(n, dtype=bool)
    active[root] = True
    distance, updates, messages = _min_propagation(graph, distance, active, weights)
    if integer:
        distance[distance == unreached] = -1
    return SsspResult(
        supersteps=len(updates),
        messages_per_superstep=_freeze(messages),
        updates_per_superstep=_freeze(updates),
        root=root,
        distance=distance,
    )
