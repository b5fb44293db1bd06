"""The hybrid architecture's edge layout: per FPGA, partitioned by source over its scatter units.

PE slot ``g`` (local PE ``d`` of FPGA ``f``) holds the scatter unit that owns the senders of every
PE whose global index is ``d`` mod ``pes_per_fpga`` (:mod:`gravfm.hw.hybrid.network`: the sender's
local PE bits), and stores, for each of them, its out-edges whose destinations live on FPGA ``f``.
The index is GraVF-M's (one ``(start, length)`` entry per hardware vertex id of the system,
addressed by the sender's hw id); destinations are hw ids (GraVF's), since they may live on any
PE of the FPGA. Every edge is stored once in the whole system, as in GraVF.

A hub sender (``Partition.hubs``) has its update taken by every scatter unit of its own FPGA
(the hub path of :mod:`gravfm.hw.hybrid.network`), so its edges into that FPGA are dealt over
all of them, round robin from a unit that depends on the sender (the remainders spread); its
edges into other FPGAs stay with their owner there.
"""

import numpy as np

from ..architectures import HYBRID
from .edge_store import (EdgeStores, _check_weights, _edge_offsets, _edges_in_sender_hw_order, _small_ints,
                         check_partition_fits)

__all__ = ["hybrid_edge_stores", "scatter_owner"]


def scatter_owner(pe_of_vertex, pes_per_fpga):
    """Local PE index of the scatter unit that owns each sender (of every FPGA it reaches)."""
    return np.asarray(pe_of_vertex, dtype=np.int64) % pes_per_fpga


def hybrid_edge_stores(graph, partition, local_bits, weights=None):
    """Hybrid layout: slot ``f * p + owner(v)`` stores ``v``'s out-edges into FPGA ``f`` (a
    hub's into its own FPGA: dealt over the FPGA's slots, module docstring).

    Returns
    -------
    EdgeStores
        Index of ``num_pes << local_bits`` entries per PE (by sender hw id); destinations are hw
        ids (``pe_bits + local_bits`` wide).
    """
    check_partition_fits(graph, partition, "edge store")
    weights = _check_weights(graph, weights)
    hw = partition.hw_ids(local_bits)
    edge_index, sender = _edges_in_sender_hw_order(graph, partition)
    targets = graph.targets[edge_index]
    p = partition.pes_per_fpga
    unit = scatter_owner(partition.pe_of_vertex[sender], p)
    if partition.hubs is not None:
        unit = _deal_hub_edges(partition, sender, targets, unit, hw)
    slot_pe = partition.fpga_of_vertex[targets].astype(np.int64) * p + unit
    slot_pe = _small_ints(slot_pe, partition.num_pes)
    # A stable sort by slot keeps each slot's edges in sender hw id order, then CSR order.
    by_slot = np.argsort(slot_pe, kind="stable")
    edge_index = edge_index[by_slot]
    return EdgeStores(
        layout=HYBRID.name,
        local_bits=local_bits,
        num_pes=partition.num_pes,
        index_entries=partition.num_pes << local_bits,
        destination_bits=partition.pe_bits + local_bits,
        edge_offsets=_edge_offsets(slot_pe, partition.num_pes),
        slot=hw[sender[by_slot]],
        destination=hw[targets[by_slot]],
        weights=None if weights is None else weights[edge_index],
    )


def _deal_hub_edges(partition, sender, targets, unit, hw):
    """``unit`` with each hub's edges into its own FPGA dealt round robin over the FPGA's units,
    starting at the unit of the hub's hw id (``sender``, ``targets``: every edge, grouped by sender)."""
    fpga = partition.fpga_of_vertex
    dealt = np.flatnonzero(partition.hubs[sender] & (fpga[sender] == fpga[targets]))
    if not dealt.size:
        return unit
    # Edges are grouped by sender, so a hub's local edges are consecutive among ``dealt``.
    first = np.flatnonzero(np.r_[True, sender[dealt][1:] != sender[dealt][:-1]])
    rank = np.arange(dealt.size) - np.repeat(first, np.diff(np.r_[first, dealt.size]))
    unit = unit.copy()
    unit[dealt] = (rank + hw[sender[dealt]]) % partition.pes_per_fpga
    return unit
