"""Graph spec strings: one text naming any graph, usable wherever a graph is expected.

A spec is either a file path or ``GENERATOR:key=value,...``::

    facebook_combined.txt              (a packaged dataset, see gravfm.datasets)
    road-minnesota.mtx
    rmat:scale=14,ef=16,seed=1         (a, b, c, permute also accepted)
    uniform:n=10000,deg=32,seed=1
    wd:w=64,d=256,deg=8,seed=1
    tiny:star                          (see gravfm.graph.tiny)

A relative path that does not exist is looked up in the packaged datasets (``gravfm/datasets/``),
then in the folders of ``$GRAVFM_DATASETS``, as ``NAME`` or ``NAME.gz`` (see :mod:`gravfm.datasets`).
"""

import re
from dataclasses import dataclass
from pathlib import Path

from .. import datasets
from ..errors import GraphFormatError, SpecError
from . import generators
from .csr import Graph
from .readers import read_graph
from .tiny import tiny_graph

__all__ = ["load_graph", "GENERATORS", "parse_spec", "resolve_path"]


@dataclass(frozen=True)
class _Generator:
    """One generator's keys: name -> (converter, default or _REQUIRED), and how to call it."""

    function: object
    keys: dict
    help: str


_REQUIRED = object()


def _flag(text):
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


#: Generators usable in a spec string, with their keys.
GENERATORS = {
    "rmat": _Generator(
        lambda scale, ef, a, b, c, seed, permute, **policies: generators.rmat(
            scale, ef, a=a, b=b, c=c, seed=seed, permute=permute, **policies),
        {"scale": (int, _REQUIRED), "ef": (int, 16), "a": (float, generators.GRAPH500_ABC[0]),
         "b": (float, generators.GRAPH500_ABC[1]), "c": (float, generators.GRAPH500_ABC[2]),
         "seed": (int, 1), "permute": (_flag, True)},
        "RMAT graph of 2**scale vertices and ef * 2**scale edges before cleaning"),
    "uniform": _Generator(
        lambda n, deg, seed, **policies: generators.uniform(n, deg, seed=seed, **policies),
        {"n": (int, _REQUIRED), "deg": (int, _REQUIRED), "seed": (int, 1)},
        "uniform random graph, n vertices, n * deg edges before cleaning"),
    "wd": _Generator(
        lambda w, d, deg, seed, **policies: generators.wd(w, d, deg, seed=seed, **policies),
        {"w": (int, _REQUIRED), "d": (int, _REQUIRED), "deg": (int, 1), "seed": (int, 1)},
        "Fig. 10 graph: a root and d ranks of w vertices, BFS depth d + 1, average degree deg"),
    "tiny": _Generator(None, {}, "named tiny test graph, e.g. tiny:star (see gravfm.graph.tiny)"),
}

_GENERATOR_SPEC = re.compile(r"^([A-Za-z][A-Za-z0-9_]*):(.*)$", re.DOTALL)


def parse_spec(spec):
    """Split ``"name:k=v,..."`` into ``(name, {k: v})`` with string values; None for a path."""
    match = _GENERATOR_SPEC.match(spec)
    if match is None or len(match.group(1)) == 1:  # "C:\\..." is a Windows drive, not a generator
        return None
    name, body = match.group(1).lower(), match.group(2).strip()
    if name == "tiny":
        return name, {"name": body}
    values = {}
    for item in filter(None, (part.strip() for part in body.split(","))):
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals or not key or not value.strip():
            raise SpecError(f"graph spec {spec!r}: expected key=value, found {item!r}")
        if key in values:
            raise SpecError(f"graph spec {spec!r}: key {key!r} given twice")
        values[key] = value.strip()
    return name, values


def resolve_path(spec):
    """The file a path spec names: as given if it exists, else found by :func:`gravfm.datasets.find`."""
    path = Path(spec).expanduser()
    if path.exists() or path.is_absolute():
        return path
    found = datasets.find(path)
    if found is None:
        folders = ", ".join(str(folder) for folder in datasets.search_path())
        raise GraphFormatError(f"{spec}: no such graph file, here or in {folders}")
    return found


def load_graph(spec, *, fmt=None, self_loops=None, duplicates=None, relabel="auto", undirected=False):
    """A graph from a file path, a generator spec string, or a Graph (returned as it is).

    Parameters
    ----------
    spec : str, Path or Graph
        See the module docstring.
    fmt : {"edgelist", "mtx"}, optional
        File format, for paths only.
    self_loops, duplicates, relabel, undirected
        Cleaning policies (see :meth:`Graph.from_edges`). By default (None) files and generated
        graphs drop self-loops and merge duplicate edges, and the :class:`CleaningReport` counts
        both; ``tiny:`` graphs are kept exactly as defined, since each is built to test one case.
        ``relabel`` applies to files only (generated graphs are dense already).

    Raises
    ------
    SpecError
        Unknown generator, unknown or missing key, bad value.
    GraphFormatError
        A file that cannot be read or parsed.

    Examples
    --------
    >>> graph = load_graph("rmat:scale=10,ef=8,seed=1")
    >>> graph.num_vertices, graph.num_edges
    (1024, 6633)
    >>> load_graph("tiny:grid").num_edges
    48
    """
    if isinstance(spec, Graph):
        return spec
    if not isinstance(spec, (str, Path)):
        raise SpecError(f"a graph spec must be a path or a string, not {type(spec).__name__}")
    parsed = None if isinstance(spec, Path) or Path(spec).exists() else parse_spec(spec)
    exact = parsed is not None and parsed[0] == "tiny"
    policies = dict(self_loops=self_loops or ("keep" if exact else "drop"),
                    duplicates=duplicates or ("keep" if exact else "merge"), undirected=undirected)
    if parsed is not None:
        return _generate(spec, *parsed, fmt=fmt, policies=policies)
    return read_graph(resolve_path(spec), fmt=fmt, relabel=relabel, **policies)


def _generate(spec, name, values, *, fmt, policies):
    if name not in GENERATORS:
        raise SpecError(f"graph spec {spec!r}: unknown generator {name!r} "
                        f"(known: {', '.join(GENERATORS)}; or give a file path)")
    if fmt is not None:
        raise SpecError(f"graph spec {spec!r}: a file format only applies to files")
    if name == "tiny":
        graph = tiny_graph(values["name"])
        return graph if policies == dict(self_loops="keep", duplicates="keep", undirected=False) \
            else _reclean(graph, **policies)
    generator = GENERATORS[name]
    unknown = sorted(set(values) - set(generator.keys))
    if unknown:
        raise SpecError(f"graph spec {spec!r}: unknown key {unknown[0]!r} for {name} "
                        f"(known: {', '.join(generator.keys)})")
    arguments = {}
    for key, (convert, default) in generator.keys.items():
        if key not in values:
            if default is _REQUIRED:
                raise SpecError(f"graph spec {spec!r}: missing key {key!r} for {name}")
            arguments[key] = default
            continue
        try:
            arguments[key] = convert(values[key])
        except ValueError:
            raise SpecError(f"graph spec {spec!r}: bad value {values[key]!r} for key {key!r} "
                            f"(expected {convert.__name__.strip('_')})") from None
    return generator.function(**arguments, **policies, name=spec)


def _reclean(graph, *, self_loops, duplicates, undirected):
    """A tiny graph put through the same cleaning as any other loaded graph."""
    src, dst = graph.edges()
    return Graph.from_edges(src, dst, graph.num_vertices, graph.weights, self_loops=self_loops,
                            duplicates=duplicates, mirror=undirected, name=graph.name)
