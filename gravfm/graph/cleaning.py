"""Cleaning an edge list into a graph: explicit policies, and a report of what they did.

Dropping self-loops, merging duplicate edges, mirroring undirected input and relabelling sparse
ids to dense ones is always an explicit policy of :meth:`gravfm.graph.Graph.from_edges`, and what
it did is recorded in a :class:`CleaningReport` so nothing disappears silently.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import GraphFormatError, SpecError
from .csr_arrays import build_csr

__all__ = ["CleaningReport", "SELF_LOOP_POLICIES", "DUPLICATE_POLICIES", "RELABEL_POLICIES",
           "clean_edge_list"]

#: Accepted values of the ``self_loops`` policy.
SELF_LOOP_POLICIES = ("keep", "drop")
#: Accepted values of the ``duplicates`` policy.
DUPLICATE_POLICIES = ("keep", "merge")
#: Accepted values of the ``relabel`` policy: ``"none"`` uses the ids as given, ``"compact"``
#: maps the distinct ids (in increasing order) to ``0 .. k-1``, ``"appearance"`` numbers them in
#: order of first appearance in the edge list (``u`` before ``v`` on each edge, as fpgagraphlib's
#: loader does, but from 0), ``"auto"`` compacts only when the ids are not already ``0 .. max``.
RELABEL_POLICIES = ("none", "compact", "appearance", "auto")


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


def _ids_are_dense(src, dst, max_id):
    """True when every id in ``0 .. max_id`` appears as an endpoint."""
    if max_id < 0:
        return True
    seen = np.zeros(max_id + 1, dtype=bool)
    seen[src] = True
    seen[dst] = True
    return bool(seen.all())


def clean_edge_list(src, dst, num_vertices=None, weights=None, *, self_loops="keep",
                    duplicates="keep", relabel="none", mirror=False, original_ids=None):
    """Sorted CSR arrays of an edge list cleaned by the policies.

    Parameters as in :meth:`gravfm.graph.Graph.from_edges` (less ``name``).

    Returns
    -------
    offsets, targets, weights, cleaning, original_ids
        New arrays (never the caller's); ``weights`` and ``original_ids`` may be None.
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
    offsets, dst, weights, duplicates_removed = build_csr(src, dst, weights, num_vertices,
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
    return offsets, dst, weights, cleaning, original_ids
