"""numpy reference results and edge-case operands for checking the floating-point units.

numpy ``float32`` arithmetic is IEEE-754 binary32 with round to nearest even and subnormals (it
does not flush them), so it is the reference for both the models and the gateware; the only
normalization applied is NaN -> :data:`~gravfm.hw.fp.binary32.CANONICAL_NAN`.
"""

from fractions import Fraction

import numpy as np

from .binary32 import CANONICAL_NAN, bits_to_float, compose, float_to_bits

__all__ = ["EDGE_CASES", "numpy_reference", "exact_result", "is_rounding_tie", "rounding_ties"]

_MAX_FRACTION = (1 << 23) - 1

#: Operands every test includes: signed zeros, subnormals (smallest, largest, a tie maker),
#: normal boundaries, values near 1 and 2, the largest finite number, infinities and NaNs.
EDGE_CASES = tuple(
    compose(sign, exponent, fraction)
    for sign in (0, 1)
    for exponent, fraction in (
        (0, 0), (0, 1), (0, 3), (0, _MAX_FRACTION), (0, 1 << 22),
        (1, 0), (1, 1), (2, 0), (24, 0), (25, 1),
        (126, _MAX_FRACTION), (127, 0), (127, 1), (127, 1 << 22), (128, 0), (127, _MAX_FRACTION),
        (253, _MAX_FRACTION), (254, 0), (254, _MAX_FRACTION),
        (255, 0), (255, 1), (255, 1 << 22),
    )
)


def numpy_reference(operation: str, a, b) -> np.ndarray:
    """numpy ``float32`` result bits of ``a <operation> b`` for bit-pattern arrays ``a`` and ``b``.

    ``operation`` is one of ``"add"``, ``"sub"``, ``"mul"``, ``"div"``; every NaN is returned as
    the canonical NaN.
    """
    x = np.asarray(a, dtype=np.uint32).view(np.float32)
    y = np.asarray(b, dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        if operation == "add":
            result = x + y
        elif operation == "sub":
            result = x - y
        elif operation == "mul":
            result = x * y
        elif operation == "div":
            result = x / y
        else:
            raise ValueError(f"Operation must be 'add', 'sub', 'mul' or 'div', not {operation!r}")
    bits = np.asarray(result, dtype=np.float32).view(np.uint32)
    return np.where(np.isnan(result), np.uint32(CANONICAL_NAN), bits)


def exact_result(operation: str, a: int, b: int) -> Fraction:
    """The exact rational result of ``a <operation> b`` for finite bit patterns (b != 0 for div)."""
    x, y = Fraction(bits_to_float(a)), Fraction(bits_to_float(b))
    return {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y}[operation]


def is_rounding_tie(exact: Fraction, result: int) -> bool:
    """True if ``exact`` lies exactly halfway between ``result`` and an adjacent binary32 number."""
    here = Fraction(bits_to_float(result))
    if exact == here:
        return False
    magnitude = result & 0x7FFF_FFFF
    neighbours = [result + 1] if magnitude < 0x7F7F_FFFF else []
    neighbours += [result - 1] if magnitude > 0 else []
    return any(here + (Fraction(bits_to_float(n)) - here) / 2 == exact for n in neighbours)


def rounding_ties(operation: str, count: int, seed: int = 0) -> list[tuple[int, int]]:
    """``count`` operand pairs whose exact ``add``/``mul``/``div`` result is a rounding tie.

    Constructed, then kept only if :func:`is_rounding_tie` confirms it against numpy's result:
    additions of half an ulp times an odd number; products and quotients by powers of two that
    land halfway between two subnormals (a quotient of two binary32 significands is never a tie
    in the normal range); and products of two odd 13-bit significands (a 25-bit product).
    """
    rng = np.random.default_rng(seed)
    pairs = []
    while len(pairs) < count:
        sign = int(rng.integers(0, 2))
        if operation == "add":
            exponent = int(rng.integers(2, 250))
            a = compose(int(rng.integers(0, 2)), exponent, int(rng.integers(0, 2**23)))
            half_ulp = 2.0 ** (exponent - 127 - 24)
            b = float_to_bits((-1) ** sign * half_ulp * (2 * int(rng.integers(0, 1024)) + 1))
        elif operation == "mul" and rng.random() < 0.5:
            ma, mb = (int(m) | 1 for m in rng.integers(2**12, 2**13, 2))
            a = compose(0, 127 + int(rng.integers(-30, 30)), (ma << 11) % 2**23)
            b = compose(sign, 127 + int(rng.integers(-30, 30)), (mb << 11) % 2**23)
        elif operation in ("mul", "div"):
            # a = (2t + 1) * 2**(j - 150), scaled by 2**-j: (t + 1/2) times the smallest subnormal.
            j = int(rng.integers(1, 127))
            a = float_to_bits((2 * int(rng.integers(0, 2**22)) + 1) * 2.0 ** (j - 150))
            b = float_to_bits((-1) ** sign * 2.0 ** (-j if operation == "mul" else j))
        else:
            raise ValueError(f"Operation must be 'add', 'mul' or 'div', not {operation!r}")
        result = int(numpy_reference(operation, [a], [b])[0])
        if is_rounding_tie(exact_result(operation, a, b), result):
            pairs.append((a, b))
    return pairs
