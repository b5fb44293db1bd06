"""Vertices to processing elements, and the edge arrays each PE loads.

``partition(graph, fpgas, pes_per_fpga, method)`` returns a :class:`Partition`
(``docs/interfaces.md`` §4); :func:`partition_report` measures it; :func:`gravfm_edge_stores`,
:func:`gravf_edge_stores` and :func:`neighbor_filter` build what the hardware loads. Pure numpy
(pymetis is imported only for METIS), no Amaranth.
"""

from .edge_store import (
    EdgeStore,
    EdgeStores,
    Footprint,
    NeighborFilter,
    edge_stores,
    gravf_edge_stores,
    gravfm_edge_stores,
    neighbor_filter,
)
from .methods import METHODS, greedy, greedy_bins, metis, partition, round_robin, sorted_greedy
from .partition import Partition, bits_for_count
from .report import PartitionReport, partition_report, update_fanout

__all__ = [
    "Partition",
    "bits_for_count",
    "METHODS",
    "partition",
    "round_robin",
    "greedy",
    "greedy_bins",
    "sorted_greedy",
    "metis",
    "PartitionReport",
    "partition_report",
    "update_fanout",
    "EdgeStore",
    "EdgeStores",
    "Footprint",
    "NeighborFilter",
    "edge_stores",
    "gravfm_edge_stores",
    "gravf_edge_stores",
    "neighbor_filter",
]
