"""Summary figures of a graph: sizes, degree statistics and what cleaning removed."""

import numpy as np

__all__ = ["graph_summary", "unordered_pairs"]


def unordered_pairs(graph):
    """Number of distinct unordered pairs ``{u, v}`` among the edges (a self-loop counts as one)."""
    src, dst = graph.edges()
    low = np.minimum(src, dst).astype(np.int64)
    high = np.maximum(src, dst).astype(np.int64)
    return int(np.unique(low * max(graph.num_vertices, 1) + high).size)


def _degree_stats(degrees):
    if degrees.size == 0:
        return {"min": 0, "max": 0, "mean": 0.0, "median": 0.0}
    return {"min": int(degrees.min()), "max": int(degrees.max()),
            "mean": float(degrees.mean()), "median": float(np.median(degrees))}


def graph_summary(graph):
    """A JSON-ready dict describing ``graph`` (what ``gravfm graph info`` prints).

    Keys: ``name``, ``vertices``, ``edges``, ``weighted``, ``unordered_pairs``, ``symmetric``,
    ``isolated_vertices``, ``out_degree`` / ``in_degree`` (min, max, mean, median), and
    ``cleaning`` (the :class:`CleaningReport` fields: input edges, self-loops and duplicates
    removed, mirrored edges, relabelled).
    """
    out_degree, in_degree = graph.out_degree(), graph.in_degree()
    report = graph.cleaning
    return {
        "name": graph.name,
        "vertices": graph.num_vertices,
        "edges": graph.num_edges,
        "weighted": graph.weights is not None,
        "unordered_pairs": unordered_pairs(graph),
        "symmetric": graph.is_symmetric(),
        "isolated_vertices": int(np.count_nonzero((out_degree == 0) & (in_degree == 0))),
        "self_loops": report.self_loops_kept,
        "out_degree": _degree_stats(out_degree),
        "in_degree": _degree_stats(in_degree),
        "cleaning": {
            "input_edges": report.input_edges,
            "mirrored_edges": report.mirrored_edges,
            "self_loops_removed": report.self_loops_removed,
            "duplicates_removed": report.duplicates_removed,
            "relabelled": report.relabelled,
        },
    }
