"""Checks of configuration fields, one message form for all: ``Owner.field must be ..., not VALUE``.

The frozen configuration dataclasses (hardware, simulated memory, platform) call these from their
``__post_init__``; a failed check raises :class:`~gravfm.errors.ConfigError`, which the CLI prints
as one line. This module imports no Amaranth.
"""

import math
import numbers

from .errors import ConfigError

__all__ = ["check_integer", "check_number", "check_flag", "check_fields"]


def _fail(owner, name, wanted, value):
    raise ConfigError(f"{owner}.{name} must be {wanted}, not {value!r}")


def check_integer(owner, name, value, low=1, high=None):
    """``value`` is an integer (Python or numpy, not a bool) in ``low .. high`` (no upper bound
    when ``high`` is None)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low \
            or (high is not None and value > high):
        if high is not None:
            wanted = f"an integer in {low}..{high}"
        else:
            wanted = {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer >= {low}")
        _fail(owner, name, wanted, value)


def check_number(owner, name, value, below=None):
    """``value`` is a finite number above 0 (and below ``below`` when given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or value <= 0 or (below is not None and value >= below):
        _fail(owner, name, "a positive number" + (f" below {below}" if below is not None else ""), value)


def check_flag(owner, name, value):
    """``value`` is True or False (not 0 or 1: a TOML or JSON integer given for a switch is a mistake)."""
    if not isinstance(value, bool):
        _fail(owner, name, "true or false", value)


def check_fields(config, *names, check=check_integer, **bounds):
    """Apply ``check`` (with ``bounds``) to each named field of the dataclass ``config``."""
    for name in names:
        check(type(config).__name__, name, getattr(config, name), **bounds)
