"""The busiest unit of every superstep: the partition's share of a bulk-synchronous run's time.

A superstep ends when its busiest PE has done its share, so a run takes at least the sum over
supersteps of the busiest PE's work, not the messages over the PEs (the bound
:func:`gravfm.model.supersteps.design_overhead_cycles` adds to). What a PE does in a round, one
item a cycle, depends on where the architecture scatters (:class:`~gravfm.architectures.ArchitectureInfo`):

- every PE takes every update (GraVF-M) and scatters those of its own destinations: the larger
  of its messages (edges into its vertices) and the round's updates over its update lanes;
- one scatter unit per sender (the hybrid: the unit of the sender's PE) or the sender's own PE
  (GraVF): the larger of its senders' out-edges (scatter) and the messages to its vertices
  (gather). The hybrid's hubs (``hubs``) have their edges dealt over every unit, each taking
  its share rounded up.

One FPGA only: between FPGAs the links and the filter shape a round too. Computed from the
software reference's senders of every round (never from a measurement); a prediction.
"""

import numpy as np
import scipy.sparse

__all__ = ["busiest_unit_items"]


def busiest_unit_items(arch, graph, pe_of_vertex, pes, updates_per_superstep, senders_per_superstep,
                       update_lanes=1, hubs=None):
    """Items (cycles at one a cycle) of each superstep's busiest PE on one FPGA of ``pes`` PEs.

    Parameters
    ----------
    arch : gravfm.architectures.ArchitectureInfo
    graph
        CSR ``offsets`` and ``targets``.
    pe_of_vertex : array of int
    updates_per_superstep : sequence of int
    senders_per_superstep : sequence of arrays, or None
        Each round's senders; None: every vertex in each round with updates (PageRank).
    update_lanes : int
    hubs : array of bool, optional
        The hybrid's hub senders (:meth:`gravfm.partition.Partition.with_hubs`).

    Returns
    -------
    list of int, one per superstep
    """
    pe_of_vertex = np.asarray(pe_of_vertex)
    out_degree = np.diff(graph.offsets)
    everyone = np.arange(graph.num_vertices)
    # The adjacency's rows of a round's senders hold their edges' destinations (O(their edges)).
    adjacency = scipy.sparse.csr_matrix((np.ones(len(graph.targets), dtype=np.int8), graph.targets, graph.offsets),
                                        shape=(graph.num_vertices, graph.num_vertices))
    busiest = []
    for round_index, updates in enumerate(updates_per_superstep):
        if updates == 0:
            busiest.append(0)
            continue
        senders = everyone if senders_per_superstep is None else np.asarray(senders_per_superstep[round_index],
                                                                           dtype=np.int64)
        gather = np.bincount(pe_of_vertex[adjacency[senders].indices], minlength=pes).max()
        if arch.scatter_at == "receivers":
            busiest.append(int(max(gather, -(-updates // update_lanes))))
        else:
            busiest.append(int(max(gather, _busiest_scatter(senders, pe_of_vertex, out_degree, pes, hubs))))
    return busiest


def _busiest_scatter(senders, pe_of_vertex, out_degree, pes, hubs):
    """The most out-edges one scatter unit streams for ``senders`` (a hub's dealt over all)."""
    if hubs is None:
        return np.bincount(pe_of_vertex[senders], weights=out_degree[senders], minlength=pes).max()
    hub = hubs[senders]
    own = np.bincount(pe_of_vertex[senders[~hub]], weights=out_degree[senders[~hub]], minlength=pes)
    return own.max() + (-(-out_degree[senders[hub]] // pes)).sum()
