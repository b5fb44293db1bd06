"""Choosing among values by flags, as logic that stays shallow."""

from amaranth.hdl import Mux

__all__ = ["any_of", "one_hot_select"]


def any_of(values):
    """OR of a list of 1-bit values (0 for an empty list)."""
    result = 0
    for value in values:
        result = result | value
    return result


def one_hot_select(flags, values):
    """The value whose flag is set, of one-hot ``flags`` (0 when none is): an AND-OR, two or three
    LUT levels, where a chain of multiplexers would put one level per value in series."""
    result = 0
    for flag, value in zip(flags, values, strict=True):
        result = result | Mux(flag, value, 0)
    return result
