"""Combinational building blocks of the floating-point units, as functions returning Amaranth values.

Each mirrors a step of :mod:`gravfm.hw.fp.model` with the same widths.
"""

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Mux, Value, signed

from .binary32 import FRACTION_BITS, MAX_EXPONENT_FIELD, POSITIVE_INFINITY

__all__ = ["EXPONENT_SHAPE", "unpack", "leading_zeros", "shift_right_jam", "round_and_pack"]

#: Signed biased exponent of intermediate results: holds [-200, 600], beyond any unit's range.
EXPONENT_SHAPE = signed(11)


def unpack(bits: Value) -> SimpleNamespace:
    """Split a binary32 bit pattern into the fields and flags the units use.

    Returns a namespace with ``sign``, ``fraction``, ``significand`` (24 bits, hidden bit included
    for normal numbers), ``exponent`` (biased, subnormals get 1, as :data:`EXPONENT_SHAPE`),
    ``magnitude`` (31 bits) and the flags ``is_zero``, ``is_infinite``, ``is_nan``.
    """
    bits = Value.cast(bits)
    fraction = bits[:FRACTION_BITS]
    exponent_field = bits[FRACTION_BITS:31]
    is_max_exponent = exponent_field == MAX_EXPONENT_FIELD
    is_min_exponent = exponent_field == 0
    return SimpleNamespace(
        sign=bits[31],
        fraction=fraction,
        significand=Cat(fraction, ~is_min_exponent),
        exponent=Cat(Mux(is_min_exponent, 1, exponent_field),
                     Const(0, EXPONENT_SHAPE.width - 8)).as_signed(),
        magnitude=bits[:31],
        is_zero=is_min_exponent & (fraction == 0),
        is_infinite=is_max_exponent & (fraction == 0),
        is_nan=is_max_exponent & (fraction != 0),
    )


def leading_zeros(value: Value) -> Value:
    """Number of leading zero bits of the unsigned ``value`` (a balanced tree of comparisons).

    Counts from the top of ``len(value)`` bits; the result for ``value == 0`` is at least
    ``len(value)`` and callers treat zero separately.
    """
    value = Value.cast(value)
    width = len(value)
    padded_width = 1 << max(width - 1, 0).bit_length()
    # Zeros padded below the least significant bit do not change the count of a non-zero value.
    return _leading_zeros_pow2(Cat(Const(0, padded_width - width), value), padded_width)


def _leading_zeros_pow2(value: Value, width: int) -> Value:
    if width == 1:
        return ~value[0]
    half = width // 2
    upper, lower = value[half:], value[:half]
    return Mux(upper == 0, half + _leading_zeros_pow2(lower, half),
               _leading_zeros_pow2(upper, half))


def shift_right_jam(value: Value, amount: Value, *, max_amount: int) -> Value:
    """``value >> amount`` with every bit shifted out ORed into bit 0 (the sticky bit).

    ``max_amount`` bounds the amounts that shift part of ``value`` (it should be ``>= len(value)``);
    ``amount`` may be a signed value known to be non-negative wherever the result is used.
    """
    value = Value.cast(value)
    amount = Value.cast(amount).as_unsigned()
    clamp_width = max_amount.bit_length()
    # An amount with a bit above the shifter's own shifts everything out: an OR of those bits
    # (one LUT level, beside the shifter) rather than a compare and a clamp in front of it.
    beyond = amount[clamp_width:].any() if len(amount) > clamp_width else Const(0)
    low = amount[:clamp_width]
    shifted = Mux(beyond, 0, value >> low)
    # The mask of the bits shifted out is a thermometer decode of the amount alone, so the
    # sticky bit is computed beside the shifter rather than after a second one.
    all_ones = Const((1 << len(value)) - 1, len(value))
    lost_mask = ~(all_ones << low)[:len(value)]
    lost = Mux(beyond, value.any(), (value & lost_mask).any())
    return Cat(shifted[0] | lost, shifted[1:])


def round_and_pack(sign: Value, exponent: Value, significand: Value, guard: Value,
                   sticky: Value) -> Value:
    """Round a 24-bit significand to nearest even and pack it into binary32 (32-bit value).

    Mirrors :func:`gravfm.hw.fp.model.round_and_pack`: ``exponent`` (signed) is >= 1, and a
    rounding carry out of the significand ripples into the exponent field.
    """
    round_up = guard & (sticky | significand[0])
    exponent_field_minus_one = (exponent - 1)[:31 - FRACTION_BITS]
    packed = ((exponent_field_minus_one << FRACTION_BITS) + significand + round_up)[:31]
    overflow = exponent >= MAX_EXPONENT_FIELD
    return Cat(Mux(overflow, POSITIVE_INFINITY, packed)[:31], sign)
