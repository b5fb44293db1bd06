"""Bit-accurate pure-Python models of the floating-point units (integer arithmetic only).

Each function takes and returns binary32 bit patterns (``int`` in ``[0, 2**32)``) and follows the
same algorithm, step by step and with the same intermediate widths, as its gateware unit, so a
mismatch between the two points at one step. All three are correctly rounded (round to nearest,
ties to even) with full subnormal support, hence bit-exact with numpy ``float32`` arithmetic, except
that every NaN result is :data:`~gravfm.hw.fp.binary32.CANONICAL_NAN`.

Intermediate format shared by the adder and the divider ("27-bit extended significand"): bit 26
holds the hidden bit, bits 25..3 the fraction, bit 2 the guard bit, bits 1..0 round and sticky.
"""

from .binary32 import (
    CANONICAL_NAN, EXPONENT_BIAS, FRACTION_BITS, MAGNITUDE_MASK, MAX_EXPONENT_FIELD,
    POSITIVE_INFINITY,
)

__all__ = ["add", "sub", "mul", "div", "shift_right_jam", "round_and_pack", "OPERATIONS"]

#: Quotient bits the divider computes: 24 significand bits, guard and round.
QUOTIENT_BITS = 26
#: Width of the extended significand (hidden bit at the top, three rounding bits below).
EXTENDED_BITS = 27


class _Operand:
    """A binary32 operand split into fields, with the significand and exponent as the units use them."""

    __slots__ = ("sign", "exponent_field", "fraction", "significand", "exponent")

    def __init__(self, bits: int):
        self.sign = bits >> 31
        self.exponent_field = (bits >> FRACTION_BITS) & MAX_EXPONENT_FIELD
        self.fraction = bits & ((1 << FRACTION_BITS) - 1)
        hidden = int(self.exponent_field != 0)
        self.significand = (hidden << FRACTION_BITS) | self.fraction
        # Subnormals have the exponent of the smallest normal number, without the hidden bit.
        self.exponent = max(self.exponent_field, 1)

    @property
    def is_nan(self) -> bool:
        return self.exponent_field == MAX_EXPONENT_FIELD and self.fraction != 0

    @property
    def is_infinite(self) -> bool:
        return self.exponent_field == MAX_EXPONENT_FIELD and self.fraction == 0

    @property
    def is_zero(self) -> bool:
        return self.exponent_field == 0 and self.fraction == 0


def shift_right_jam(value: int, amount: int) -> int:
    """``value >> amount`` with every bit shifted out ORed into bit 0 (the sticky bit)."""
    lost = value & ((1 << amount) - 1)
    return (value >> amount) | int(lost != 0)


def round_and_pack(sign: int, exponent: int, significand: int, guard: int, sticky: int) -> int:
    """Round a 24-bit significand to nearest even and pack it into binary32.

    ``exponent`` is the biased exponent (>= 1); ``significand`` has its hidden bit at bit 23, or
    is below ``2**23`` for a subnormal (then ``exponent == 1``). Adding the significand to
    ``(exponent - 1) << 23`` makes a rounding carry ripple into the exponent field, which turns the
    largest subnormal into the smallest normal and the largest finite number into infinity.
    """
    if exponent >= MAX_EXPONENT_FIELD:
        return (sign << 31) | POSITIVE_INFINITY
    round_up = guard & (sticky | (significand & 1))
    return (sign << 31) | (((exponent - 1) << FRACTION_BITS) + significand + round_up)


def _round_extended(sign: int, exponent: int, extended: int) -> int:
    """Round a 27-bit extended significand (see module docstring) and pack it."""
    return round_and_pack(sign, exponent, extended >> 3, (extended >> 2) & 1, int(extended & 3 != 0))


def _denormalize(exponent: int, extended: int, width: int) -> tuple[int, int]:
    """Shift a result whose exponent is below 1 into the subnormal range (exponent 1)."""
    if exponent >= 1:
        return exponent, extended
    return 1, shift_right_jam(extended, min(1 - exponent, width))


def add(a: int, b: int) -> int:
    """binary32 ``a + b`` (see :class:`~gravfm.hw.fp.FPAdder` for the algorithm)."""
    x, y = _Operand(a), _Operand(b)
    # Stage 1: special cases, and order the operands so that |x| >= |y|.
    if x.is_nan or y.is_nan or (x.is_infinite and y.is_infinite and x.sign != y.sign):
        return CANONICAL_NAN
    if x.is_infinite:
        return a
    if y.is_infinite:
        return b
    if (a & MAGNITUDE_MASK) < (b & MAGNITUDE_MASK):
        x, y = y, x
    difference = x.exponent - y.exponent
    # Stage 2: align the smaller operand (3 extra bits: guard, round, sticky) and add or subtract.
    aligned = shift_right_jam(y.significand << 3, min(difference, EXTENDED_BITS))
    if x.sign == y.sign:
        total = (x.significand << 3) + aligned
    else:
        total = (x.significand << 3) - aligned
    if total == 0:
        # Exact zero: -0 only for (-0) + (-0) under round to nearest.
        return (x.sign & y.sign) << 31
    # Stage 3: normalize; a left shift may not take the exponent below 1 (subnormal result,
    # which is then exact).
    exponent = x.exponent
    if total >> EXTENDED_BITS:
        total = shift_right_jam(total, 1)
        exponent += 1
    else:
        leading_zeros = EXTENDED_BITS - total.bit_length()
        shift = min(leading_zeros, exponent - 1)
        total <<= shift
        exponent -= shift
    # Stage 4: round and pack.
    return _round_extended(x.sign, exponent, total)


def sub(a: int, b: int) -> int:
    """binary32 ``a - b``: the adder with the sign of ``b`` inverted (NaN operands stay NaN)."""
    return add(a, b ^ 0x8000_0000)


def mul(a: int, b: int) -> int:
    """binary32 ``a * b`` (see :class:`~gravfm.hw.fp.FPMultiplier` for the algorithm)."""
    x, y = _Operand(a), _Operand(b)
    sign = x.sign ^ y.sign
    # Stage 1: special cases.
    if x.is_nan or y.is_nan or (x.is_infinite and y.is_zero) or (x.is_zero and y.is_infinite):
        return CANONICAL_NAN
    if x.is_infinite or y.is_infinite:
        return (sign << 31) | POSITIVE_INFINITY
    if x.is_zero or y.is_zero:
        return sign << 31
    # Stage 2: 24 x 24 -> 48-bit product; exponent for a leading one at bit 47.
    product = x.significand * y.significand
    exponent = x.exponent + y.exponent - (EXPONENT_BIAS - 1)
    # Stage 3: normalize (subnormal operands leave leading zeros).
    leading_zeros = 48 - product.bit_length()
    product <<= leading_zeros
    exponent -= leading_zeros
    # Stage 4: subnormal result. Stage 5: round and pack.
    exponent, product = _denormalize(exponent, product, 48)
    guard = (product >> 23) & 1
    sticky = int(product & ((1 << 23) - 1) != 0)
    return round_and_pack(sign, exponent, product >> 24, guard, sticky)


def _normalize_significand(operand: _Operand) -> tuple[int, int]:
    """Significand with its leading one moved to bit 23, and the exponent lowered to match."""
    leading_zeros = 24 - operand.significand.bit_length()
    return operand.significand << leading_zeros, operand.exponent - leading_zeros


def div(a: int, b: int) -> int:
    """binary32 ``a / b`` (see :class:`~gravfm.hw.fp.FPDivider` for the algorithm)."""
    x, y = _Operand(a), _Operand(b)
    sign = x.sign ^ y.sign
    # Stage 1: special cases.
    if (x.is_nan or y.is_nan or (x.is_zero and y.is_zero)
            or (x.is_infinite and y.is_infinite)):
        return CANONICAL_NAN
    if x.is_infinite or y.is_zero:
        return (sign << 31) | POSITIVE_INFINITY
    if x.is_zero or y.is_infinite:
        return sign << 31
    # Stage 2: normalize both significands; make the dividend >= the divisor so that the
    # quotient lies in [1, 2).
    dividend, dividend_exponent = _normalize_significand(x)
    divisor, divisor_exponent = _normalize_significand(y)
    exponent = dividend_exponent - divisor_exponent + EXPONENT_BIAS
    if dividend < divisor:
        dividend <<= 1
        exponent -= 1
    # Stages 3..: restoring division, one quotient bit per step.
    remainder, quotient = dividend, 0
    for _ in range(QUOTIENT_BITS):
        bit = int(remainder >= divisor)
        quotient = (quotient << 1) | bit
        remainder = (remainder - (divisor if bit else 0)) << 1
    extended = (quotient << 1) | int(remainder != 0)
    # Last two stages: subnormal result, then round and pack.
    exponent, extended = _denormalize(exponent, extended, EXTENDED_BITS)
    return _round_extended(sign, exponent, extended)


#: Model function of each operation name, as the tests and benchmark use them.
OPERATIONS = {"add": add, "sub": sub, "mul": mul, "div": div}
