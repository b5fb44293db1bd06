"""Directed graphs in compressed sparse row (CSR) form.

A :class:`Graph` is immutable: its arrays are read-only, and every transformation (``reverse``,
``symmetrize``) returns a new graph. Cleaning an edge list (dropping self-loops, merging duplicate
edges, relabelling sparse ids to dense ones) is always an explicit policy, and what it did is
recorded in a :class:`CleaningReport` so nothing disappears silently (:mod:`gravfm.graph.cleaning`).
"""

from dataclasses import replace

import numpy as np

from ..errors import GraphFormatError
from .cleaning import (
    DUPLICATE_POLICIES,
    RELABEL_POLICIES,
    SELF_LOOP_POLICIES,
    CleaningReport,
    clean_edge_list,
)
from .csr_arrays import edge_keys, id_dtype, read_only

__all__ = ["Graph", "CleaningReport", "SELF_LOOP_POLICIES", "DUPLICATE_POLICIES", "RELABEL_POLICIES"]


class Graph:
    """A directed graph in CSR form, with optional per-edge weights.

    Build one with :meth:`from_edges` (or a reader / generator of :mod:`gravfm.graph`); the
    constructor takes ready CSR arrays and only checks them.

    Parameters
    ----------
    offsets : array of int, shape (num_vertices + 1,)
        Row pointers: the out-edges of ``v`` are ``targets[offsets[v]:offsets[v+1]]``.
    targets : array of int, shape (num_edges,)
        Destination of every edge, sorted by (source, target).
    weights : array, shape (num_edges,), optional
        Per-edge weights aligned with ``targets``.
    cleaning : CleaningReport, optional
        How the edge list was cleaned; defaults to "nothing removed".
    original_ids : array of int, shape (num_vertices,), optional
        Id of each vertex in the input before relabelling; None when ids were not relabelled.
    name : str
        Free-form label (file name or generator spec).

    Attributes
    ----------
    num_vertices, num_edges : int
    offsets : np.ndarray of int64, read-only
    targets : np.ndarray of int32 (int64 when num_vertices >= 2**31), read-only
    weights : np.ndarray or None, read-only
    cleaning : CleaningReport
    original_ids : np.ndarray of int64 or None, read-only
    name : str
    """

    def __init__(self, offsets, targets, weights=None, *, cleaning=None, original_ids=None, name=""):
        offsets = np.asarray(offsets, dtype=np.int64)
        if offsets.ndim != 1 or offsets.size < 1:
            raise GraphFormatError("CSR offsets must be a 1-dimensional array of num_vertices + 1 entries")
        num_vertices = offsets.size - 1
        targets = np.asarray(targets)
        if targets.ndim != 1:
            raise GraphFormatError(f"CSR targets must be 1-dimensional, not shape {targets.shape}")
        if offsets[0] != 0 or offsets[-1] != targets.size or np.any(np.diff(offsets) < 0):
            raise GraphFormatError(
                f"CSR offsets must rise from 0 to the number of targets ({targets.size})")
        if targets.size and (targets.min() < 0 or targets.max() >= num_vertices):
            raise GraphFormatError(f"CSR targets must lie in 0..{num_vertices - 1}")
        if targets.size > 1:
            # Within a row the targets must not decrease; a decrease at a row boundary is fine.
            row_start = np.zeros(targets.size, dtype=bool)
            row_start[offsets[:-1][offsets[:-1] < targets.size]] = True
            if np.any((targets[1:] < targets[:-1]) & ~row_start[1:]):
                raise GraphFormatError("CSR targets must be sorted within each vertex's row")
        if weights is not None:
            weights = np.asarray(weights)
            if weights.shape != targets.shape:
                raise GraphFormatError(
                    f"weights have shape {weights.shape}, expected one per edge ({targets.size},)")
            weights = read_only(weights.copy())
        if original_ids is not None:
            original_ids = np.asarray(original_ids, dtype=np.int64)
            if original_ids.shape != (num_vertices,):
                raise GraphFormatError(
                    f"original_ids have shape {original_ids.shape}, expected ({num_vertices},)")
            original_ids = read_only(original_ids.copy())
        self._assign(offsets.copy(), targets.astype(id_dtype(num_vertices)), weights, cleaning,
                     original_ids, name)

    @classmethod
    def _from_valid_arrays(cls, offsets, targets, weights, cleaning, original_ids, name):
        """A graph from arrays known to be valid (built here), without checking or copying them."""
        graph = cls.__new__(cls)
        graph._assign(offsets, targets.astype(id_dtype(offsets.size - 1), copy=False),
                      None if weights is None else read_only(weights),
                      cleaning, None if original_ids is None else read_only(original_ids), name)
        return graph

    def _assign(self, offsets, targets, weights, cleaning, original_ids, name):
        self.offsets = read_only(offsets)
        self.targets = read_only(targets)
        self.weights = weights
        self.original_ids = original_ids
        self.name = str(name)
        if cleaning is None:
            cleaning = CleaningReport(input_edges=targets.size, edges=targets.size,
                                      self_loops_kept=self._count_self_loops())
        self.cleaning = cleaning

    # --- construction ------------------------------------------------------------------------

    @classmethod
    def from_edges(cls, src, dst, num_vertices=None, weights=None, *, self_loops="keep",
                   duplicates="keep", relabel="none", mirror=False, original_ids=None, name=""):
        """Build a graph from parallel arrays of edge sources and destinations.

        Parameters
        ----------
        src, dst : array-like of int
            Edge endpoints (any order; the CSR is sorted by (source, target)).
        num_vertices : int, optional
            Number of vertices; default ``max id + 1`` (0 for no edges). With ``relabel`` compacting,
            it is the number of distinct ids and must not be given.
        weights : array-like, optional
            One weight per edge.
        self_loops : {"keep", "drop"}
        duplicates : {"keep", "merge"}
            ``"merge"`` keeps the first occurrence of each (source, target), with its weight.
        relabel : {"none", "compact", "appearance", "auto"}
            See :data:`RELABEL_POLICIES`.
        mirror : bool
            Also add the reverse ``(v, u)`` of every edge ``(u, v)`` with ``u != v`` (for undirected
            input); merge duplicates to avoid doubling edges that were already listed both ways.
        original_ids : array-like of int, optional
            Input id of each vertex ``0 .. num_vertices-1`` when the caller has already renumbered
            them (e.g. a reader shifting 1-based ids); composed with ``relabel`` compaction.
        name : str

        Raises
        ------
        GraphFormatError
            Negative or out-of-range ids, mismatched array lengths.
        SpecError
            An unknown policy value.
        """
        offsets, targets, weights, cleaning, original_ids = clean_edge_list(
            src, dst, num_vertices, weights, self_loops=self_loops, duplicates=duplicates,
            relabel=relabel, mirror=mirror, original_ids=original_ids)
        return cls._from_valid_arrays(offsets, targets, weights, cleaning, original_ids, name)


    # --- sizes and degrees -------------------------------------------------------------------

    @property
    def num_vertices(self):
        """Number of vertices (ids ``0 .. num_vertices-1``)."""
        return self.offsets.size - 1

    @property
    def num_edges(self):
        """Number of directed edges (duplicates and self-loops counted if kept)."""
        return int(self.targets.size)

    def out_degree(self):
        """Out-degree of every vertex, ``np.int64[num_vertices]``."""
        return np.diff(self.offsets)

    def hub(self):
        """The input's id of the vertex with the most out-edges (the first of them): a root
        inside a power-law graph's giant component, where vertex 0 may have no edge at all."""
        return self.original_id(int(np.argmax(self.out_degree())))

    def in_degree(self):
        """In-degree of every vertex, ``np.int64[num_vertices]``."""
        return np.bincount(self.targets, minlength=self.num_vertices).astype(np.int64)

    def sources(self):
        """Source of every edge in CSR order (same dtype as ``targets``)."""
        ids = np.arange(self.num_vertices, dtype=self.targets.dtype)
        return np.repeat(ids, self.out_degree())

    def edges(self):
        """``(sources, targets)`` of every edge in CSR order."""
        return self.sources(), self.targets

    def neighbors(self, v):
        """Out-neighbours of vertex ``v`` (a read-only view of ``targets``)."""
        v = int(v)
        if not 0 <= v < self.num_vertices:
            raise GraphFormatError(f"vertex {v} is out of range for a graph of {self.num_vertices} vertices")
        return self.targets[self.offsets[v]:self.offsets[v + 1]]

    def original_id(self, v):
        """The input's id of vertex ``v`` (``v`` itself when the ids were not relabelled)."""
        return int(v) if self.original_ids is None else int(self.original_ids[v])

    def internal_id(self, original):
        """The vertex whose input id is ``original``, or None when the input has no such vertex."""
        original = int(original)
        if self.original_ids is None:
            return original if 0 <= original < self.num_vertices else None
        found = np.flatnonzero(self.original_ids == original)
        return int(found[0]) if found.size else None

    def _count_self_loops(self):
        return int(np.count_nonzero(self.sources() == self.targets))

    # --- derived graphs ----------------------------------------------------------------------

    def reverse(self):
        """The graph with every edge turned around (weights follow their edges)."""
        src, dst = self.edges()
        reversed_graph = Graph.from_edges(dst, src, self.num_vertices, self.weights, name=self.name)
        return self._derived(reversed_graph)

    def symmetrize(self):
        """The undirected version: every edge in both directions, all duplicates merged.

        Self-loops are kept once. Where ``(u, v)`` and ``(v, u)`` both exist with different
        weights, each direction keeps its own weight.
        """
        src, dst = self.edges()
        symmetric = Graph.from_edges(src, dst, self.num_vertices, self.weights, mirror=True,
                                     duplicates="merge", name=self.name)
        return self._derived(symmetric)

    def _derived(self, graph):
        graph.original_ids = self.original_ids
        graph.cleaning = replace(graph.cleaning, relabelled=self.cleaning.relabelled)
        return graph

    def is_symmetric(self):
        """True when every edge ``(u, v)`` has its reverse ``(v, u)`` (as a set of pairs)."""
        forward = edge_keys(*self.edges(), self.num_vertices)
        backward = edge_keys(self.targets, self.sources(), self.num_vertices)
        return bool(np.array_equal(np.unique(forward), np.unique(backward)))

    def with_name(self, name):
        """The same graph under another name."""
        other = Graph(self.offsets, self.targets, self.weights, cleaning=self.cleaning,
                      original_ids=self.original_ids, name=name)
        return other

    def __repr__(self):
        weighted = ", weighted" if self.weights is not None else ""
        label = f"{self.name!r}, " if self.name else ""
        return f"Graph({label}{self.num_vertices} vertices, {self.num_edges} edges{weighted})"

