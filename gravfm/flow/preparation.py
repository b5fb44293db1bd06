"""Stage 1, prepare: the algorithm, its parameters, the prepared graph and the software reference."""

from dataclasses import dataclass, field

from ..algorithms.engine import reference_layout
from ..algorithms.loading import resolve_algorithm, user_code_error
from ..algorithms.params import internal_params, original_params
from ..errors import GraphFormatError, GravfmError
from ..graph import Graph, load_graph

__all__ = ["Prepared", "prepare"]


@dataclass(frozen=True)
class Prepared:
    """An algorithm ready to run on a graph, with the answer it must give.

    Attributes
    ----------
    algorithm : gravfm.algorithms.Algorithm
    params : dict
        The algorithm's runtime parameters, defaults filled in.
    graph : gravfm.graph.Graph
        The graph as the algorithm runs on it (``algorithm.prepare``: e.g. symmetrized for WCC,
        weighted for SSSP).
    reference : object
        The software reference's result (``algorithm.reference``).
    graph_label : str
        The graph's name, or how it was given.
    loaded : gravfm.graph.Graph
        The graph as loaded and cleaned, before ``algorithm.prepare`` (what ``gravfm graph
        info`` describes with the same options).
    """

    algorithm: object
    params: dict = field(repr=False)
    graph: object = field(repr=False)
    reference: object = field(repr=False)
    graph_label: str = ""
    loaded: object = field(default=None, repr=False)

    @property
    def reference_messages(self):
        """Messages (traversed edges) of the reference run."""
        return int(sum(self.reference.messages_per_superstep))

    @property
    def reference_supersteps(self):
        """Supersteps of the reference run (the silent last one included)."""
        return len(self.reference.messages_per_superstep)

    @property
    def given_params(self):
        """``params`` as a user gives them: vertex parameters in the input's ids."""
        return original_params(self.graph if self.loaded is None else self.loaded, self.params)


def prepare(algorithm, graph, *, params=None, graph_options=None):
    """Resolve ``algorithm`` and ``graph``, prepare the graph and compute the reference.

    Parameters
    ----------
    algorithm : str or gravfm.algorithms.Algorithm
        A registered algorithm's name, ``FILE.py:NAME``, or an algorithm object.
    graph : str or gravfm.graph.Graph
        A graph file, a generator spec (``rmat:scale=12,ef=16,seed=1``) or a graph.
    params : dict, optional
        Runtime parameters (``{"root": 3}``); unknown names raise ConfigError. A vertex
        parameter (``root``) is the input's id of the vertex: a file's own id, also when the
        reader relabelled the file's ids (``Graph.original_ids``).
    graph_options : dict, optional
        Cleaning options of :func:`gravfm.graph.load_graph` (``self_loops``, ``duplicates``,
        ``relabel``, ``undirected``, ``fmt``) for a graph given by name.

    Returns
    -------
    Prepared

    Raises
    ------
    gravfm.errors.GraphFormatError
        A graph without vertices (an empty or comment-only file).
    gravfm.errors.UserCodeError
        A user's algorithm code raised (``FILE:LINE: message``).
    """
    algorithm = resolve_algorithm(algorithm)
    given = dict(params or {})
    defaults = algorithm.params(given)
    loaded = graph if isinstance(graph, Graph) else load_graph(str(graph), **(graph_options or {}))
    if loaded.num_vertices == 0:
        named = graph if isinstance(graph, str) else loaded.name or "the graph"
        raise GraphFormatError(f"{named}: no edges (an empty or comment-only file?): nothing to run")
    params = {**defaults, **internal_params(loaded, given, algorithm.name)}
    try:
        prepared = algorithm.prepare(loaded, params)
        with reference_layout(algorithm):  # the reference's updates and messages checked as returned
            reference = algorithm.reference(prepared, params)
    except GravfmError:
        raise
    except Exception as error:  # a user's algorithm code: report its line, not a traceback
        located = user_code_error(error, f"algorithm {algorithm.name!r}")
        if located is None:
            raise
        raise located from None
    return Prepared(algorithm=algorithm, params=params, graph=prepared, reference=reference,
                    graph_label=prepared.name or str(graph), loaded=loaded)
