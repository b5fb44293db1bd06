"""Directed graphs in compressed sparse row (CSR) form.

A :class:`Graph` is immutable: its arrays are read-only, and every transformation (``reverse``,
``symmetrize``) returns a new graph. Cleaning an edge list (dropping self-loops, merging duplicate
edges, relabelling sparse ids to dense ones) is always an explicit policy, and what it did is
recorded in a :class:`CleaningReport` so nothing disappears silently.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..errors import GraphFormatError, SpecError

__all__ = ["Graph", "CleaningReport", "SELF_LOOP_POLICIES", "DUPLICATE_POLICIES", "RELABEL_POLICIES"]

#: Accepted values of the ``self_loops`` policy.
SELF_LOOP_POLICIES = ("keep", "drop")
#: Accepted values of the ``duplicates`` policy.
DUPLICATE_POLICIES = ("keep", "merge")
#: Accepted values of the ``relabel`` policy: ``"none"`` uses the ids as given, ``"compact"``
#: maps the distinct ids (in increasing order) to ``0 .. k-1``, ``"appearance"`` numbers them in
#: order of first appearance in the edge list (``u`` before ``v`` on each edge, as fpgagraphlib's
#: loader does, but from 0), ``"auto"`` compacts only when the ids are not already ``0 .. max``.
RELABEL_POLICIES = ("none", "compact", "appearance", "auto")

# Below this many vertices, vertex ids are stored as int32 (half the memory of int64).
_INT32_LIMIT = 2**31


@dataclass(frozen=True)
class CleaningReport:
    """What building a graph did to its input edge list.

    The counts always add up:
    ``input_edges + mirrored_edges == edges + self_loops_removed + duplicates_removed``.

    Attributes
    ----------
    input_edges : int
        Edges given (lines read, generated edges, ...), before any cleaning.
    edges : int
        Edges kept in the graph.
    self_loops_removed : int
        Edges ``(v, v)`` dropped by the ``self_loops="drop"`` policy.
    duplicates_removed : int
        Repeated ``(u, v)`` edges dropped by the ``duplicates="merge"`` policy (only the first
        occurrence, with its weight, is kept).
    relabelled : bool
        True when vertex ids were renumbered to ``0 .. num_vertices-1`` (see ``Graph.original_ids``).
    self_loops_kept : int
        Self-loops still in the graph.
    mirrored_edges : int
        Edges added as the reverse of an input edge (``mirror=True``, Matrix Market
        ``symmetric`` storage); self-loops are never mirrored.
    """

    input_edges: int = 0
    edges: int = 0
    self_loops_removed: int = 0
    duplicates_removed: int = 0
    relabelled: bool = False
    self_loops_kept: int = 0
    mirrored_edges: int = 0

    def summary(self):
        """One line for humans, e.g. ``'100 edges in, 3 self-loops and 5 duplicates removed'``."""
        mirrored = f", {self.mirrored_edges} mirrored" if self.mirrored_edges else ""
        text = (f"{self.input_edges} edges in{mirrored}, {self.self_loops_removed} self-loops and "
                f"{self.duplicates_removed} duplicates removed")
        return text + (", ids relabelled" if self.relabelled else "")


def _id_dtype(num_vertices):
    return np.int32 if num_vertices < _INT32_LIMIT else np.int64


def _read_only(array):
    array.flags.writeable = False
    return array


def _check_policy(name, value, allowed):
    if value not in allowed:
        raise SpecError(f"{name} policy must be one of {', '.join(map(repr, allowed))}, not {value!r}")


def _as_id_array(values, what):
    array = np.asarray(values)
    if array.ndim != 1:
        raise GraphFormatError(f"{what} ids must be a 1-dimensional array, not shape {array.shape}")
    if array.size == 0:
        return array.astype(np.int64)
    if not np.issubdtype(array.dtype, np.integer):
        if np.issubdtype(array.dtype, np.floating) and np.all(np.floor(array) == array):
            return array.astype(np.int64)
        raise GraphFormatError(f"{what} ids must be integers, not {array.dtype}")
    if array.dtype.itemsize > 8 or array.dtype == np.uint64:
        if array.max() >= 2**62:
            raise GraphFormatError(f"{what} id {array.max()} is too large")
        return array.astype(np.int64)
    return array  # int8 .. int64: used as they are (no int64 copy of a large int32 edge list)


def _compact(src, dst, by_appearance=False):
    """Map the distinct ids of ``src`` and ``dst`` to ``0 .. k-1``.

    In increasing order of id, or with ``by_appearance`` in order of first appearance in the
    sequence ``src[0], dst[0], src[1], dst[1], ...``.
    """
    interleaved = np.column_stack([src, dst]).ravel()
    original_ids, first_seen, inverse = np.unique(interleaved, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if by_appearance:
        order = np.argsort(first_seen, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        original_ids, inverse = original_ids[order], rank[inverse]
    return inverse[0::2], inverse[1::2], original_ids


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
            weights = _read_only(weights.copy())
        if original_ids is not None:
            original_ids = np.asarray(original_ids, dtype=np.int64)
            if original_ids.shape != (num_vertices,):
                raise GraphFormatError(
                    f"original_ids have shape {original_ids.shape}, expected ({num_vertices},)")
            original_ids = _read_only(original_ids.copy())
        self._assign(offsets.copy(), targets.astype(_id_dtype(num_vertices)), weights, cleaning,
                     original_ids, name)

    @classmethod
    def _from_valid_arrays(cls, offsets, targets, weights, cleaning, original_ids, name):
        """A graph from arrays known to be valid (built here), without checking or copying them."""
        graph = cls.__new__(cls)
        graph._assign(offsets, targets.astype(_id_dtype(offsets.size - 1), copy=False),
                      None if weights is None else _read_only(weights),
                      cleaning, None if original_ids is None else _read_only(original_ids), name)
        return graph

    def _assign(self, offsets, targets, weights, cleaning, original_ids, name):
        self.offsets = _read_only(offsets)
        self.targets = _read_only(targets)
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
        _check_policy("self_loops", self_loops, SELF_LOOP_POLICIES)
        _check_policy("duplicates", duplicates, DUPLICATE_POLICIES)
        _check_policy("relabel", relabel, RELABEL_POLICIES)
        src = _as_id_array(src, "source")
        dst = _as_id_array(dst, "destination")
        if src.shape != dst.shape:
            raise GraphFormatError(f"{src.size} sources but {dst.size} destinations")
        if weights is not None:
            weights = np.asarray(weights)
            if weights.shape != src.shape:
                raise GraphFormatError(f"{weights.size} weights for {src.size} edges")
        input_edges = int(src.size)
        if src.size and min(src.min(), dst.min()) < 0:
            bad = int(min(src.min(), dst.min()))
            raise GraphFormatError(f"vertex ids must be non-negative, found {bad}")

        given_ids = None if original_ids is None else np.asarray(original_ids, dtype=np.int64)
        original_ids = None
        max_id = int(max(src.max(), dst.max())) if src.size else -1
        if relabel == "auto":
            relabel = "none" if num_vertices is not None or _ids_are_dense(src, dst, max_id) else "compact"
        if relabel in ("compact", "appearance"):
            if num_vertices is not None:
                raise GraphFormatError("num_vertices cannot be given when relabelling compacts the ids")
            src, dst, original_ids = _compact(src, dst, by_appearance=relabel == "appearance")
            num_vertices = original_ids.size
        elif num_vertices is None:
            num_vertices = max_id + 1
        else:
            num_vertices = int(num_vertices)
            if num_vertices < 0:
                raise GraphFormatError(f"num_vertices must be non-negative, not {num_vertices}")
            if max_id >= num_vertices:
                raise GraphFormatError(
                    f"vertex id {max_id} is out of range for a graph of {num_vertices} vertices")

        if given_ids is not None:
            if original_ids is None:  # ids kept as they are
                if given_ids.shape != (num_vertices,):
                    raise GraphFormatError(
                        f"original_ids has {given_ids.size} entries, expected one per vertex ({num_vertices})")
                original_ids = given_ids
            else:  # compacted: compose the two renumberings
                if given_ids.size <= max_id:
                    raise GraphFormatError(f"original_ids has {given_ids.size} entries, too few for id {max_id}")
                original_ids = given_ids[original_ids]

        mirrored_edges = 0
        if mirror:
            proper = src != dst
            mirrored_edges = int(np.count_nonzero(proper))
            src, dst = np.concatenate([src, dst[proper]]), np.concatenate([dst, src[proper]])
            weights = None if weights is None else np.concatenate([weights, weights[proper]])

        self_loops_removed = 0
        if self_loops == "drop":
            keep = src != dst
            self_loops_removed = int(src.size - np.count_nonzero(keep))
            if self_loops_removed:
                src, dst = src[keep], dst[keep]
                weights = None if weights is None else weights[keep]

        loops = src == dst
        self_loops_kept = int(np.count_nonzero(loops))
        if duplicates == "merge" and self_loops_kept:
            self_loops_kept = int(np.unique(src[loops]).size)
        offsets, dst, weights, duplicates_removed = _build_csr(src, dst, weights, num_vertices,
                                                               merge=duplicates == "merge")
        cleaning = CleaningReport(
            input_edges=input_edges,
            edges=int(dst.size),
            self_loops_removed=self_loops_removed,
            duplicates_removed=duplicates_removed,
            relabelled=original_ids is not None,
            self_loops_kept=self_loops_kept,
            mirrored_edges=mirrored_edges,
        )
        if original_ids is not None:
            original_ids = np.array(original_ids, dtype=np.int64)  # a private copy: it becomes read-only
        return cls._from_valid_arrays(offsets, dst, weights, cleaning, original_ids, name)

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
        forward = _edge_keys(*self.edges(), self.num_vertices)
        backward = _edge_keys(self.targets, self.sources(), self.num_vertices)
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


def _ids_are_dense(src, dst, max_id):
    """True when every id in ``0 .. max_id`` appears as an endpoint."""
    if max_id < 0:
        return True
    seen = np.zeros(max_id + 1, dtype=bool)
    seen[src] = True
    seen[dst] = True
    return bool(seen.all())


def _edge_keys(src, dst, num_vertices):
    return src.astype(np.int64) * max(num_vertices, 1) + dst.astype(np.int64)


def _build_csr(src, dst, weights, num_vertices, *, merge):
    """CSR arrays ``(offsets, targets, weights, duplicates_removed)`` of the edges.

    Edges are sorted by (source, target), stably so that merging duplicates keeps the first
    listed edge's weight. Always returns new arrays, never the caller's.
    """
    if num_vertices >= _INT32_LIMIT:  # source * num_vertices would overflow int64
        return _build_csr_lexsorted(src, dst, weights, num_vertices, merge=merge)
    # One int64 key per edge carries both endpoints: one sort, one comparison for duplicates.
    keys = _edge_keys(src, dst, num_vertices)
    if weights is None:
        keys.sort()
    else:
        order = np.argsort(keys, kind="stable")
        keys, weights = keys[order], weights[order]
    duplicates_removed = 0
    if merge and keys.size > 1:
        first = np.empty(keys.size, dtype=bool)
        first[0] = True
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        duplicates_removed = int(keys.size - np.count_nonzero(first))
        if duplicates_removed:
            keys = keys[first]
            weights = None if weights is None else weights[first]
    row_keys = np.arange(num_vertices + 1, dtype=np.int64) * max(num_vertices, 1)
    offsets = np.searchsorted(keys, row_keys).astype(np.int64)
    targets = (keys % max(num_vertices, 1)).astype(_id_dtype(num_vertices))
    return offsets, targets, weights, duplicates_removed


def _build_csr_lexsorted(src, dst, weights, num_vertices, *, merge):
    order = np.lexsort((dst, src))
    src, dst = src[order].astype(np.int64), dst[order].astype(np.int64)
    weights = None if weights is None else weights[order]
    duplicates_removed = 0
    if merge and src.size > 1:
        first = np.empty(src.size, dtype=bool)
        first[0] = True
        np.logical_or(src[1:] != src[:-1], dst[1:] != dst[:-1], out=first[1:])
        duplicates_removed = int(src.size - np.count_nonzero(first))
        src, dst = src[first], dst[first]
        weights = None if weights is None else weights[first]
    offsets = np.zeros(num_vertices + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=num_vertices), out=offsets[1:])
    return offsets, dst, weights, duplicates_removed
