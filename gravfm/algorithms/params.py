"""Checks of algorithm parameters shared by the algorithms and their software references.

Pure numpy, so an algorithm can check its parameters without importing the references (scipy).
"""

import numpy as np

from ..errors import ConfigError

__all__ = ["check_root", "root_of", "VERTEX_PARAMS", "internal_params", "original_params"]

#: Parameters holding a vertex id: given and reported in the input's ids (``Graph.original_ids``).
VERTEX_PARAMS = ("root",)


def check_root(graph, root, name):
    """``root`` as an int, if it is a vertex of ``graph``.

    Raises
    ------
    gravfm.errors.ConfigError
        A root that is not an integer, or out of range; the message starts with ``name``.
    """
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)):
        raise ConfigError(f"{name}: root must be an integer vertex id, not {root!r}")
    root = int(root)
    if not 0 <= root < graph.num_vertices:
        raise ConfigError(
            f"{name}: root {root} is out of range for a graph of {graph.num_vertices} vertices")
    return root


def root_of(graph, params, name):
    """The ``root`` parameter of a rooted algorithm (BFS, SSSP), checked by :func:`check_root`."""
    return check_root(graph, params["root"], name)


def internal_params(graph, params, name):
    """``params`` with each vertex parameter (:data:`VERTEX_PARAMS`) turned from the input's id
    (``graph.original_ids``: a file's own ids) into the graph's vertex id.

    Raises
    ------
    gravfm.errors.ConfigError
        Not an integer, or no vertex of the graph has that id; the message starts with ``name``.
    """
    internal = dict(params)
    for key in VERTEX_PARAMS:
        if key not in internal:
            continue
        given = internal[key]
        if isinstance(given, bool) or not isinstance(given, (int, np.integer)):
            raise ConfigError(f"{name}: {key} must be an integer vertex id, not {given!r}")
        vertex = graph.internal_id(given)
        if vertex is None and graph.original_ids is None:
            raise ConfigError(f"{name}: {key} {given} is out of range for a graph of {graph.num_vertices} vertices")
        if vertex is None:
            ids = graph.original_ids
            span = f"{int(ids.min())}..{int(ids.max())}" if ids.size else "none"
            raise ConfigError(f"{name}: {key} {given} is not a vertex of the graph (the input's ids of its "
                              f"{graph.num_vertices} vertices lie in {span})")
        internal[key] = vertex
    return internal


def original_params(graph, params):
    """``params`` with each vertex parameter in the input's ids (the inverse of :func:`internal_params`)."""
    return {key: graph.original_id(value) if key in VERTEX_PARAMS else value for key, value in params.items()}
