"""Pipelined IEEE-754 binary32 floating-point units with stream handshakes.

:class:`FPAdder`, :class:`FPMultiplier` and :class:`FPDivider` are Amaranth components with an
``operands`` input stream (``{a, b[, tag]}``) and a ``results`` output stream (``{result[, tag]}``),
one operation per cycle, a fixed :attr:`latency`, round to nearest even, full subnormal support,
and the canonical quiet NaN ``0x7FC00000`` for every NaN result. :mod:`gravfm.hw.fp.model` holds
bit-accurate pure-Python models of the same algorithms.
"""

from . import binary32, model, reference
from .adder import FPAdder
from .divider import FPDivider
from .layouts import operands_layout, result_layout
from .multiplier import FPMultiplier

__all__ = ["FPAdder", "FPMultiplier", "FPDivider", "operands_layout", "result_layout",
           "binary32", "model", "reference"]
