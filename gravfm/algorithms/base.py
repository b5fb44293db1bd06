"""The :class:`Algorithm` object: everything the framework needs to know about one algorithm.

An algorithm bundles
* its data layouts as ordered ``{field: width}`` dicts (a width is an int or ``"vertexid"``,
  the system's vertex-id width, resolved when the hardware is built);
* its three hardware kernels as factories ``(layouts) -> amaranth.lib.wiring.Component`` where
  ``layouts`` is a :class:`gravfm.hw.layouts.KernelLayouts` (the ports each kernel must have are
  documented there);
* its initial state and the software reference it is checked against.

This module does not import Amaranth, so the model and the CLI stay fast. Nothing in
:mod:`gravfm.hw` knows an algorithm by name: a user writes a new :class:`Algorithm` in their own
file and passes it to :class:`gravfm.hw.SystemConfig` (see ``examples/``).
"""

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from ..errors import ConfigError
from ..widths import VERTEXID

__all__ = ["Algorithm", "VERTEXID"]


def _check_layout(algorithm_name, kind, layout, *, may_be_empty):
    if not isinstance(layout, Mapping):
        raise ConfigError(f"algorithm {algorithm_name!r}: {kind} layout must be a dict "
                          f"{{field: width}}, not {type(layout).__name__}")
    if not layout and not may_be_empty:
        raise ConfigError(f"algorithm {algorithm_name!r}: {kind} layout has no field")
    for name, width in layout.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ConfigError(f"algorithm {algorithm_name!r}: {kind} field name {name!r} is not an identifier")
        if width == VERTEXID:
            continue
        if not isinstance(width, int) or isinstance(width, bool) or width < 1:
            raise ConfigError(f"algorithm {algorithm_name!r}: {kind} field {name!r} has width {width!r}; "
                              f"expected a positive int or {VERTEXID!r}")


def _default_prepare(graph, params):
    return graph


@dataclass(frozen=True, eq=False)  # identity equality: layouts are dicts, kernels are functions
class Algorithm:
    """A vertex-centric algorithm: layouts, kernels, initial state and reference.

    Parameters
    ----------
    name : str
        Short name (registry key, CLI argument).
    vertex, update, message, edge : dict
        Ordered ``{field: width}`` layouts. ``edge`` may be empty (unweighted graphs).
    gather, apply, scatter : callable
        ``(layouts) -> wiring.Component`` building each hardware kernel. The kernels keep the
        kernel contract (docs/kernels.md: one output per input, the barrier passes, a
        pipelined gather declares its ``latency``), which is checked on a short bench before
        every build (:func:`gravfm.flow.elaboration.check_kernels`).
    initial_state : callable
        ``(graph, params) -> {field: ndarray[num_vertices]}`` vertex state before round 0, in
        original vertex ids. Fields listed in ``vertexid_fields`` hold original vertex ids (or -1
        for "none"); the loader translates them to hardware ids and back.
    reference : callable
        ``(graph, params) -> result`` running the software reference (docs/interfaces.md §2).
    check : callable
        ``(graph, params, state_fields, reference_result) -> (ok, detail)``.
    prepare : callable
        ``(graph, params) -> graph`` preparing the input (e.g. WCC symmetrizes). Default: identity.
    edge_data : callable or None
        ``(graph) -> {field: ndarray[num_edges]}`` edge data in CSR order; required when ``edge``
        is not empty.
    vertexid_fields : tuple of str
        Vertex-state fields that hold vertex ids (translated by the loader).
    default_params : dict
        Parameters and their defaults (e.g. BFS ``root``).
    sparse_apply : bool
        The apply of a vertex whose state gather has not changed since its last apply changes
        nothing and emits nothing (true of WCC, BFS and SSSP, not of PageRank). The hardware
        then runs apply on every vertex in round 0 only, and afterwards only on the vertices
        whose state a gather changed. Such an apply kernel must write back (``state_o.valid``)
        every vertex it is given.
    initially_active : callable or None
        ``(graph, params) -> bool ndarray[num_vertices]``: the vertices whose round-0 apply can
        do anything (BFS: the root). With ``sparse_apply`` the host loads them as the list that
        round 0's apply visits, instead of a pass over every vertex. None: every vertex.
    accumulator : str or None
        A vertex field that gather alone accumulates into and apply resets (PageRank: ``sum``):
        gather reads and writes only this field (its other state fields are given as 0 and
        its output's are ignored), and apply writes every vertex it is given back with 0 in
        it. The hardware then keeps the field in two memories by round parity, so the next
        round's gather runs beside apply's pass (docs/kernels.md). Not with ``sparse_apply``.
    combiner : callable or None
        ``(layouts) -> wiring.Component`` with :func:`gravfm.hw.kernels.combiner_signature`
        (Pregel's combiner; PageRank: add two contributions): two messages to one vertex in,
        the one message whose gather amounts to gathering both out, in order. A gather stage
        with a hazard unit on a system of several PEs then adds a message whose vertex is in
        flight into one waiting for it instead of stalling, so the gather result must not depend
        on the order or grouping of a vertex's messages (PageRank's: up to the float rounding
        its check allows).
    """

    name: str
    vertex: dict
    update: dict
    message: dict
    edge: dict
    gather: Callable
    apply: Callable
    scatter: Callable
    initial_state: Callable
    reference: Callable
    check: Callable
    prepare: Callable = _default_prepare
    edge_data: Callable | None = None
    vertexid_fields: tuple = ()
    default_params: dict = field(default_factory=dict)
    sparse_apply: bool = False
    initially_active: Callable | None = None
    accumulator: str | None = None
    combiner: Callable | None = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"algorithm name must be a non-empty string, not {self.name!r}")
        _check_layout(self.name, "vertex", self.vertex, may_be_empty=False)
        _check_layout(self.name, "update", self.update, may_be_empty=True)
        _check_layout(self.name, "message", self.message, may_be_empty=True)
        _check_layout(self.name, "edge", self.edge, may_be_empty=True)
        for kind in ("gather", "apply", "scatter", "initial_state", "reference", "check", "prepare"):
            if not callable(getattr(self, kind)):
                raise ConfigError(f"algorithm {self.name!r}: {kind} must be callable")
        for name in self.vertexid_fields:
            if name not in self.vertex:
                raise ConfigError(f"algorithm {self.name!r}: vertexid field {name!r} is not in the vertex layout")
        if self.accumulator is not None:
            if self.accumulator not in self.vertex:
                raise ConfigError(f"algorithm {self.name!r}: accumulator {self.accumulator!r} is not in the "
                                  f"vertex layout")
            if len(self.vertex) < 2:
                raise ConfigError(f"algorithm {self.name!r}: accumulator {self.accumulator!r} is the only "
                                  f"vertex field; apply needs state of its own")
            if self.sparse_apply:
                raise ConfigError(f"algorithm {self.name!r}: accumulator and sparse_apply cannot be combined")
        if self.combiner is not None and not callable(self.combiner):
            raise ConfigError(f"algorithm {self.name!r}: combiner must be callable or None")
        if self.edge and self.edge_data is None:
            raise ConfigError(f"algorithm {self.name!r}: edge layout {list(self.edge)} needs edge_data")

    def params(self, given=None):
        """Complete ``given`` with the defaults; reject unknown parameter names."""
        given = dict(given or {})
        unknown = sorted(set(given) - set(self.default_params))
        if unknown:
            raise ConfigError(f"algorithm {self.name!r} has no parameter {unknown[0]!r} "
                              f"(known: {', '.join(sorted(self.default_params)) or 'none'})")
        return {**self.default_params, **given}

    def initial_state_arrays(self, graph, params):
        """Initial state as ``{field: int64 array}``, checked against the vertex layout."""
        state = self.initial_state(graph, params)
        out = {}
        for name in self.vertex:
            if name not in state:
                raise ConfigError(f"algorithm {self.name!r}: initial_state lacks field {name!r}")
            values = np.asarray(state[name], dtype=np.int64)
            if values.shape != (graph.num_vertices,):
                raise ConfigError(f"algorithm {self.name!r}: initial_state field {name!r} has shape "
                                  f"{values.shape}, expected ({graph.num_vertices},)")
            out[name] = values
        return out
