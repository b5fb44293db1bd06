"""The edge arrays the hardware loads, and the neighbour filter.

Two layouts (paper Fig. 4), named after the architecture that reads them
(:mod:`gravfm.architectures`), and the hybrid's (:mod:`gravfm.partition.hybrid_store`):

- **GraVF-M** (delayed scatter; architectures that broadcast updates): PE ``g`` stores, for EVERY vertex of the
  graph, the out-edges whose destination lives on ``g``. Its index has one ``(start, length)``
  entry per hardware vertex id of the whole system (``num_pes << local_bits`` entries, addressed by
  the sender's hw id of the incoming update); its edge array holds destination LOCAL indices.
- **GraVF** (architectures that send messages): PE ``g`` stores its own vertices' full out-edge lists. Its index
  has ``1 << local_bits`` entries addressed by local index; destinations are hardware ids.

Within an edge list, edges keep CSR order (increasing destination id). Entries of hw ids that
hold no vertex have length 0. The builders lay out all PEs' edges once (a gather in sender order
and a radix sort by PE, O(E)); one PE's index is then cut out on demand, so an RMAT scale-20 graph
never needs num_pes full indexes in memory at once.
"""

from dataclasses import dataclass

import numpy as np

from ..architectures import BUILT_ARCHITECTURES, DEFAULT_ARCHITECTURE, GRAVF, GRAVFM, built_architecture_info
from ..errors import ConfigError

__all__ = [
    "EdgeStore",
    "EdgeStores",
    "Footprint",
    "NeighborFilter",
    "gravfm_edge_stores",
    "gravf_edge_stores",
    "edge_stores",
    "neighbor_filter",
]

#: A layout is named after its architecture.
LAYOUTS = BUILT_ARCHITECTURES


@dataclass(frozen=True, eq=False)
class EdgeStore:
    """The edge storage of one PE.

    Attributes
    ----------
    pe : int
        Global PE index.
    layout : str
        The architecture's name (:data:`LAYOUTS`).
    start, length : np.ndarray of int64
        Index: the edge list of entry ``i`` is ``destination[start[i] : start[i] + length[i]]``.
        Entry ``i`` is a sender hw id (GraVF-M) or a local index (GraVF).
    destination : np.ndarray of int64
        Destination local index (GraVF-M) or destination hw id (GraVF) of each stored edge.
    weights : np.ndarray or None
        Edge data aligned with ``destination``.
    """

    pe: int
    layout: str
    start: np.ndarray
    length: np.ndarray
    destination: np.ndarray
    weights: np.ndarray | None

    @property
    def num_edges(self):
        """Edges stored on this PE."""
        return self.destination.size


@dataclass(frozen=True)
class Footprint:
    """Memory needed by an edge store, in bits.

    Attributes
    ----------
    index_entry_bits, edge_bits : int
        Width of one index entry (start + length) and of one stored edge (destination + data).
    index_bits_per_pe, edge_bits_per_pe : tuple of int
        Bits of every PE's index and edge array.
    """

    index_entry_bits: int
    edge_bits: int
    index_bits_per_pe: tuple
    edge_bits_per_pe: tuple

    @property
    def bits_per_pe(self):
        """Index plus edges, per PE."""
        return tuple(i + e for i, e in zip(self.index_bits_per_pe, self.edge_bits_per_pe))

    @property
    def total_bits(self):
        """Whole system."""
        return sum(self.bits_per_pe)

    def to_dict(self):
        return {
            "index_entry_bits": self.index_entry_bits,
            "edge_bits": self.edge_bits,
            "index_bits_per_pe": list(self.index_bits_per_pe),
            "edge_bits_per_pe": list(self.edge_bits_per_pe),
            "total_bits": self.total_bits,
        }


class EdgeStores:
    """Edge stores of all PEs in one layout; ``stores[g]`` is PE ``g``'s :class:`EdgeStore`.

    Build with :func:`gravfm_edge_stores`, :func:`gravf_edge_stores` or :func:`edge_stores`.

    Attributes
    ----------
    layout : str
        The architecture's name (:data:`LAYOUTS`).
    local_bits : int
    num_pes : int
    index_entries : int
        Entries in every PE's index.
    destination_bits : int
        Width of a stored destination (local index or hw id).
    edges_per_pe : np.ndarray of int64
    max_list_length : int
        Longest edge list of any index entry (sets the width of ``length``).
    """

    def __init__(self, *, layout, local_bits, num_pes, index_entries, destination_bits,
                 edge_offsets, slot, destination, weights):
        self.layout = layout
        self.local_bits = local_bits
        self.num_pes = num_pes
        self.index_entries = index_entries
        self.destination_bits = destination_bits
        # All PEs' edges, concatenated in PE order; PE g owns edge_offsets[g]:edge_offsets[g+1].
        self._edge_offsets = edge_offsets
        self._slot = slot  # index entry of every edge
        self._destination = destination
        self._weights = weights
        self.edges_per_pe = np.diff(edge_offsets)
        if slot.size:
            # Runs of equal (PE, slot) are edge lists: their longest run is the longest list.
            list_starts = np.empty(slot.size, dtype=bool)
            list_starts[0] = True
            np.not_equal(slot[1:], slot[:-1], out=list_starts[1:])
            list_starts[edge_offsets[:-1][self.edges_per_pe > 0]] = True
            first = np.flatnonzero(list_starts)
            self.max_list_length = int(np.diff(first, append=slot.size).max())
        else:
            self.max_list_length = 0

    def __len__(self):
        return self.num_pes

    def __iter__(self):
        return (self[g] for g in range(self.num_pes))

    def __getitem__(self, pe):
        if not 0 <= pe < self.num_pes:
            raise IndexError(f"PE {pe} does not exist (there are {self.num_pes})")
        first, last = int(self._edge_offsets[pe]), int(self._edge_offsets[pe + 1])
        length = np.bincount(self._slot[first:last], minlength=self.index_entries)
        length = length.astype(np.int64)
        start = np.cumsum(length) - length
        weights = None if self._weights is None else self._weights[first:last]
        return EdgeStore(pe=pe, layout=self.layout, start=start, length=length,
                         destination=self._destination[first:last], weights=weights)

    def footprint(self, *, start_bits=None, length_bits=None, edge_data_bits=None):
        """Bits of memory every PE needs for this layout.

        Parameters
        ----------
        start_bits : int, optional
            Width of ``start``; default: enough to address the largest PE's edge array.
        length_bits : int, optional
            Width of ``length``; default: enough for :attr:`max_list_length`.
        edge_data_bits : int, optional
            Width of the edge data; default 0 without weights, else the bits of the largest
            integer weight (32 for floating-point weights).

        Returns
        -------
        Footprint
        """
        if start_bits is None:
            start_bits = max(1, int(self.edges_per_pe.max(initial=0)).bit_length())
        if length_bits is None:
            length_bits = max(1, self.max_list_length.bit_length())
        if edge_data_bits is None:
            edge_data_bits = _weight_bits(self._weights)
        for name, value in (("start_bits", start_bits), ("length_bits", length_bits),
                            ("edge_data_bits", edge_data_bits)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ConfigError(f"edge store: {name} must be a non-negative integer,"
                                  f" not {value!r}")
        entry_bits = int(start_bits) + int(length_bits)
        edge_bits = self.destination_bits + int(edge_data_bits)
        return Footprint(
            index_entry_bits=entry_bits,
            edge_bits=edge_bits,
            index_bits_per_pe=(self.index_entries * entry_bits,) * self.num_pes,
            edge_bits_per_pe=tuple(int(e) * edge_bits for e in self.edges_per_pe),
        )


def _weight_bits(weights):
    if weights is None or weights.size == 0:
        return 0
    if weights.dtype.kind == "f":
        return 32
    return max(1, int(np.abs(weights).max()).bit_length() + int(weights.min() < 0))


def check_partition_fits(graph, partition, what):
    """Raise ConfigError unless ``partition`` covers exactly the vertices of ``graph``."""
    if graph.num_vertices != partition.num_vertices:
        raise ConfigError(f"{what}: the partition covers {partition.num_vertices} vertices"
                          f" but the graph has {graph.num_vertices}")


def _edges_in_sender_hw_order(graph, partition):
    """Indices of all edges, grouped by sender in increasing hw id, CSR order within a sender,
    and the sender of each (:meth:`Partition.vertices_of_pe`'s order)."""
    senders = partition.vertices_in_hw_order
    offsets = graph.offsets
    lengths = offsets[senders + 1] - offsets[senders]
    first_in_concat = np.cumsum(lengths) - lengths
    edge_index = np.arange(graph.num_edges, dtype=np.int64)
    edge_index += np.repeat(offsets[senders] - first_in_concat, lengths)
    return edge_index, np.repeat(senders, lengths)


def _check_weights(graph, weights):
    if weights is None:
        weights = graph.weights
    if weights is None:
        return None
    weights = np.asarray(weights)
    if weights.shape != (graph.num_edges,):
        raise ConfigError(f"edge store: expected {graph.num_edges} edge weights,"
                          f" got shape {weights.shape}")
    return weights


def _small_ints(values, bound):
    """``values`` in the narrowest integer type holding ``0 .. bound`` (numpy radix-sorts
    16-bit keys, which makes the by-PE sort linear)."""
    return values.astype(np.int16 if bound < 2**15 else np.int64)


def gravfm_edge_stores(graph, partition, local_bits, weights=None):
    """GraVF-M layout: each PE stores every vertex's out-edges into that PE.

    Parameters
    ----------
    graph : gravfm.graph.Graph
    partition : Partition
    local_bits : int
        Bits of the local index in a hardware vertex id.
    weights : array_like, optional
        Edge data per edge in CSR order; defaults to ``graph.weights``.

    Returns
    -------
    EdgeStores
        Index of ``num_pes << local_bits`` entries per PE (by sender hw id); destinations are
        local indices (``local_bits`` wide).
    """
    check_partition_fits(graph, partition, "edge store")
    weights = _check_weights(graph, weights)
    hw = partition.hw_ids(local_bits)
    edge_index, sender = _edges_in_sender_hw_order(graph, partition)
    targets = graph.targets[edge_index]
    owner = _small_ints(partition.pe_of_vertex[targets], partition.num_pes)
    # A stable sort by owning PE keeps each PE's edges in sender hw id order, then CSR order.
    by_owner = np.argsort(owner, kind="stable")
    edge_index = edge_index[by_owner]
    return EdgeStores(
        layout=GRAVFM.name,
        local_bits=local_bits,
        num_pes=partition.num_pes,
        index_entries=partition.num_pes << local_bits,
        destination_bits=max(1, local_bits),
        edge_offsets=_edge_offsets(owner, partition.num_pes),
        slot=hw[sender[by_owner]],
        destination=partition.local_index[targets[by_owner]],
        weights=None if weights is None else weights[edge_index],
    )


def gravf_edge_stores(graph, partition, local_bits, weights=None):
    """GraVF layout: each PE stores its own vertices' full out-edge lists.

    Returns
    -------
    EdgeStores
        Index of ``1 << local_bits`` entries per PE (by local index); destinations are hw ids
        (``pe_bits + local_bits`` wide).
    """
    check_partition_fits(graph, partition, "edge store")
    weights = _check_weights(graph, weights)
    hw = partition.hw_ids(local_bits)
    # In sender hw id order, each PE's own vertices' lists are already contiguous.
    edge_index, sender = _edges_in_sender_hw_order(graph, partition)
    return EdgeStores(
        layout=GRAVF.name,
        local_bits=local_bits,
        num_pes=partition.num_pes,
        index_entries=1 << local_bits,
        destination_bits=partition.pe_bits + local_bits,
        edge_offsets=_edge_offsets(partition.pe_of_vertex[sender], partition.num_pes),
        slot=partition.local_index[sender],
        destination=hw[graph.targets[edge_index]],
        weights=None if weights is None else weights[edge_index],
    )


def _edge_offsets(owner, num_pes):
    counts = np.bincount(owner, minlength=num_pes)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def edge_stores(graph, partition, local_bits, layout=DEFAULT_ARCHITECTURE, weights=None):
    """Edge stores in the layout of the architecture called ``layout`` (:data:`LAYOUTS`)."""
    from .hybrid_store import hybrid_edge_stores   # deferred: it builds on this module

    try:
        scatter_at = built_architecture_info(layout).scatter_at
    except ConfigError:
        raise ConfigError(f"edge store: unknown layout {layout!r}; choose {', '.join(LAYOUTS)}") from None
    build = {"receivers": gravfm_edge_stores, "sender": gravf_edge_stores, "one_receiver": hybrid_edge_stores}
    return build[scatter_at](graph, partition, local_bits, weights=weights)


@dataclass(frozen=True, eq=False)
class NeighborFilter:
    """Which FPGAs host out-neighbours of each vertex (the paper's |V| x n_FPGA bitmap).

    Attributes
    ----------
    bitmap : np.ndarray of bool, shape (V, fpgas)
        ``bitmap[v, f]`` iff some out-edge of ``v`` ends on FPGA ``f`` (``f`` may be ``v``'s own).
    """

    bitmap: np.ndarray

    @property
    def footprint_bits(self):
        """Bits of the whole bitmap, |V| x n_FPGA."""
        return int(self.bitmap.size)

    def words_of_pe(self, partition, pe, local_bits):
        """Filter words for PE ``pe``'s own vertices, addressed by local index.

        Returns
        -------
        np.ndarray of int64, length ``1 << local_bits``
            Bit ``f`` of word ``i`` is set iff FPGA ``f`` hosts an out-neighbour of the vertex
            with local index ``i``; unused entries are 0.
        """
        partition._check_local_bits(local_bits)
        if self.bitmap.shape[1] > 63:
            raise ConfigError(f"neighbor filter: {self.bitmap.shape[1]} FPGAs do not fit a 64-bit"
                              f" word; use the bitmap")
        vertices = partition.vertices_of_pe(pe)
        place_values = np.int64(1) << np.arange(self.bitmap.shape[1], dtype=np.int64)
        words = np.zeros(1 << local_bits, dtype=np.int64)
        words[:vertices.size] = self.bitmap[vertices].astype(np.int64) @ place_values
        return words


def neighbor_filter(graph, partition):
    """Build the :class:`NeighborFilter` of ``graph`` under ``partition``."""
    check_partition_fits(graph, partition, "neighbor filter")
    fpgas = partition.fpgas
    bitmap = np.zeros((graph.num_vertices, fpgas), dtype=bool)
    flat = graph.sources().astype(np.int64) * fpgas + partition.fpga_of_vertex[graph.targets]
    bitmap.reshape(-1)[flat] = True
    return NeighborFilter(bitmap=bitmap)
