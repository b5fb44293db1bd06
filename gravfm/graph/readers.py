"""Graph file readers: plain / SNAP edge lists and Matrix Market, gzip or not.

The format is guessed from the extension (``.mtx`` is Matrix Market, anything else an edge list;
a trailing ``.gz`` is ignored) or from a ``%%MatrixMarket`` banner, and can be forced with ``fmt=``.

Edge lists: one ``source target [weight]`` per line, separated by spaces or tabs, LF or CRLF,
``#`` or ``%`` comment lines, the last line with or without a newline. Also understood, because the
packaged datasets contain them: a first line that only gives the vertex count (``10670``) or the sizes
(``edges rows cols`` / ``rows cols edges`` / ``nodes edges``), a final ``-1`` sentinel line, and a
SNAP ``# Nodes: N`` comment. The fpgagraphlib ``.graph`` files are plain edge lists.
"""

import gzip
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError, SpecError
from ._text import check_integer_columns, parse_numbers, split_table
from .csr import Graph

__all__ = ["FORMATS", "detect_format", "read_graph", "read_edge_list", "read_matrix_market"]

#: File formats understood by :func:`read_graph` (``fmt=``).
FORMATS = ("edgelist", "mtx")
_FORMAT_ALIASES = {"edgelist": "edgelist", "snap": "edgelist", "graph": "edgelist", "txt": "edgelist",
                   "edges": "edgelist", "mtx": "mtx", "matrixmarket": "mtx"}
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_MATRIX_MARKET_BANNER = b"%%matrixmarket"
_NODES_COMMENT = re.compile(r"\bNodes:\s*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class _EdgeData:
    """What a parser found, before the cleaning policies are applied."""

    src: np.ndarray
    dst: np.ndarray
    weights: object  # np.ndarray or None
    declared_vertices: object  # int or None
    one_based: bool  # the format numbers vertices from 1 (Matrix Market)
    symmetric: bool  # each listed edge stands for both directions


def detect_format(path):
    """``"mtx"`` for ``*.mtx[.gz]``, else ``"edgelist"``."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return "mtx" if name.endswith(".mtx") else "edgelist"


def _normalize_format(fmt):
    try:
        return _FORMAT_ALIASES[str(fmt).lower()]
    except KeyError:
        raise SpecError(f"unknown graph file format {fmt!r} (known: {', '.join(FORMATS)})") from None


def _read_bytes(path):
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise GraphFormatError(f"{path}: no such graph file") from None
    except IsADirectoryError:
        raise GraphFormatError(f"{path}: is a directory, not a graph file") from None
    except OSError as error:
        raise GraphFormatError(f"{path}: cannot read: {error.strerror}") from None
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise GraphFormatError(f"{path}: broken gzip data ({error})") from None
    return data.removeprefix(_UTF8_BOM)  # some editors start text files with one


def read_graph(path, *, fmt=None, self_loops="drop", duplicates="merge", relabel="auto",
               undirected=False, name=None):
    """Read a graph file into a :class:`~gravfm.graph.Graph`.

    Parameters
    ----------
    path : str or Path
    fmt : {"edgelist", "mtx"}, optional
        Overrides the format guessed from the extension and contents.
    self_loops, duplicates, relabel
        Cleaning policies, see :meth:`Graph.from_edges`. Relabelling: ``"auto"`` keeps ids that
        are already ``0 .. N-1`` (with N from the file's header if it has one), shifts 1-based ids
        ``1 .. N`` down by one, and otherwise compacts the distinct ids to ``0 .. k-1``; the input
        ids are kept in ``Graph.original_ids``. Matrix Market indices are always shifted.
    undirected : bool
        Treat every edge as undirected (add its reverse). Matrix Market ``symmetric`` files are
        always read this way, as the format requires.
    name : str, optional
        Graph name; default the file name.
    """
    path = Path(path)
    data = _read_bytes(path)
    if fmt is None:
        fmt = "mtx" if data[:len(_MATRIX_MARKET_BANNER)].lower() == _MATRIX_MARKET_BANNER else detect_format(path)
    parse = {"edgelist": _parse_edge_list, "mtx": _parse_matrix_market}[_normalize_format(fmt)]
    found = parse(data, str(path))
    return _build(found, self_loops=self_loops, duplicates=duplicates, relabel=relabel,
                  undirected=undirected, name=path.name if name is None else name)


def read_edge_list(path, **policies):
    """:func:`read_graph` with ``fmt="edgelist"``."""
    return read_graph(path, fmt="edgelist", **policies)


def read_matrix_market(path, **policies):
    """:func:`read_graph` with ``fmt="mtx"``."""
    return read_graph(path, fmt="mtx", **policies)


def _build(found, *, self_loops, duplicates, relabel, undirected, name):
    src, dst, declared = found.src, found.dst, found.declared_vertices
    policies = dict(self_loops=self_loops, duplicates=duplicates, mirror=undirected or found.symmetric, name=name)
    if found.one_based:
        compacting = relabel in ("compact", "appearance")
        return Graph.from_edges(src - 1, dst - 1, None if compacting else declared, found.weights,
                                relabel=relabel if compacting else "none",
                                original_ids=np.arange(1, declared + 1), **policies)
    if declared is None or relabel != "auto":
        return Graph.from_edges(src, dst, _declared_if_fits(src, dst, declared) if relabel == "none" else None,
                                found.weights, relabel=relabel, **policies)
    max_id = int(max(src.max(), dst.max())) if src.size else -1
    min_id = int(min(src.min(), dst.min())) if src.size else 0
    if max_id < declared:  # already 0 .. declared-1
        return Graph.from_edges(src, dst, declared, found.weights, **policies)
    if min_id >= 1 and max_id <= declared:  # 1 .. declared
        return Graph.from_edges(src - 1, dst - 1, declared, found.weights,
                                original_ids=np.arange(1, declared + 1), **policies)
    return Graph.from_edges(src, dst, None, found.weights, relabel="compact", **policies)


def _declared_if_fits(src, dst, declared):
    """With ``relabel="none"``: the declared vertex count, grown if an id does not fit in it."""
    if declared is None:
        return None
    max_id = int(max(src.max(), dst.max())) if src.size else -1
    return max(declared, max_id + 1)


# --- edge lists ------------------------------------------------------------------------------

def _parse_edge_list(data, source):
    table = split_table(data, source)
    counts = table.token_counts
    declared = _declared_by_comment(table)
    if counts.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return _EdgeData(empty, empty, None, declared, False, False)

    values = parse_numbers(table)
    # The usual column count; the first line may differ (a size header), the others may not.
    columns = int(np.bincount(counts[1:]).argmax() if counts.size >= 2 else counts[0])
    first, stop = 0, counts.size  # data lines holding edges
    header = None
    if counts.size >= 2 and counts[0] != columns:
        header, first = values[:counts[0]], 1
    if stop - first >= 2 and counts[-1] == 1 and columns != 1 and values[-1] == -1:
        stop -= 1  # "-1" end-of-file sentinel
    if columns not in (2, 3):
        raise table.error(1 if header is not None else 0,
                          f"expected 2 or 3 columns (source target [weight]), found {columns}")
    wrong = np.flatnonzero(counts[first:stop] != columns)
    if wrong.size:
        index = first + int(wrong[0])
        raise table.error(index, f"expected {columns} columns like the other lines "
                                 f"(source target{' weight' if columns == 3 else ''}), found {counts[index]}")

    start = int(counts[:first].sum())
    rows = values[start:start + (stop - first) * columns].reshape(-1, columns)
    ids = check_integer_columns(table, rows, [0, 1], first)
    if header is not None:
        declared = _vertices_from_header(table, header, stop - first)
    weights = rows[:, 2].copy() if columns == 3 else None
    return _EdgeData(ids[:, 0].copy(), ids[:, 1].copy(), weights, declared, False, False)


def _declared_by_comment(table):
    for _, text in table.comments:
        match = _NODES_COMMENT.search(text)
        if match:
            return int(match.group(1))
    return None


def _vertices_from_header(table, header, num_edges):
    """The vertex count given by a first line such as ``10670`` or ``1417 1174 1174``."""
    if header.dtype.kind == "f" and not np.all(np.floor(header) == header):
        raise table.error(0, "expected a header of integer sizes")
    sizes = [int(value) for value in header]
    if any(size < 0 for size in sizes):
        raise table.error(0, f"expected non-negative sizes in the header, found {sizes}")
    if len(sizes) == 1:
        return sizes[0]
    if len(sizes) == 2 and num_edges in sizes:  # "nodes edges" (or the reverse)
        return sizes[1] if sizes[0] == num_edges and sizes[1] != num_edges else sizes[0]
    if len(sizes) == 3 and sizes[0] == num_edges:  # "edges rows cols" (KONECT / Network Repository)
        return max(sizes[1:])
    if len(sizes) == 3 and sizes[2] == num_edges:  # "rows cols edges" (Matrix Market style)
        return max(sizes[:2])
    raise table.error(0, f"expected a header giving the vertex count or the sizes, found {sizes} "
                         f"which does not match the {num_edges} edge lines")


# --- Matrix Market ---------------------------------------------------------------------------

_MM_FIELDS = {"pattern": 2, "integer": 3, "real": 3, "double": 3}
_MM_SYMMETRIES = ("general", "symmetric")


def _parse_matrix_market(data, source):
    table = split_table(data, source)
    if not table.comments or table.comments[0][0] != 1 or \
            not table.comments[0][1].lower().startswith("%%matrixmarket"):
        raise GraphFormatError(f"{source}: line 1: expected a '%%MatrixMarket matrix coordinate ...' banner")
    banner = table.comments[0][1].lower().split()
    if len(banner) != 5 or banner[1] != "matrix":
        raise GraphFormatError(f"{source}: line 1: expected '%%MatrixMarket matrix coordinate FIELD SYMMETRY', "
                               f"found {table.comments[0][1]!r}")
    layout, field, symmetry = banner[2:]
    if layout != "coordinate":
        raise GraphFormatError(f"{source}: line 1: only 'coordinate' matrices are graphs, not {layout!r}")
    if field not in _MM_FIELDS:
        raise GraphFormatError(f"{source}: line 1: unsupported field {field!r} "
                               f"(expected one of {', '.join(_MM_FIELDS)})")
    if symmetry not in _MM_SYMMETRIES:
        raise GraphFormatError(f"{source}: line 1: unsupported symmetry {symmetry!r} "
                               f"(expected one of {', '.join(_MM_SYMMETRIES)})")
    counts = table.token_counts
    if counts.size == 0 or counts[0] != 3:
        raise GraphFormatError(f"{source}: expected a size line 'rows cols entries' after the comments")
    values = parse_numbers(table)
    num_rows, num_cols, entries = (int(value) for value in check_integer_columns(
        table, values[:3].reshape(1, 3), [0, 1, 2], 0, what="size")[0])
    if num_rows != num_cols:
        raise table.error(0, f"expected a square matrix for a graph, found {num_rows} x {num_cols}")
    if counts.size - 1 != entries:
        raise table.error(0, f"the size line announces {entries} entries but the file has {counts.size - 1}")
    columns = _MM_FIELDS[field]
    wrong = np.flatnonzero(counts[1:] != columns)
    if wrong.size:
        index = 1 + int(wrong[0])
        raise table.error(index, f"expected {columns} columns for a {field!r} matrix, found {counts[index]}")
    rows = values[3:].reshape(-1, columns)
    ids = check_integer_columns(table, rows, [0, 1], 1, what="index")
    out_of_range = (ids < 1) | (ids > num_rows)
    if out_of_range.any():
        row, column = np.argwhere(out_of_range)[0]
        raise table.error(1 + row, f"expected an index in 1..{num_rows} in column {column + 1}, "
                                   f"found {ids[row, column]}")
    weights = None
    if columns == 3:
        weights = rows[:, 2].astype(np.int64 if field == "integer" else np.float64)
        if field == "integer" and rows.dtype.kind == "f" and not np.all(rows[:, 2] == weights):
            bad = int(np.flatnonzero(rows[:, 2] != weights)[0])
            raise table.error(1 + bad, f"expected an integer value in column 3 of an 'integer' matrix, "
                                       f"found {table.line_tokens(1 + bad)[2]!r}")
    return _EdgeData(ids[:, 0].copy(), ids[:, 1].copy(), weights, num_rows, True, symmetry == "symmetric")
