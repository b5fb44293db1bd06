"""Stage 1, prepare: the algorithm, its parameters, the prepared graph and the software reference."""

from dataclasses import dataclass, field

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
    """

    algorithm: object
    params: dict = field(repr=False)
    graph: object = field(repr=False)
    reference: object = field(repr=False)
    graph_label: str = ""

    @property
    def reference_messages(self):
        """Messages (traversed edges) of the reference run."""
        return int(sum(self.reference.messages_per_superstep))

    @property
    def reference_supersteps(self):
        """Supersteps of the reference run (the silent last one included)."""
        return len(self.reference.messages_per_superstep)


def prepare(algorithm, graph, *, params=None):
    """Resolve ``algorithm`` and ``graph``, prepare the graph and compute the reference.

    Parameters
    ----------
    algorithm : str or gravfm.algorithms.Algorithm
        A registered algorithm's name, or an algorithm object.
    graph : str or gravfm.graph.Graph
        A graph file, a generator spec (``rmat:scale=12,ef=16,seed=1``) or a graph.
    params : dict, optional
        Runtime parameters (``{"root": 3}``); unknown names raise ConfigError.

    Returns
    -------
    Prepared
    """
    from ..graph import Graph, load_graph

    if isinstance(algorithm, str):
        from ..algorithms import get_algorithm

        algorithm = get_algorithm(algorithm)
    params = algorithm.params(params)
    loaded = graph if isinstance(graph, Graph) else load_graph(str(graph))
    prepared = algorithm.prepare(loaded, params)
    return Prepared(algorithm=algorithm, params=params, graph=prepared,
                    reference=algorithm.reference(prepared, params),
                    graph_label=prepared.name or str(graph))
