"""The superstep engine: a software reference written as three vectorised Python functions.

A hardware run verifies only when it sends exactly the reference's messages
(docs/interfaces.md §2). :func:`run_supersteps` runs an algorithm's gather, apply and scatter,
written with numpy over whole arrays, under exactly those rules, and returns the documented
result type, so a user's reference is the algorithm's three steps, not a counting loop::

    from gravfm.algorithms.engine import run_supersteps, state_check

    def apply(i):                     # i.nodeid, i.state.<field>, i.round
        return {"active": 0}, i.state.active == 1, {"label": i.state.label}

    def gather(i):                    # i.nodeid, i.sender, i.message.<field>, i.state.<field>
        label = i.reduce(i.message.label, "min", start=i.state.label)
        return {"label": label, "active": i.state.active | (label < i.state.label)}

    result = run_supersteps(graph, initial={"label": np.arange(n), "active": np.ones(n, int)},
                            gather=gather, apply=apply)   # scatter: message = update
    result.state["label"], result.messages_per_superstep

The rules (the hardware's): round ``r`` applies every vertex (with ``sparse=True``, after
round 0 only the vertices whose state a gather changed, as the hardware does for a
``sparse_apply`` algorithm); each vertex that emits sends its update over every out-edge (one
message each, counted in ``messages[r]``, duplicates and self-loops included); every message
is gathered before round ``r + 1``; the run ends after the first round in which nobody emits.
The built-in references (:mod:`gravfm.algorithms.reference`) are specialised versions of this
loop, checked against it in ``tests/test_algorithms_engine.py``.

Messages reach gather all at once, ordered by sender; the hardware gathers them one by one in
an order that depends on the partition. So gather must not depend on the order of a vertex's
messages, or the algorithm's ``check`` must accept any order's answer (BFS parents).
"""

import contextlib
import contextvars
import itertools

import numpy as np

from ..errors import ConfigError
from .checks import compare_close, compare_exact
from .engine_inputs import ApplyInput, Fields, GatherInput, ScatterInput, columns, described, read_only
from .reference.results import SuperstepResult
from .reference.rounds import out_edges_of

__all__ = ["run_supersteps", "state_check", "reference_layout", "Fields", "ApplyInput", "ScatterInput",
           "GatherInput", "DEFAULT_MAX_SUPERSTEPS"]

#: The update and message layouts of the algorithm whose reference runs now (:func:`reference_layout`):
#: a user's reference calls :func:`run_supersteps` without them, and a misspelt field of an update
#: or a message must be refused where it is returned, not when gather reads it.
_LAYOUTS = contextvars.ContextVar("gravfm_reference_layouts", default=None)


@contextlib.contextmanager
def reference_layout(algorithm):
    """Within this block :func:`run_supersteps` checks apply's updates and scatter's messages
    against ``algorithm``'s update and message layouts (the fields, all of them, no others)."""
    token = _LAYOUTS.set({"update": list(algorithm.update), "message": list(algorithm.message)})
    try:
        yield
    finally:
        _LAYOUTS.reset(token)


def _layout_columns(kind, what, result, rows, *, used=True):
    """:func:`columns` of an update or message, with the running algorithm's layout when known;
    ``used``: some row is sent (a field may then not be missing)."""
    layout = (_LAYOUTS.get() or {}).get(kind)
    out = columns(what, result, rows, allowed=layout)
    missing = [name for name in layout or () if name not in out]
    if missing and used and rows:
        raise ConfigError(f"{what} lacks field {missing[0]!r} of the {kind} layout (fields: {', '.join(layout)})")
    return out

#: Supersteps after which :func:`run_supersteps` gives up on an algorithm that never falls silent.
DEFAULT_MAX_SUPERSTEPS = 100_000


def run_supersteps(graph, *, initial, gather, apply, scatter=None, edge=None, sparse=False,
                   initially_active=None, max_supersteps=DEFAULT_MAX_SUPERSTEPS):
    """Run a vertex-centric algorithm in software, superstep by superstep, counting its work.

    Parameters
    ----------
    graph : gravfm.graph.Graph
        As the hardware runs it (after the algorithm's ``prepare``).
    initial : dict
        ``{field: array[num_vertices]}``: the state before round 0 (the algorithm's
        ``initial_state``). Each field keeps its array's dtype throughout.
    gather : callable
        ``gather(i: GatherInput) -> {field: array[num_vertices]}``: the state of every vertex
        after this round's messages (fields left out keep their values). Combine the messages
        per destination with ``i.reduce(values, "min" | "max" | "sum" | ufunc, start=...)``.
        Called once per round that sends messages (a round without any gathers nothing).
    apply : callable
        ``apply(i: ApplyInput) -> (state, emit, update)``, each aligned with ``i.nodeid``:
        ``state`` the new values of the fields it changes (a dict), ``emit`` which vertices
        send an update (bool array, or one bool for all), ``update`` ``{field: array}`` (only
        the emitting rows are used; ``{}`` for an empty update layout).
    scatter : callable, optional
        ``scatter(i: ScatterInput) -> {field: array[messages]}``: the message sent over each
        edge. Default: the update itself.
    edge : dict, optional
        ``{field: array[num_edges]}`` in CSR order (the algorithm's ``edge_data(graph)``),
        seen by scatter as ``i.edge``.
    sparse : bool
        Apply only to the vertices whose state a gather changed (every vertex in round 0): the
        hardware's rule for an algorithm with ``sparse_apply``. Faster; the same answer for an
        apply that does nothing to a vertex no message changed.
    initially_active : array_like of bool, optional
        The vertices round 0 applies to (``Algorithm.initially_active``); default every vertex.
    max_supersteps : int
        Give up (ConfigError) when apply still emits in this round.

    Returns
    -------
    gravfm.algorithms.reference.SuperstepResult
        ``supersteps``, ``messages_per_superstep``, ``updates_per_superstep``, ``total_messages``
        and the final ``state`` (:class:`Fields`).

    Raises
    ------
    gravfm.errors.ConfigError
        A malformed argument or return value (naming the function and the field), or no end
        within ``max_supersteps``.
    """
    n = graph.num_vertices
    state = _initial_state(initial, n)
    dtypes = {name: values.dtype for name, values in state.items()}
    edges = _edge_fields(edge, graph.num_edges)
    out_degree = np.diff(graph.offsets)
    applied = _first_round(initially_active, n)
    updates, messages = [], []
    for r in itertools.count():
        senders, update = _apply_round(apply, state, applied, r, dtypes)
        updates.append(senders)
        messages.append(int(out_degree[senders].sum()))
        if senders.size == 0:
            break
        if r + 1 >= max_supersteps:
            raise ConfigError(f"run_supersteps: apply still emits in superstep {r} ({senders.size} updates); "
                              f"the run does not end within max_supersteps={max_supersteps}")
        inbox = _scatter_round(scatter, graph, senders, update, edges, r)
        if inbox[0].size == 0:  # updates without edges: nothing to gather, as in the hardware
            applied = np.zeros(0, dtype=np.int64) if sparse else np.arange(n, dtype=np.int64)
            continue
        gathered = _gather_round(gather, state, inbox, r, n, dtypes)
        applied = _changed(state, gathered) if sparse else np.arange(n, dtype=np.int64)
        state = gathered
    final = Fields({name: read_only(values) for name, values in state.items()})
    return SuperstepResult.from_rounds(updates, messages, state=final)


def _initial_state(initial, n):
    if not isinstance(initial, dict) or not initial:
        raise ConfigError("run_supersteps: initial must be a non-empty dict {field: array}")
    state = {}
    for name, values in initial.items():
        array = np.array(values)  # a copy: the engine writes into it
        if array.shape != (n,) or array.dtype.kind not in "biuf":
            raise ConfigError(f"run_supersteps: initial field {name!r} is {array.dtype} with shape {array.shape}; "
                              f"expected numbers with shape ({n},)")
        state[name] = array
    return state


def _edge_fields(edge, num_edges):
    if edge is None:
        return {}
    if not isinstance(edge, dict):
        raise ConfigError(f"run_supersteps: edge must be a dict {{field: array}}, not {type(edge).__name__}")
    arrays = {name: np.asarray(values) for name, values in edge.items()}
    for name, values in arrays.items():
        if values.shape != (num_edges,):
            raise ConfigError(f"run_supersteps: edge field {name!r} has shape {values.shape}, "
                              f"expected ({num_edges},) (one value per edge, CSR order)")
    return arrays


def _first_round(initially_active, n):
    if initially_active is None:
        return np.arange(n, dtype=np.int64)
    mask = np.asarray(initially_active)
    if mask.shape != (n,) or mask.dtype.kind not in "bi":
        raise ConfigError(f"run_supersteps: initially_active must be {n} booleans, not {mask.dtype} "
                          f"with shape {mask.shape}")
    return np.flatnonzero(mask).astype(np.int64)


def _apply_round(apply, state, applied, r, dtypes):
    """Run apply on ``applied``; write its state back; return the senders and their updates."""
    name = described("apply", apply)
    i = ApplyInput(nodeid=read_only(applied), round=r,
                   state=Fields({field: read_only(values[applied]) for field, values in state.items()}))
    result = apply(i)
    if not isinstance(result, tuple) or len(result) != 3:
        raise ConfigError(f"{name} must return (state, emit, update), not {type(result).__name__}")
    changes, emit, update = result
    changes = columns(f"{name} state", changes, applied.size, allowed=list(state), dtypes=dtypes)
    for field, values in changes.items():
        state[field][applied] = values
    emit = np.asarray(emit)
    if emit.dtype.kind not in "bi" or emit.ndim > 1 or (emit.ndim == 1 and emit.shape != applied.shape):
        raise ConfigError(f"{name} emit must be booleans, one per vertex in i.nodeid ({applied.size}), "
                          f"not {emit.dtype} with shape {emit.shape}")
    emit = np.broadcast_to(emit.astype(bool), applied.shape)
    update = _layout_columns("update", f"{name} update", update, applied.size, used=bool(emit.any()))
    return applied[emit], {field: values[emit] for field, values in update.items()}


def _scatter_round(scatter, graph, senders, update, edges, r):
    """Every message of round ``r``: ``(sender, neighbor, {field: values})``, ordered by sender."""
    edge_index, sender = out_edges_of(graph, senders)
    lengths = graph.offsets[senders + 1] - graph.offsets[senders]
    row = np.repeat(np.arange(senders.size), lengths)  # each message's row among the updates
    i = ScatterInput(update=Fields({field: read_only(values[row]) for field, values in update.items()}),
                     sender=read_only(sender.astype(np.int64)),
                     neighbor=read_only(graph.targets[edge_index].astype(np.int64)),
                     edge=Fields({field: read_only(values[edge_index]) for field, values in edges.items()}),
                     edge_index=read_only(edge_index), round=r)
    message = dict(i.update) if scatter is None else scatter(i)
    name = "scatter (default: the update)" if scatter is None else described("scatter", scatter)
    message = _layout_columns("message", f"{name} message", message, edge_index.size)
    return i.sender, i.neighbor, message


def _gather_round(gather, state, inbox, r, n, dtypes):
    """The state after gathering ``inbox`` (a new dict; fields gather left alone are shared)."""
    sender, neighbor, message = inbox
    i = GatherInput(nodeid=neighbor, sender=sender, message=Fields(message), round=r, num_vertices=n,
                    state=Fields({field: read_only(values) for field, values in state.items()}))
    result = columns(described("gather", gather), gather(i), n, allowed=list(state), dtypes=dtypes)
    gathered = dict(state)
    gathered.update({field: np.array(values, dtype=dtypes[field]) for field, values in result.items()})
    return gathered


def _changed(before, after):
    """Vertices whose state differs (the hardware's ``touched`` list), in increasing order."""
    changed = np.zeros(next(iter(before.values())).shape, dtype=bool)
    for field, values in after.items():
        if values is not before[field]:
            changed |= values != before[field]
    return np.flatnonzero(changed).astype(np.int64)


def state_check(*fields, rtol=None, atol=0.0):
    """An algorithm's ``check`` comparing state fields read back with the reference's final state.

    Parameters
    ----------
    *fields : str
        Vertex fields compared (as read back: unsigned integers; fields in ``vertexid_fields``
        as the graph's vertex ids).
    rtol, atol : float, optional
        Given ``rtol``: equal within ``atol + rtol * |expected|``
        (:func:`~gravfm.algorithms.checks.compare_close`); otherwise exactly.

    Returns
    -------
    callable
        ``check(graph, params, state, result) -> (ok, detail)`` for :class:`~gravfm.algorithms.Algorithm`,
        ``result`` being a :func:`run_supersteps` result; the detail names the first vertex that
        differs, by the input's id.
    """
    if not fields or not all(isinstance(field, str) for field in fields):
        raise ConfigError(f"state_check: name the vertex fields to compare, not {fields!r}")

    def check(graph, params, state, result):
        for field in fields:
            if rtol is None:
                ok, detail = compare_exact(field, state[field], result.state[field], graph=graph)
            else:
                ok, detail = compare_close(field, state[field], result.state[field], rtol=rtol, atol=atol,
                                           graph=graph)
            if not ok:
                return ok, detail
        return True, ""

    check.__qualname__ = f"state_check{fields!r}"
    return check
