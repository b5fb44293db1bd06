"""Weakly connected components by label propagation (the paper's Listings 1-3).

A vertex's label starts as its own (original) id; every vertex emits its label in round 0;
gather keeps the minimum and marks the vertex active; apply emits the label of an active vertex
and clears the flag. Labels are original vertex ids, so the answer is directly comparable with
:func:`gravfm.algorithms.reference.wcc` (the lowest id of each component).
"""

import numpy as np

from .base import VERTEXID, Algorithm
from .checks import vertex_label
from .kernel_factories import block_kernel

__all__ = ["WCC"]


def _initial_state(graph, params):
    n = graph.num_vertices
    return {"label": np.arange(n, dtype=np.int64), "active": np.ones(n, dtype=np.int64)}


def _prepare(graph, params):
    return graph.symmetrize()


def _reference(graph, params):
    from .reference import wcc  # deferred: scipy.sparse.csgraph (heavy), only to compute a reference
    return wcc(graph)


def _check(graph, params, state, result):
    labels = np.asarray(state["label"], dtype=np.int64)
    wrong = np.flatnonzero(labels != result.labels)
    if wrong.size:
        v = int(wrong[0])
        return False, (f"{wrong.size} of {labels.size} labels differ; vertex {vertex_label(graph, v)}: "
                       f"hardware {vertex_label(graph, labels[v])}, reference "
                       f"{vertex_label(graph, result.labels[v])}")
    return True, ""


WCC = Algorithm(
    name="wcc",
    vertex={"label": VERTEXID, "active": 1},
    update={"label": VERTEXID},
    message={"label": VERTEXID},
    edge={},
    gather=block_kernel("ExtremumGather", field="label", keep="min"),  # Listing 1
    apply=block_kernel("EmitIfActiveApply"),  # Listing 2: the update is the label
    scatter=block_kernel("MapScatter"),  # Listing 3: the label, through one pipeline register
    initial_state=_initial_state,
    reference=_reference,
    check=_check,
    prepare=_prepare,
    sparse_apply=True,
)
