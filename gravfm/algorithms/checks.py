"""Comparisons of a hardware answer with a software reference, as ``(ok, detail)`` pairs.

Every function names the first vertex (or superstep) that differs and how many do, so a failed
run says where to look. Given the graph, a vertex is named by its input id (:func:`vertex_label`:
a file's own id, also when the reader relabelled the ids), as the user knows it. :func:`~gravfm.algorithms.reference.check_bfs_parent` is the BFS check.
"""

import numpy as np

__all__ = ["compare_exact", "compare_close", "compare_counts", "vertex_label"]


def vertex_label(graph, v):
    """Vertex ``v`` as the user knows it: its input id (``graph.original_ids``), or ``v`` itself
    without a graph, without relabelling, or for an id outside the graph (a wrong answer's)."""
    v = int(v)
    if graph is None or graph.original_ids is None or not 0 <= v < graph.num_vertices:
        return v
    return int(graph.original_ids[v])


def _shape_problem(what, got, expected):
    if got.shape != expected.shape:
        return False, f"{what}: got shape {got.shape}, expected {expected.shape}"
    return None


def compare_exact(what, got, expected, *, graph=None):
    """Exact equality of two per-vertex arrays.

    Parameters
    ----------
    what : str
        Name of the quantity, for the message (e.g. ``"label"``).
    got, expected : array_like
    graph : gravfm.graph.Graph, optional
        Names the vertex by its input id (:func:`vertex_label`).

    Returns
    -------
    (bool, str)
    """
    got, expected = np.asarray(got), np.asarray(expected)
    problem = _shape_problem(what, got, expected)
    if problem:
        return problem
    wrong = np.flatnonzero(got != expected)
    if wrong.size == 0:
        return True, ""
    v = int(wrong[0])
    return False, (f"{what}: {wrong.size} of {got.size} vertices differ; first is vertex {vertex_label(graph, v)}: "
                   f"got {got[v]}, expected {expected[v]}")


def compare_close(what, got, expected, *, rtol=1e-5, atol=0.0, graph=None):
    """Equality within ``|got - expected| <= atol + rtol * |expected|``; infinities must match.

    Meant for floating-point answers (PageRank), where the hardware sums messages in arrival
    order and the reference in sender order.
    """
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    problem = _shape_problem(what, got, expected)
    if problem:
        return problem
    close = np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=False)
    wrong = np.flatnonzero(~close)
    if wrong.size == 0:
        return True, ""
    v = int(wrong[0])
    return False, (f"{what}: {wrong.size} of {got.size} vertices differ beyond rtol={rtol:g}, "
                   f"atol={atol:g}; first is vertex {vertex_label(graph, v)}: got {float(got[v])!r}, "
                   f"expected {float(expected[v])!r}")


def compare_counts(what, got, expected):
    """Per-superstep counts (messages or updates) of a run against the reference's.

    Parameters
    ----------
    what : str
        ``"messages"`` or ``"updates"``, for the message.
    got, expected : sequence of int
        One entry per superstep.
    """
    got, expected = [int(c) for c in got], [int(c) for c in expected]
    for r, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            return False, f"{what} in superstep {r}: got {g}, expected {e}"
    if len(got) != len(expected):
        return False, (f"{what}: got {len(got)} supersteps, expected {len(expected)} "
                       f"(totals {sum(got)} and {sum(expected)})")
    return True, ""
