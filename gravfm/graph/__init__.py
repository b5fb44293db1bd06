"""Graphs for gravfm: the CSR :class:`Graph`, file readers and writers, generators and spec strings.

Pure Python and numpy (no Amaranth), so the model and the CLI stay fast to import.
"""

from .csr import DUPLICATE_POLICIES, RELABEL_POLICIES, SELF_LOOP_POLICIES, CleaningReport, Graph
from .generators import rmat, rmat_edges, uniform, uniform_edges, wd, wd_edges, wd_levels
from .readers import FORMATS, detect_format, read_graph
from .spec import GENERATORS, load_graph
from .stats import graph_summary, unordered_pairs
from .tiny import TINY_GRAPHS, tiny_graph
from .writers import WRITE_FORMATS, write_graph

__all__ = [
    "Graph",
    "CleaningReport",
    "SELF_LOOP_POLICIES",
    "DUPLICATE_POLICIES",
    "RELABEL_POLICIES",
    "load_graph",
    "GENERATORS",
    "read_graph",
    "detect_format",
    "FORMATS",
    "rmat",
    "rmat_edges",
    "uniform",
    "uniform_edges",
    "wd",
    "wd_edges",
    "wd_levels",
    "TINY_GRAPHS",
    "tiny_graph",
    "write_graph",
    "WRITE_FORMATS",
    "graph_summary",
    "unordered_pairs",
]
