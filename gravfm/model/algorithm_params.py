"""Algorithm-dependent parameters of the performance model: sizes in bits of a vertex's state,
an update, a message and an edge.

Named defaults for the built-in algorithms come from ``algorithm_params.toml`` beside this module;
any of them may be overridden by numbers, and :func:`params_from_layouts` derives them from the
hardware layouts (``{field: width}`` with ``"vertexid"`` widths, docs/kernels.md).
"""

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..widths import VERTEXID
from ..errors import ConfigError, SpecError
from .schema import FromDict

__all__ = [
    "AlgorithmParams",
    "DEFAULTS_FILE",
    "algorithm_params",
    "builtin_algorithm_params",
    "model_params",
    "params_for_algorithm",
    "params_from_layouts",
    "with_link_overhead",
]

DEFAULTS_FILE = Path(__file__).resolve().parent / "algorithm_params.toml"


@dataclass(frozen=True)
class AlgorithmParams(FromDict):
    """Sizes (bits) of the data an algorithm moves, as the model's formulas use them.

    Parameters
    ----------
    name : str
        Algorithm name (selects the platform's CPE).
    m_vertex : int
        Storage per vertex (the fit check n >= |V| m_vertex / M).
    m_update : int
        Bits of one update on the network (GraVF-M broadcasts updates).
    m_message : int
        Bits of one message on the network (GraVF unicasts messages).
    m_edge : int
        Bits of one stored edge (the memory limit).
    kernel_latency_cycles : int
        Pipeline depth of the algorithm's kernels (superstep latency only).
    """

    name: str
    m_vertex: int
    m_update: int
    m_message: int
    m_edge: int
    kernel_latency_cycles: int = 0

    def __post_init__(self):
        for key in ("m_vertex", "m_update", "m_message", "m_edge"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"algorithm parameters {self.name!r}: {key} must be a positive "
                                  f"number of bits, not {value!r}")
        latency = self.kernel_latency_cycles
        if isinstance(latency, bool) or not isinstance(latency, int) or latency < 0:
            raise ConfigError(f"algorithm parameters {self.name!r}: kernel_latency_cycles must be a "
                              f"non-negative integer, not {latency!r}")


def _load_defaults():
    data = tomllib.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))
    return {name: AlgorithmParams.from_dict({"name": name, **table}, where=f"{DEFAULTS_FILE} [{name}]")
            for name, table in data.items()}


def builtin_algorithm_params():
    """Names with named defaults, sorted."""
    return sorted(_load_defaults())


def algorithm_params(name, **overrides):
    """Named defaults for ``name``, with any field replaced by a number.

    Parameters
    ----------
    name : str
        One of :func:`builtin_algorithm_params`, or any name when all four sizes are given.
    **overrides
        ``m_vertex``, ``m_update``, ``m_message``, ``m_edge``, ``kernel_latency_cycles``;
        ``None`` values are ignored.

    Raises
    ------
    SpecError
        Unknown algorithm without all four sizes given, or an unknown override name.
    """
    overrides = {key: value for key, value in overrides.items() if value is not None}
    known = {field.name for field in dataclasses.fields(AlgorithmParams)} - {"name"}
    for key in overrides:
        if key not in known:
            raise SpecError(f"unknown algorithm parameter {key!r}; expected one of {', '.join(sorted(known))}")
    defaults = _load_defaults()
    if name in defaults:
        return dataclasses.replace(defaults[name], **overrides)
    missing = [key for key in ("m_vertex", "m_update", "m_message", "m_edge") if key not in overrides]
    if missing:
        raise SpecError(f"no default model parameters for algorithm {name!r} (known: "
                        f"{', '.join(sorted(defaults))}); give {', '.join(missing)}")
    return AlgorithmParams(name=name, **overrides)


def _layout_bits(layout, vertexid_bits, what):
    total = 0
    for field_name, width in dict(layout or {}).items():
        if width == VERTEXID:
            width = vertexid_bits
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ConfigError(f"{what} layout field {field_name!r} has width {width!r}; "
                              f"expected a positive int or {VERTEXID!r}")
        total += width
    return total


def params_from_layouts(name, *, vertex, update, message, edge=None, vertexid_bits=32,
                        kernel_latency_cycles=0):
    """Model parameters from an algorithm's hardware layouts.

    Parameters
    ----------
    name : str
        Algorithm name.
    vertex, update, message, edge : dict
        Ordered ``{field: width}`` layouts; a width is an int or ``"vertexid"``. ``edge`` may be
        empty or None (unweighted).
    vertexid_bits : int
        Width of a vertex id in the build.
    kernel_latency_cycles : int
        Pipeline depth of the kernels.

    Returns
    -------
    AlgorithmParams
        ``m_vertex`` = vertex fields; ``m_update`` = sender id + update payload;
        ``m_message`` = destination id + sender id + message payload;
        ``m_edge`` = destination id + edge data.
    """
    if isinstance(vertexid_bits, bool) or not isinstance(vertexid_bits, int) or vertexid_bits < 1:
        raise ConfigError(f"vertexid_bits must be a positive integer, not {vertexid_bits!r}")
    return AlgorithmParams(
        name=name,
        m_vertex=_layout_bits(vertex, vertexid_bits, "vertex"),
        m_update=vertexid_bits + _layout_bits(update, vertexid_bits, "update"),
        m_message=2 * vertexid_bits + _layout_bits(message, vertexid_bits, "message"),
        m_edge=vertexid_bits + _layout_bits(edge, vertexid_bits, "edge"),
        kernel_latency_cycles=kernel_latency_cycles,
    )


def params_for_algorithm(algorithm, *, vertexid_bits=32, kernel_latency_cycles=0):
    """Model parameters of an algorithm object (``gravfm.algorithms.Algorithm`` or alike).

    Reads its ``name`` and its ``vertex``, ``update``, ``message`` and ``edge`` layouts and applies
    :func:`params_from_layouts` with the build's ``vertexid_bits``.
    """
    return params_from_layouts(algorithm.name, vertex=algorithm.vertex, update=algorithm.update,
                               message=algorithm.message, edge=algorithm.edge,
                               vertexid_bits=vertexid_bits, kernel_latency_cycles=kernel_latency_cycles)


def model_params(algorithm, *, vertexid_bits):
    """The model's parameters for an algorithm object, as ``gravfm run`` and ``gravfm model`` use
    them: a built-in algorithm's named defaults, else the sizes of its layouts
    (:func:`params_for_algorithm`) with the build's ``vertexid_bits``."""
    if algorithm.name in _load_defaults():
        return algorithm_params(algorithm.name)
    return params_for_algorithm(algorithm, vertexid_bits=vertexid_bits)


def with_link_overhead(params, bits):
    """``params`` with ``bits`` more in ``m_update`` and ``m_message``: what the link check's frame
    adds to every item on a link (sequence number, CRC, acknowledgement; ``LinkCheck.overhead_bits``)."""
    if bits == 0:
        return params
    return dataclasses.replace(params, m_update=params.m_update + bits, m_message=params.m_message + bits)
