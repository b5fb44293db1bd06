"""How good a partition is: load per PE and traffic between FPGAs."""

from dataclasses import dataclass

import numpy as np

from .edge_store import check_partition_fits, neighbor_filter

__all__ = ["PartitionReport", "partition_report", "crossing_edges", "remote_update_copies", "update_fanout"]


def _imbalance(loads):
    """max / mean of a load vector (1.0 is perfect; 1.0 too when there is no load at all)."""
    mean = loads.mean() if loads.size else 0.0
    return float(loads.max() / mean) if mean > 0 else 1.0


@dataclass(frozen=True, eq=False)
class PartitionReport:
    """Load balance and FPGA-crossing traffic of a partition.

    Attributes
    ----------
    method : str
    fpgas, pes_per_fpga : int
    num_vertices, num_edges : int
    vertices_per_pe : np.ndarray of int64
    out_edges_per_pe : np.ndarray of int64
        Out-edges of each PE's vertices: what greedy balances, and the edges a PE stores in the
        GraVF layout.
    in_edges_per_pe : np.ndarray of int64
        Edges whose destination lives on the PE: the edges it stores and scatters in the GraVF-M
        layout (the receiving PE runs the scatter).
    crossing_edges : int
        Edges whose endpoints are on different FPGAs (GraVF messages over the network when every
        vertex is active).
    remote_update_copies : int
        Sum over vertices of the number of OTHER FPGAs hosting at least one out-neighbour:
        GraVF-M update copies over the network when every vertex is active (with the filter).
    """

    method: str
    fpgas: int
    pes_per_fpga: int
    num_vertices: int
    num_edges: int
    vertices_per_pe: np.ndarray
    out_edges_per_pe: np.ndarray
    in_edges_per_pe: np.ndarray
    crossing_edges: int
    remote_update_copies: int

    @property
    def vertex_imbalance(self):
        """max / mean of vertices per PE."""
        return _imbalance(self.vertices_per_pe)

    @property
    def out_edge_imbalance(self):
        """max / mean of out-edges per PE."""
        return _imbalance(self.out_edges_per_pe)

    @property
    def in_edge_imbalance(self):
        """max / mean of in-edges per PE (GraVF-M scatter load)."""
        return _imbalance(self.in_edges_per_pe)

    @property
    def update_fanout(self):
        """Mean number of other FPGAs an update goes to through the neighbour filter
        (``remote_update_copies / |V|``: every vertex active once); 0 without vertices."""
        return self.remote_update_copies / self.num_vertices if self.num_vertices else 0.0

    @property
    def crossing_fraction(self):
        """Fraction of edges crossing FPGAs (0 on one FPGA or without edges)."""
        return self.crossing_edges / self.num_edges if self.num_edges else 0.0

    def to_dict(self):
        """Plain JSON-ready figures."""
        return {
            "method": self.method,
            "fpgas": self.fpgas,
            "pes_per_fpga": self.pes_per_fpga,
            "num_vertices": self.num_vertices,
            "num_edges": self.num_edges,
            "vertices_per_pe": self.vertices_per_pe.tolist(),
            "out_edges_per_pe": self.out_edges_per_pe.tolist(),
            "in_edges_per_pe": self.in_edges_per_pe.tolist(),
            "vertex_imbalance": self.vertex_imbalance,
            "out_edge_imbalance": self.out_edge_imbalance,
            "in_edge_imbalance": self.in_edge_imbalance,
            "crossing_edges": self.crossing_edges,
            "crossing_fraction": self.crossing_fraction,
            "remote_update_copies": self.remote_update_copies,
            "update_fanout": self.update_fanout,
        }


def crossing_edges(graph, fpga_of_vertex):
    """Number of edges whose source and target live on different FPGAs."""
    return int(np.count_nonzero(fpga_of_vertex[graph.sources()] != fpga_of_vertex[graph.targets]))


def remote_update_copies(graph, partition):
    """Sum over vertices of the OTHER FPGAs hosting at least one out-neighbour: the copies of
    their updates the neighbour filter lets onto the links when every vertex is active once."""
    bitmap = neighbor_filter(graph, partition).bitmap
    own = np.zeros_like(bitmap)
    own[np.arange(graph.num_vertices), partition.fpga_of_vertex] = True
    return int(np.count_nonzero(bitmap & ~own))


def update_fanout(graph, partition):
    """Mean number of other FPGAs an update goes to under ``partition`` (GraVF-M's neighbour
    filter: only to FPGAs holding an out-neighbour of its sender), over all vertices; between 0
    and n - 1 (every peer, the paper's model). What the model's link limits take as fan-out.

    Examples
    --------
    >>> from gravfm.graph import tiny_graph
    >>> from gravfm.partition import partition
    >>> grid = tiny_graph("grid")
    >>> update_fanout(grid, partition(grid, 2, 2))  # 13 other FPGAs reached over 16 vertices
    0.8125
    """
    check_partition_fits(graph, partition, "update fan-out")
    return remote_update_copies(graph, partition) / graph.num_vertices if graph.num_vertices else 0.0


def partition_report(graph, partition):
    """Measure ``partition`` of ``graph``.

    Returns
    -------
    PartitionReport

    Examples
    --------
    >>> from gravfm.graph import tiny_graph
    >>> from gravfm.partition import partition
    >>> grid = tiny_graph("grid")
    >>> report = partition_report(grid, partition(grid, 2, 2))
    >>> report.out_edges_per_pe.tolist(), report.crossing_edges
    ([10, 13, 13, 12], 26)
    """
    check_partition_fits(graph, partition, "partition report")
    pe = partition.pe_of_vertex
    num_pes = partition.num_pes
    out_degree = np.diff(graph.offsets)
    out_edges = np.bincount(pe, weights=out_degree, minlength=num_pes).astype(np.int64)
    in_edges = np.bincount(pe[graph.targets], minlength=num_pes).astype(np.int64)
    fpga = partition.fpga_of_vertex
    crossing = crossing_edges(graph, fpga)
    return PartitionReport(
        method=partition.method,
        fpgas=partition.fpgas,
        pes_per_fpga=partition.pes_per_fpga,
        num_vertices=graph.num_vertices,
        num_edges=graph.num_edges,
        vertices_per_pe=partition.vertices_per_pe.copy(),
        out_edges_per_pe=out_edges,
        in_edges_per_pe=in_edges,
        crossing_edges=crossing,
        remote_update_copies=remote_update_copies(graph, partition),
    )
