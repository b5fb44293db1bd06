"""Checks of algorithm parameters shared by the algorithms and their software references.

Pure numpy, so an algorithm can check its parameters without importing the references (scipy).
"""

import numpy as np

from ..errors import ConfigError

__all__ = ["check_root", "root_of"]


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
