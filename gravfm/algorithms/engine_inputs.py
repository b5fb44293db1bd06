"""What the superstep engine hands a user's gather, apply and scatter, and how it checks their answers.

:mod:`gravfm.algorithms.engine` runs the supersteps; this module holds the pieces it shows the
user's functions: :class:`Fields` (named arrays, ``i.state.label`` or ``i.state["label"]``, as
on a kernel's payload), :class:`ApplyInput`, :class:`ScatterInput`, :class:`GatherInput` (with
its per-destination :meth:`~GatherInput.reduce`), and the checks that turn a malformed return
value into one line naming the function and the field.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError

__all__ = ["Fields", "ApplyInput", "ScatterInput", "GatherInput", "REDUCTIONS", "columns", "described"]

#: Reductions :meth:`GatherInput.reduce` knows by name (any binary numpy ufunc works too).
REDUCTIONS = {"min": np.minimum, "max": np.maximum, "sum": np.add}


class Fields(Mapping):
    """Read-only named arrays: ``fields.label`` and ``fields["label"]`` alike.

    A name that is not a field raises AttributeError (KeyError with ``[]``) listing the fields,
    so a typo in a user's function names itself.
    """

    __slots__ = ("_arrays",)

    def __init__(self, arrays):
        object.__setattr__(self, "_arrays", dict(arrays))

    def __getitem__(self, name):
        try:
            return self._arrays[name]
        except KeyError:
            raise KeyError(f"no field {name!r} (fields: {_listing(self._arrays)})") from None

    def __getattribute__(self, name):
        # A field wins over a method of the same name (a field called "values" or "items").
        arrays = object.__getattribute__(self, "_arrays")
        if name in arrays:
            return arrays[name]
        return object.__getattribute__(self, name)

    def __getattr__(self, name):  # only when nothing else has that name
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"no field {name!r} (fields: {_listing(self._arrays)})")

    def __setattr__(self, name, value):
        raise AttributeError(f"fields are read-only: return new values instead of setting {name!r}")

    def __iter__(self):
        return iter(self._arrays)

    def __len__(self):
        return len(self._arrays)

    def __repr__(self):
        return f"Fields({', '.join(self._arrays)})"


def _listing(names):
    return ", ".join(names) or "none"


def read_only(array):
    """A read-only view of ``array``: a user's function cannot change the engine's state in place."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


@dataclass(frozen=True)
class ApplyInput:
    """What apply sees in one round: the vertices it runs on, their state and the round.

    Attributes
    ----------
    nodeid : np.ndarray of int64
        The vertices applied (every vertex, or with ``sparse=True`` after round 0 those a gather
        changed), in increasing order.
    state : Fields
        Their state, each array aligned with ``nodeid``.
    round : int
    """

    nodeid: np.ndarray
    state: Fields
    round: int


@dataclass(frozen=True)
class ScatterInput:
    """What scatter sees: one row per message, i.e. per out-edge of a vertex that emitted.

    Attributes
    ----------
    update : Fields
        The sender's update, repeated for each of its edges.
    sender, neighbor : np.ndarray of int64
        Sender and destination of each message.
    edge : Fields
        The edge's data (``edge=`` of :func:`~gravfm.algorithms.engine.run_supersteps`).
    edge_index : np.ndarray of int64
        The edge's index in the graph's CSR order.
    round : int
        The round whose updates these are.
    """

    update: Fields
    sender: np.ndarray
    neighbor: np.ndarray
    edge: Fields
    edge_index: np.ndarray
    round: int


@dataclass(frozen=True)
class GatherInput:
    """What gather sees: every message of one round, and every vertex's state before them.

    Attributes
    ----------
    nodeid, sender : np.ndarray of int64
        Destination and sender of each message (ordered by sender, then CSR edge order).
    message : Fields
        The messages, one row each.
    state : Fields
        The state of EVERY vertex (``num_vertices`` rows), before this round's messages.
    round : int
        The round whose messages these are.
    num_vertices : int
    """

    nodeid: np.ndarray
    sender: np.ndarray
    message: Fields
    state: Fields
    round: int
    num_vertices: int

    @property
    def received(self):
        """bool[num_vertices]: the vertex receives at least one message."""
        return np.bincount(self.nodeid, minlength=self.num_vertices) > 0

    def reduce(self, values, how, start=None):
        """Combine one value per message into one per vertex.

        Parameters
        ----------
        values : array_like
            One value per message (a scalar is repeated), e.g. ``i.message.label`` or ``i.sender``.
        how : {"min", "max", "sum"} or numpy.ufunc
            The combination: a vertex's result is ``how`` over ``start`` and its messages' values
            (any binary ufunc: ``np.bitwise_or``, ...).
        start : array_like, optional
            Per vertex, where the combination starts (usually the state field, e.g.
            ``i.state.label``). Default: the reduction's identity (``min``: the dtype's largest
            value or ``inf``), which is also the result of a vertex without messages.

        Returns
        -------
        np.ndarray
            ``num_vertices`` values, in the common dtype of ``values`` and ``start``.
        """
        ufunc = REDUCTIONS.get(how, how) if isinstance(how, str) else how
        if not isinstance(ufunc, np.ufunc) or ufunc.nin != 2:
            raise ConfigError(f"reduce: how must be one of {', '.join(REDUCTIONS)} or a binary numpy ufunc, "
                              f"not {how!r}")
        values = np.broadcast_to(np.asarray(values), self.nodeid.shape)
        dtype = values.dtype if start is None else np.result_type(values, np.asarray(start))
        if start is None:
            out = np.full(self.num_vertices, _identity(ufunc, dtype), dtype=dtype)
        else:
            out = np.broadcast_to(np.asarray(start, dtype=dtype), (self.num_vertices,)).copy()
        ufunc.at(out, self.nodeid, values)
        return out


def _identity(ufunc, dtype):
    """The value ``ufunc`` leaves unchanged in ``dtype`` (min: the largest, max: the smallest)."""
    if ufunc in (np.minimum, np.maximum):
        if dtype.kind == "b":
            return ufunc is np.minimum
        if dtype.kind == "f":
            return np.inf if ufunc is np.minimum else -np.inf
        limits = np.iinfo(dtype)
        return limits.max if ufunc is np.minimum else limits.min
    if ufunc.identity is None:
        raise ConfigError(f"reduce: {ufunc.__name__} has no identity; pass start=")
    return ufunc.identity


def described(kind, function):
    """How a user's ``kind`` function is named in an error: ``FILE:LINE: kind (name)``, as
    :func:`gravfm.algorithms.loading.user_code_error` names a line of the user's code."""
    name = getattr(function, "__qualname__", None) or repr(function)
    code = getattr(function, "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}: " if code is not None else ""
    return f"{where}{kind} ({name})"


def columns(what, result, rows, *, allowed=None, dtypes=None):
    """Check a user's ``{field: values}`` return value; return ``{field: array of rows}``.

    Parameters
    ----------
    what : str
        The function and what it returned, for the error (``"apply (my.apply) state"``).
    result : mapping
    rows : int
        Rows every array must have (a scalar is repeated).
    allowed : sequence of str, optional
        The only field names allowed (the vertex layout's, for state).
    dtypes : dict, optional
        ``{field: dtype}`` each value must cast to without changing kind (no float -> int).

    Raises
    ------
    gravfm.errors.ConfigError
        Not a mapping, an unknown field, a wrong length, or a lossy cast; naming ``what``.
    """
    if result is None:
        result = {}
    if not isinstance(result, Mapping):
        raise ConfigError(f"{what} must be a dict {{field: array}}, not {type(result).__name__}")
    out = {}
    for name, value in result.items():
        if allowed is not None and name not in allowed:
            raise ConfigError(f"{what} names {name!r}, which is not a field (fields: {_listing(allowed)})")
        array = np.asarray(value)
        if array.ndim > 1 or (array.ndim == 1 and array.shape[0] != rows):
            raise ConfigError(f"{what} field {name!r} has shape {array.shape}, expected ({rows},)")
        if dtypes is not None:
            dtype = dtypes[name]
            if not np.can_cast(array.dtype, dtype, casting="same_kind"):
                raise ConfigError(f"{what} field {name!r} is {array.dtype}, which does not fit the state's "
                                  f"{dtype} (initial_state sets each field's dtype)")
            array = array.astype(dtype, copy=False)
        out[name] = np.broadcast_to(array, (rows,))
    return out
