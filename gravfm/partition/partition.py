"""Where each vertex lives: the :class:`Partition` and its id mappings."""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import ConfigError

__all__ = ["Partition", "bits_for_count"]


def bits_for_count(count):
    """Bits needed to index ``count`` items (``0 .. count-1``); at least 1."""
    return max(1, (int(count) - 1).bit_length())


@dataclass(frozen=True, eq=False)
class Partition:
    """Assignment of every vertex to a processing element.

    The global PE index is ``g = fpga * pes_per_fpga + pe``. Within a PE, vertices get local
    indices in increasing global id (its hubs first, if any), and hardware vertex ids are
    ``hw_id = (g << local_bits) | local_index`` (``docs/interfaces.md`` §4).

    Parameters
    ----------
    pe_of_vertex : array_like of int
        Global PE index of every vertex. Stored as a read-only int32 array.
    fpgas : int
        Number of FPGAs, at least 1.
    pes_per_fpga : int
        PEs on every FPGA, at least 1.
    method : str, optional
        Name of the partitioner that made it (for reports).
    hubs : array_like of bool, optional
        The hybrid's hub senders (:meth:`with_hubs`): each PE numbers its hubs first, so that a
        hub is a local index below the PE's :attr:`hub_senders`. Stored read-only.
    """

    pe_of_vertex: np.ndarray
    fpgas: int
    pes_per_fpga: int
    method: str = field(default="")
    hubs: np.ndarray | None = field(default=None)

    def __post_init__(self):
        for name in ("fpgas", "pes_per_fpga"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ConfigError(f"partition: {name} must be a positive integer, not {value!r}")
            object.__setattr__(self, name, int(value))
        pe_of_vertex = np.asarray(self.pe_of_vertex)
        if pe_of_vertex.ndim != 1 or (pe_of_vertex.size and pe_of_vertex.dtype.kind not in "iu"):
            raise ConfigError(
                f"partition: pe_of_vertex must be a 1-D integer array, not {pe_of_vertex.dtype}"
                f" with shape {pe_of_vertex.shape}")
        if pe_of_vertex.size:
            bad = np.flatnonzero((pe_of_vertex < 0) | (pe_of_vertex >= self.num_pes))
            if bad.size:
                raise ConfigError(
                    f"partition: vertex {int(bad[0])} is on PE {int(pe_of_vertex[bad[0]])}, but"
                    f" there are only {self.num_pes} PEs")
        pe_of_vertex = pe_of_vertex.astype(np.int32)  # a private copy, frozen below
        pe_of_vertex.flags.writeable = False
        object.__setattr__(self, "pe_of_vertex", pe_of_vertex)
        if self.hubs is not None:
            hubs = np.asarray(self.hubs)
            if hubs.shape != pe_of_vertex.shape or hubs.dtype != bool:
                raise ConfigError(f"partition: hubs must be one bool per vertex ({pe_of_vertex.size}), not "
                                  f"{hubs.dtype} with shape {hubs.shape}")
            hubs = hubs.copy()
            hubs.flags.writeable = False
            object.__setattr__(self, "hubs", hubs)

    def with_hubs(self, hubs):
        """This partition with the hub senders ``hubs`` (one bool per vertex): the same PEs, each
        numbering its hubs first (the hybrid's hub path, :mod:`gravfm.hw.hybrid.network`)."""
        return Partition(self.pe_of_vertex, self.fpgas, self.pes_per_fpga, method=self.method, hubs=hubs)

    @cached_property
    def hub_senders(self):
        """np.int64[num_pes]: each PE's hubs, which hold its local indices below this (0 without hubs)."""
        if self.hubs is None:
            return np.zeros(self.num_pes, dtype=np.int64)
        return np.bincount(self.pe_of_vertex[self.hubs], minlength=self.num_pes).astype(np.int64)

    @property
    def num_vertices(self):
        """Number of vertices partitioned."""
        return self.pe_of_vertex.size

    @property
    def num_pes(self):
        """Total number of PEs, ``fpgas * pes_per_fpga``."""
        return self.fpgas * self.pes_per_fpga

    @cached_property
    def vertices_per_pe(self):
        """np.int64[num_pes]: number of vertices on each PE."""
        return np.bincount(self.pe_of_vertex, minlength=self.num_pes).astype(np.int64)

    @cached_property
    def fpga_of_vertex(self):
        """np.int32[V]: FPGA hosting each vertex."""
        return (self.pe_of_vertex // self.pes_per_fpga).astype(np.int32)

    @cached_property
    def local_index(self):
        """np.int64[V]: index of each vertex among its PE's vertices, in increasing global id
        (hubs first)."""
        order = self.vertices_in_hw_order
        first_of_pe = np.cumsum(self.vertices_per_pe) - self.vertices_per_pe
        local = np.empty(self.num_vertices, dtype=np.int64)
        local[order] = np.arange(self.num_vertices) - first_of_pe[self.pe_of_vertex[order]]
        return local

    @cached_property
    def vertices_in_hw_order(self):
        """np.ndarray: every vertex in hardware id order (by PE, hubs first, then by global id)."""
        if self.hubs is None:
            return np.argsort(self.pe_of_vertex, kind="stable")  # stable keeps ids increasing
        return np.lexsort((~self.hubs, self.pe_of_vertex))

    def vertices_of_pe(self, pe):
        """Global ids of the vertices on global PE ``pe`` in local order (increasing, hubs first)."""
        if not 0 <= pe < self.num_pes:
            raise ConfigError(f"partition: PE {pe} does not exist (there are {self.num_pes})")
        first = int(self.vertices_per_pe[:pe].sum())
        return self.vertices_in_hw_order[first:first + int(self.vertices_per_pe[pe])]

    @property
    def min_local_bits(self):
        """Smallest ``local_bits`` that can index the most loaded PE's vertices."""
        return bits_for_count(self.vertices_per_pe.max() if self.num_pes else 1)

    @property
    def pe_bits(self):
        """Bits of the global PE index."""
        return bits_for_count(self.num_pes)

    def _check_local_bits(self, local_bits):
        if isinstance(local_bits, bool) or not isinstance(local_bits, (int, np.integer)) \
                or local_bits < 0:
            raise ConfigError(f"local_bits must be a non-negative integer, not {local_bits!r}")
        busiest = int(self.vertices_per_pe.max()) if self.num_vertices else 0
        if busiest > 1 << local_bits:
            pe = int(np.argmax(self.vertices_per_pe))
            raise ConfigError(
                f"PE {pe} holds {busiest} vertices, more than local_bits={local_bits} can index"
                f" ({1 << local_bits}); use local_bits >= {self.min_local_bits}")
        return int(local_bits)

    def hw_ids(self, local_bits):
        """np.int64[V]: hardware id ``(g << local_bits) | local_index`` of every vertex."""
        local_bits = self._check_local_bits(local_bits)
        return (self.pe_of_vertex.astype(np.int64) << local_bits) | self.local_index

    def vertex_of_hw_id(self, hw_id, local_bits):
        """Global vertex id of hardware id(s) ``hw_id``; -1 where no vertex has that id."""
        local_bits = self._check_local_bits(local_bits)
        hw_id = np.asarray(hw_id, dtype=np.int64)
        pe = hw_id >> local_bits
        local = hw_id & ((1 << local_bits) - 1)
        valid = (pe >= 0) & (pe < self.num_pes)
        valid &= local < self.vertices_per_pe[np.where(valid, pe, 0)]
        first_of_pe = np.cumsum(self.vertices_per_pe) - self.vertices_per_pe
        position = first_of_pe[np.where(valid, pe, 0)] + np.where(valid, local, 0)
        sorted_ids = self.vertices_in_hw_order
        if sorted_ids.size == 0:
            return np.full(hw_id.shape, -1, dtype=np.int64)
        result = sorted_ids[np.minimum(position, sorted_ids.size - 1)].astype(np.int64)
        return np.where(valid, result, -1)
