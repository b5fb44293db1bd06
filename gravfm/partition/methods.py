"""Partitioners: round-robin, greedy edge-based (id order or largest first) and METIS.

All of them return a :class:`~gravfm.partition.Partition`. The graph is only read through its CSR
arrays (``offsets``, ``targets``), so any object following ``docs/interfaces.md`` §1 works.
"""

import heapq

import numpy as np
import scipy.sparse

from ..errors import ConfigError, SpecError
from .partition import Partition

__all__ = ["METHODS", "partition", "round_robin", "greedy", "sorted_greedy", "metis", "greedy_bins"]

#: The partitioning methods, spelled as their functions (and as everywhere else: CLI, JSON, reports).
METHODS = ("greedy", "sorted_greedy", "round_robin", "metis")


def _check_sizes(graph, fpgas, pes_per_fpga):
    for name, value in (("fpgas", fpgas), ("pes_per_fpga", pes_per_fpga)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ConfigError(f"partition: {name} must be a positive integer, not {value!r}")
    num_pes = int(fpgas) * int(pes_per_fpga)
    if num_pes > graph.num_vertices:
        raise ConfigError(
            f"partition: {fpgas} FPGA(s) x {pes_per_fpga} PE(s) = {num_pes} PEs is more than"
            f" the graph's {graph.num_vertices} vertices")
    return int(fpgas), int(pes_per_fpga)


def round_robin(graph, fpgas, pes_per_fpga):
    """Vertex ``v`` to global PE ``v mod (fpgas * pes_per_fpga)``: balanced vertex counts."""
    fpgas, pes_per_fpga = _check_sizes(graph, fpgas, pes_per_fpga)
    pe = np.arange(graph.num_vertices, dtype=np.int64) % (fpgas * pes_per_fpga)
    return Partition(pe, fpgas, pes_per_fpga, method="round_robin")


def greedy_bins(weights, num_bins):
    """The paper's greedy rule: each item, in the given order, to the lightest bin so far.

    Ties between equally heavy bins go to the bin with fewer items, then to the lowest index
    (so zero-weight items spread out instead of piling onto bin 0 while the weights are tied).

    Parameters
    ----------
    weights : array_like of int
        Weight of each item (a vertex's out-degree), in input order.
    num_bins : int

    Returns
    -------
    np.ndarray of int32
        Bin of each item.
    """
    weights = np.asarray(weights, dtype=np.int64)
    bins = np.empty(weights.size, dtype=np.int32)
    if weights.size == 0:
        return bins
    # The rule is sequential, so it runs as a loop; a heap of (load, items, bin) makes each step
    # O(log bins) and the loop runs on Python ints (about 1 s per million vertices).
    heap = [(0, 0, b) for b in range(num_bins)]
    choice = []
    append = choice.append
    heapreplace = heapq.heapreplace
    for weight in weights.tolist():
        load, items, b = heap[0]
        append(b)
        heapreplace(heap, (load + weight, items + 1, b))
    bins[:] = choice
    return bins


def greedy(graph, fpgas, pes_per_fpga):
    """Greedy edge-based partitioning (the paper's default).

    Vertices in input order (increasing id) each go to the PE with the fewest out-edges so far,
    over all ``fpgas * pes_per_fpga`` PEs (location-agnostic).
    """
    fpgas, pes_per_fpga = _check_sizes(graph, fpgas, pes_per_fpga)
    pe = greedy_bins(np.diff(graph.offsets), fpgas * pes_per_fpga)
    return Partition(pe, fpgas, pes_per_fpga, method="greedy")


def sorted_greedy(graph, fpgas, pes_per_fpga):
    """Greedy edge-based partitioning over the vertices in decreasing out-degree order.

    The largest-first order of list scheduling: the hubs are spread first and the small vertices
    even out the loads after them, so the out-edges are balanced more tightly than in id order,
    and every PE gets a like mix of high- and low-degree vertices. The mix matters to a
    bulk-synchronous run, which waits for its busiest PE in every superstep: where the active
    vertices of a superstep follow the degree (the hubs' neighbours early in BFS, the
    low-degree vertices late in WCC), PEs with like mixes get like shares of each superstep's
    edges. Ties in degree keep increasing id order.
    """
    fpgas, pes_per_fpga = _check_sizes(graph, fpgas, pes_per_fpga)
    degree = np.diff(graph.offsets)
    order = np.argsort(-degree, kind="stable")
    pe = np.empty(graph.num_vertices, dtype=np.int32)
    pe[order] = greedy_bins(degree[order], fpgas * pes_per_fpga)
    return Partition(pe, fpgas, pes_per_fpga, method="sorted_greedy")


def _symmetric_adjacency(graph):
    """CSR (xadj, adjncy) of the undirected simple graph underlying ``graph``, as METIS wants:
    both directions, no self-loops, no duplicates."""
    n = graph.num_vertices
    sources = np.repeat(np.arange(n, dtype=np.int32), np.diff(graph.offsets))
    targets = graph.targets
    keep = sources != targets
    rows = np.concatenate([sources[keep], targets[keep]])
    cols = np.concatenate([targets[keep], sources[keep]])
    # tocsr() sums the duplicates into single entries; the values themselves are not used.
    matrix = scipy.sparse.coo_matrix((np.ones(rows.size, dtype=np.int32), (rows, cols)),
                                     shape=(n, n)).tocsr()
    matrix.sort_indices()
    return matrix.indptr.astype(np.int64), matrix.indices.astype(np.int64)


def metis(graph, fpgas, pes_per_fpga, ufactor=1, seed=0):
    """METIS across FPGAs, then greedy edge-based inside each FPGA.

    METIS (through pymetis) cuts the symmetrized graph into ``fpgas`` parts, minimizing the edges
    between FPGAs while balancing the out-degree (the vertex weight) to within ``ufactor``/1000.
    The vertices of each FPGA are then spread over its PEs by :func:`greedy_bins` in increasing
    id order.

    Parameters
    ----------
    ufactor : int
        METIS' allowed imbalance in thousandths (the paper keeps the default 1).
    seed : int
        METIS' random seed, for reproducible partitions.
    """
    fpgas, pes_per_fpga = _check_sizes(graph, fpgas, pes_per_fpga)
    if isinstance(ufactor, bool) or not isinstance(ufactor, (int, np.integer)) or ufactor < 1:
        raise ConfigError(f"partition: ufactor must be a positive integer, not {ufactor!r}")
    out_degree = np.diff(graph.offsets)
    if fpgas == 1:
        fpga = np.zeros(graph.num_vertices, dtype=np.int64)
    else:
        import pymetis  # deferred: a compiled extension, loaded only when METIS is asked for

        xadj, adjncy = _symmetric_adjacency(graph)
        # METIS cannot balance a total weight of zero; an edgeless graph balances vertex counts.
        vertex_weights = out_degree if out_degree.sum() > 0 else np.ones_like(out_degree)
        options = pymetis.Options(ufactor=int(ufactor), seed=int(seed))
        weights = vertex_weights.astype(np.int64)
        if hasattr(pymetis, "CSRAdjacency"):  # pymetis >= 2025.2 deprecates bare xadj/adjncy
            result = pymetis.part_graph(fpgas, pymetis.CSRAdjacency(xadj, adjncy),
                                        vweights=weights, options=options)
        else:
            result = pymetis.part_graph(fpgas, xadj=xadj, adjncy=adjncy, vweights=weights,
                                        options=options)
        fpga = np.asarray(result.vertex_part, dtype=np.int64)
    pe = np.empty(graph.num_vertices, dtype=np.int64)
    for f in range(fpgas):
        members = np.flatnonzero(fpga == f)
        pe[members] = f * pes_per_fpga + greedy_bins(out_degree[members], pes_per_fpga)
    return Partition(pe, fpgas, pes_per_fpga, method="metis")


def partition(graph, fpgas, pes_per_fpga, method="greedy", **options):
    """Partition ``graph`` over ``fpgas * pes_per_fpga`` PEs.

    Parameters
    ----------
    graph : gravfm.graph.Graph
    fpgas, pes_per_fpga : int
    method : {"greedy", "sorted_greedy", "round_robin", "metis"}
    **options
        Passed to the method: ``ufactor`` and ``seed`` for METIS.

    Returns
    -------
    Partition

    Raises
    ------
    gravfm.errors.SpecError
        Unknown method or an option the method does not take.
    gravfm.errors.ConfigError
        More PEs than vertices, or a non-positive size.

    Examples
    --------
    >>> from gravfm.graph import tiny_graph
    >>> parts = partition(tiny_graph("grid"), fpgas=2, pes_per_fpga=2)
    >>> parts.num_pes, parts.pe_of_vertex[:4].tolist(), parts.fpga_of_vertex[:4].tolist()
    (4, [0, 1, 2, 3], [0, 0, 1, 1])
    """
    functions = {"greedy": greedy, "sorted_greedy": sorted_greedy, "round_robin": round_robin, "metis": metis}
    if method not in functions:
        raise SpecError(
            f"partition: unknown method {method!r}; choose one of {', '.join(METHODS)}")
    allowed = {"ufactor", "seed"} if method == "metis" else set()
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise SpecError(f"partition: method {method!r} takes no option {unknown[0]!r}")
    return functions[method](graph, fpgas, pes_per_fpga, **options)
