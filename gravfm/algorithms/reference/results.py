"""Result types of the software references: the answer beside the work of every superstep."""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SuperstepCounts", "RootedResult", "WccResult", "BfsResult", "PageRankResult", "SsspResult",
           "SuperstepResult"]


@dataclass(frozen=True)
class SuperstepCounts:
    """Work done in each superstep of a run.

    Attributes
    ----------
    supersteps : int
        Number of apply rounds executed, including the last one that emitted nothing.
    messages_per_superstep : tuple of int
        ``messages[r]``: messages produced by the scatter of round ``r`` (traversed edges).
        Has ``supersteps`` entries; the last one is 0.
    updates_per_superstep : tuple of int
        ``updates[r]``: updates emitted by the apply of round ``r``. Last entry is 0.
    senders_per_superstep : tuple of np.ndarray, or None
        ``senders[r]``: the vertices whose updates round ``r`` emitted (uint32), where the
        reference knows them; None where every vertex emits in every round but the last
        (PageRank). What the model's busiest-unit bound reads (:mod:`gravfm.model.balance`).
    """

    supersteps: int
    messages_per_superstep: tuple
    updates_per_superstep: tuple
    senders_per_superstep: tuple | None = field(default=None, kw_only=True, repr=False, compare=False)

    @classmethod
    def from_rounds(cls, updates, messages, **answer):
        """A result from every apply round's updates (a count, or the array of its senders) and
        messages (counts), and the answer's fields."""
        senders = None
        if updates and all(isinstance(entry, np.ndarray) for entry in updates):
            senders = tuple(entry.astype(np.uint32) for entry in updates)
            updates = [entry.size for entry in updates]
        return cls(supersteps=len(updates), messages_per_superstep=_freeze(messages),
                   updates_per_superstep=_freeze(updates), senders_per_superstep=senders, **answer)

    @property
    def total_messages(self):
        """Messages over the whole run: the numerator of TEPS."""
        return sum(self.messages_per_superstep)

    @property
    def total_updates(self):
        """Updates over the whole run."""
        return sum(self.updates_per_superstep)


def _freeze(counts):
    return tuple(int(c) for c in counts)


@dataclass(frozen=True)
class WccResult(SuperstepCounts):
    """Result of :func:`~gravfm.algorithms.reference.wcc`.

    Attributes
    ----------
    labels : np.ndarray of int64
        Final label of each vertex: the lowest id among the vertices that can reach it
        (itself included). On a symmetric graph, the lowest id of its component.
    """

    labels: np.ndarray


@dataclass(frozen=True)
class RootedResult(SuperstepCounts):
    """Result of a run from one root vertex.

    Attributes
    ----------
    root : int
        The root vertex.
    """

    root: int


@dataclass(frozen=True)
class BfsResult(RootedResult):
    """Result of :func:`~gravfm.algorithms.reference.bfs`.

    Attributes
    ----------
    parent : np.ndarray of int64
        BFS parent of each vertex; ``parent[root] == root``; -1 for unreachable vertices.
        Where several parents are valid this reference picks the lowest sender id; the
        hardware may pick any (check with :func:`~gravfm.algorithms.reference.check_bfs_parent`).
    level : np.ndarray of int64
        Hop distance from the root; -1 for unreachable vertices.
    """

    parent: np.ndarray
    level: np.ndarray


@dataclass(frozen=True)
class PageRankResult(SuperstepCounts):
    """Result of :func:`~gravfm.algorithms.reference.pagerank`.

    Attributes
    ----------
    rank : np.ndarray
        Rank of each vertex after the last superstep, in the dtype asked for.
    damping : float
        The damping factor used.
    """

    rank: np.ndarray
    damping: float


@dataclass(frozen=True)
class SsspResult(RootedResult):
    """Result of :func:`~gravfm.algorithms.reference.sssp`.

    Attributes
    ----------
    distance : np.ndarray
        Shortest-path distance from the root. With integer weights (or none): int64 and -1 for
        unreachable vertices. With floating-point weights: float64 and ``inf`` for unreachable.
    """

    distance: np.ndarray


@dataclass(frozen=True)
class SuperstepResult(SuperstepCounts):
    """Result of :func:`gravfm.algorithms.engine.run_supersteps`: the counts and the final state.

    Attributes
    ----------
    state : gravfm.algorithms.engine.Fields
        Final vertex state, ``{field: np.ndarray[num_vertices]}`` (also ``state.field``), each
        field in the dtype of its initial array.
    """

    state: object
