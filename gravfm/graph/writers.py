"""Graph file writers: edge lists (SNAP style) and Matrix Market, gzip-compressed for ``*.gz``.

Both write the dense ids ``0 .. num_vertices-1`` (Matrix Market: ``1 .. num_vertices``) and the
vertex count, so reading the file back gives the same graph, isolated vertices included.
"""

import gzip
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError, SpecError
from .readers import detect_format

__all__ = ["WRITE_FORMATS", "write_graph", "write_edge_list", "write_matrix_market"]

#: Formats :func:`write_graph` can produce.
WRITE_FORMATS = ("edgelist", "mtx")
# Edges formatted per chunk: bounds the memory of the text being built.
_CHUNK = 1 << 20


def write_graph(graph, path, *, fmt=None):
    """Write ``graph`` to ``path``; the format defaults to the extension (``.mtx`` or edge list)."""
    fmt = detect_format(path) if fmt is None else fmt
    if fmt not in WRITE_FORMATS:
        raise SpecError(f"unknown output format {fmt!r} (known: {', '.join(WRITE_FORMATS)})")
    (write_matrix_market if fmt == "mtx" else write_edge_list)(graph, path)


def write_edge_list(graph, path):
    """``source target [weight]`` per line, after ``# Nodes: N Edges: M`` comment lines."""
    header = (f"# {graph.name or 'graph'} written by gravfm\n"
              f"# Nodes: {graph.num_vertices} Edges: {graph.num_edges}\n")
    _write(path, header, graph, base=0)


def write_matrix_market(graph, path):
    """Matrix Market ``coordinate general`` file: pattern, integer or real by the weights' type."""
    if graph.weights is None:
        field = "pattern"
    elif np.issubdtype(graph.weights.dtype, np.integer):
        field = "integer"
    else:
        field = "real"
    header = (f"%%MatrixMarket matrix coordinate {field} general\n"
              f"% {graph.name or 'graph'} written by gravfm\n"
              f"{graph.num_vertices} {graph.num_vertices} {graph.num_edges}\n")
    _write(path, header, graph, base=1)


def _write(path, header, graph, *, base):
    path = Path(path)
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    src, dst = graph.edges()
    try:
        with opener(path, "wt", encoding="ascii", newline="\n") as out:
            out.write(header)
            for low in range(0, graph.num_edges, _CHUNK):
                chunk = slice(low, low + _CHUNK)
                columns = [(src[chunk] + base).astype(str), (dst[chunk] + base).astype(str)]
                if graph.weights is not None:
                    columns.append(_format_weights(graph.weights[chunk]))
                out.write("\n".join(map(" ".join, zip(*columns))))
                out.write("\n")
    except OSError as error:
        raise GraphFormatError(f"{path}: cannot write: {error.strerror or error}") from None


def _format_weights(weights):
    if np.issubdtype(weights.dtype, np.integer):
        return weights.astype(str)
    return [repr(float(w)) for w in weights]  # shortest text that reads back exactly
