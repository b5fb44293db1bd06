"""Synthetic graphs of the paper's evaluation: RMAT, uniform random and the w x d "barrier" graphs.

Each generator has two layers: ``*_edges`` returns the raw edge arrays (so their exact number and
distribution can be tested), and the graph function applies the usual cleaning policies through
:meth:`Graph.from_edges`, whose :class:`CleaningReport` says what was removed. All are vectorized
with numpy and reproducible from their ``seed``.
"""

import numpy as np

from ..errors import SpecError
from .csr import Graph
from .memory import check_graph_fits

__all__ = ["rmat_edges", "rmat", "uniform_edges", "uniform", "wd_edges", "wd", "wd_levels"]

#: Graph500 RMAT quadrant probabilities (d = 1 - a - b - c = 0.05).
GRAPH500_ABC = (0.57, 0.19, 0.19)
_RMAT_CHUNK = 1 << 16


def _check_int(name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SpecError(f"{name} must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        upper = f" and at most {high}" if high is not None else ""
        raise SpecError(f"{name} must be at least {low}{upper}, not {value}")
    return int(value)


def rmat_edges(scale, edge_factor=16, *, a=GRAPH500_ABC[0], b=GRAPH500_ABC[1], c=GRAPH500_ABC[2],
               seed=1, permute=True):
    """Raw RMAT edges: exactly ``edge_factor * 2**scale`` edges among ``2**scale`` vertices.

    Each edge picks one of four quadrants of the adjacency matrix ``scale`` times, with
    probabilities ``a, b, c, d = 1-a-b-c`` (Chakrabarti et al.; Graph500 uses a=0.57, b=c=0.19).
    With ``permute`` the vertex ids are shuffled, as Graph500 does, so that the hubs are not all
    at low ids (which would flatter round-robin partitioning).

    Returns
    -------
    src, dst : np.ndarray of int32 (int64 from scale 31)
    num_vertices : int
    """
    scale = _check_int("rmat scale", scale, 0, 40)
    edge_factor = _check_int("rmat edge factor", edge_factor, 0)
    for name, value in (("a", a), ("b", b), ("c", c)):
        if not 0 <= value <= 1:
            raise SpecError(f"rmat probability {name} must lie in [0, 1], not {value!r}")
    if a + b + c > 1 + 1e-12:
        raise SpecError(f"rmat probabilities a+b+c must not exceed 1, not {a + b + c:g}")
    num_vertices = 1 << scale
    num_edges = edge_factor * num_vertices
    check_graph_fits(f"rmat:scale={scale},ef={edge_factor}", num_vertices, num_edges)
    rng = np.random.default_rng(seed)
    id_dtype = np.int32 if scale < 31 else np.int64
    src = np.empty(num_edges, dtype=id_dtype)
    dst = np.empty(num_edges, dtype=id_dtype)
    # float32 halves the cost of the draws; its 24-bit resolution is ample for 4 quadrants.
    after_a, after_ab, after_abc = np.float32(a), np.float32(a + b), np.float32(a + b + c)
    draws = np.empty(_RMAT_CHUNK, dtype=np.float32)
    # Blocks of edges small enough to stay in cache while all `scale` bits are drawn. The block
    # size is part of the random stream: changing it changes the graph of a given seed.
    for low in range(0, num_edges, _RMAT_CHUNK):
        count = min(_RMAT_CHUNK, num_edges - low)
        r = draws[:count]
        src_block = np.zeros(count, dtype=id_dtype)
        dst_block = np.zeros(count, dtype=id_dtype)
        for bit in range(scale):
            rng.random(out=r, dtype=np.float32)
            src_bit = r >= after_ab  # quadrants c and d
            dst_bit = (r >= after_a) ^ src_bit ^ (r >= after_abc)  # quadrants b and d
            src_block |= src_bit.astype(id_dtype) << bit
            dst_block |= dst_bit.astype(id_dtype) << bit
        src[low:low + count] = src_block
        dst[low:low + count] = dst_block
    if permute and num_vertices > 1:
        relabel = rng.permutation(num_vertices).astype(id_dtype)
        src, dst = relabel[src], relabel[dst]
    return src, dst, num_vertices


def rmat(scale, edge_factor=16, *, a=GRAPH500_ABC[0], b=GRAPH500_ABC[1], c=GRAPH500_ABC[2], seed=1,
         permute=True, self_loops="drop", duplicates="merge", undirected=False, name=None):
    """An RMAT graph of ``2**scale`` vertices (see :func:`rmat_edges`), cleaned by the policies."""
    src, dst, n = rmat_edges(scale, edge_factor, a=a, b=b, c=c, seed=seed, permute=permute)
    name = f"rmat:scale={scale},ef={edge_factor},seed={seed}" if name is None else name
    return Graph.from_edges(src, dst, n, self_loops=self_loops, duplicates=duplicates,
                            mirror=undirected, name=name)


def uniform_edges(n, degree, *, seed=1):
    """Raw uniform random edges: ``n * degree`` edges with independent uniform endpoints.

    Returns
    -------
    src, dst : np.ndarray of int64
    num_vertices : int
    """
    n = _check_int("uniform n", n, 1)
    degree = _check_int("uniform deg", degree, 0)
    num_edges = n * degree
    check_graph_fits(f"uniform:n={n},deg={degree}", n, num_edges)
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, num_edges), rng.integers(0, n, num_edges), n


def uniform(n, degree, *, seed=1, self_loops="drop", duplicates="merge", undirected=False, name=None):
    """A uniform random graph with average out-degree about ``degree`` (before cleaning)."""
    src, dst, n = uniform_edges(n, degree, seed=seed)
    name = f"uniform:n={n},deg={degree},seed={seed}" if name is None else name
    return Graph.from_edges(src, dst, n, self_loops=self_loops, duplicates=duplicates,
                            mirror=undirected, name=name)


def wd_edges(w, d, degree=1, *, seed=1):
    """Raw edges of the w x d graph of the paper's Fig. 10.

    Vertex 0 is the root; rank ``r`` (``0 <= r < d``) holds vertices ``1 + r*w .. (r+1)*w``. Tree
    edges go from the root to every vertex of rank 0 and, for every vertex of rank ``r+1``, from a
    random parent in rank ``r``. Then random edges inside a rank (never a self-loop) are added,
    spread evenly over the ranks, until ``|E| = degree * |V|`` (when ``w > 1``). A BFS from the root
    therefore reaches rank ``r`` at level ``r + 1``: exactly ``d + 1`` levels, ``w`` vertices per
    level except the root's. Duplicate same-rank edges are possible (merged by the default policy).

    Returns
    -------
    src, dst, num_vertices
        As :func:`uniform_edges` returns them.
    """
    w = _check_int("wd w", w, 1)
    d = _check_int("wd d", d, 1)
    degree = _check_int("wd deg", degree, 0)
    num_vertices = 1 + w * d
    check_graph_fits(f"wd:w={w},d={d},deg={degree}", num_vertices, max(num_vertices, degree * num_vertices))
    rng = np.random.default_rng(seed)
    first_of_rank = 1 + w * np.arange(d, dtype=np.int64)
    children = np.arange(1 + w, num_vertices, dtype=np.int64)  # ranks 1 .. d-1
    parents = first_of_rank[(children - 1) // w - 1] + rng.integers(0, w, children.size)
    tree_src = np.concatenate([np.zeros(w, dtype=np.int64), parents])
    tree_dst = np.concatenate([first_of_rank[0] + np.arange(w, dtype=np.int64), children])

    extra = max(0, degree * num_vertices - tree_src.size) if w > 1 else 0
    rank = np.arange(extra, dtype=np.int64) % d
    position = rng.integers(0, w, extra)
    offset = rng.integers(1, w, extra) if extra else np.zeros(0, dtype=np.int64)  # never 0: no self-loop
    same_src = first_of_rank[rank] + position
    same_dst = first_of_rank[rank] + (position + offset) % w
    return np.concatenate([tree_src, same_src]), np.concatenate([tree_dst, same_dst]), num_vertices


def wd(w, d, degree=1, *, seed=1, self_loops="drop", duplicates="merge", undirected=False, name=None):
    """The w x d graph of :func:`wd_edges`, cleaned by the policies."""
    src, dst, n = wd_edges(w, d, degree, seed=seed)
    name = f"wd:w={w},d={d},deg={degree},seed={seed}" if name is None else name
    return Graph.from_edges(src, dst, n, self_loops=self_loops, duplicates=duplicates,
                            mirror=undirected, name=name)


def wd_levels(w, d):
    """BFS level of every vertex of a w x d graph from root 0 (root 0, rank ``r`` at ``r + 1``)."""
    return np.concatenate([[0], 1 + np.arange(w * d, dtype=np.int64) // w])
