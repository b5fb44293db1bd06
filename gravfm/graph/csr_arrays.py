"""Sorted CSR arrays from edge arrays: the sort, the merge of duplicate edges, the id dtype."""

import numpy as np

__all__ = ["id_dtype", "read_only", "edge_keys", "build_csr"]

# Below this many vertices, vertex ids are stored as int32 (half the memory of int64).
_INT32_LIMIT = 2**31


def id_dtype(num_vertices):
    """int32 for vertex ids below 2**31, else int64."""
    return np.int32 if num_vertices < _INT32_LIMIT else np.int64


def read_only(array):
    """``array``, marked read-only."""
    array.flags.writeable = False
    return array


def edge_keys(src, dst, num_vertices):
    """One int64 key per edge, ordered by (source, target)."""
    return src.astype(np.int64) * max(num_vertices, 1) + dst.astype(np.int64)


def build_csr(src, dst, weights, num_vertices, *, merge):
    """CSR arrays ``(offsets, targets, weights, duplicates_removed)`` of the edges.

    Edges are sorted by (source, target), stably so that merging duplicates keeps the first
    listed edge's weight. Always returns new arrays, never the caller's.
    """
    if num_vertices >= _INT32_LIMIT:  # source * num_vertices would overflow int64
        return _build_csr_lexsorted(src, dst, weights, num_vertices, merge=merge)
    # One int64 key per edge carries both endpoints: one sort, one comparison for duplicates.
    keys = edge_keys(src, dst, num_vertices)
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
    targets = (keys % max(num_vertices, 1)).astype(id_dtype(num_vertices))
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
