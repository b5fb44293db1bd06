"""Field layout and special encodings of IEEE-754 binary32, plus float <-> bit-pattern conversions.

Pure Python (no Amaranth), shared by the bit-accurate model and the gateware.
"""

import struct

__all__ = [
    "EXPONENT_BITS", "FRACTION_BITS", "SIGNIFICAND_BITS", "EXPONENT_BIAS", "MAX_EXPONENT_FIELD",
    "CANONICAL_NAN", "POSITIVE_INFINITY", "SIGN_MASK", "MAGNITUDE_MASK",
    "float_to_bits", "bits_to_float", "is_nan_bits", "canonicalize_nan", "compose",
]

EXPONENT_BITS = 8
FRACTION_BITS = 23
#: Fraction plus the hidden leading bit.
SIGNIFICAND_BITS = FRACTION_BITS + 1
EXPONENT_BIAS = 127
#: Exponent field of infinities and NaNs.
MAX_EXPONENT_FIELD = (1 << EXPONENT_BITS) - 1

#: The only NaN the units produce: quiet, positive, empty payload.
CANONICAL_NAN = 0x7FC0_0000
POSITIVE_INFINITY = 0x7F80_0000
SIGN_MASK = 0x8000_0000
MAGNITUDE_MASK = 0x7FFF_FFFF


def float_to_bits(value: float) -> int:
    """Bit pattern of ``value`` rounded to binary32 (as ``struct`` does: nearest even)."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def bits_to_float(bits: int) -> float:
    """The binary32 number with bit pattern ``bits``, as a Python float (exact)."""
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFF_FFFF))[0]


def is_nan_bits(bits: int) -> bool:
    """True if ``bits`` encodes a NaN (maximum exponent, non-zero fraction)."""
    return (bits & MAGNITUDE_MASK) > POSITIVE_INFINITY


def canonicalize_nan(bits: int) -> int:
    """``bits`` unchanged, except that every NaN becomes :data:`CANONICAL_NAN`."""
    return CANONICAL_NAN if is_nan_bits(bits) else bits


def compose(sign: int, exponent_field: int, fraction: int) -> int:
    """Bit pattern with the given sign bit, biased exponent field and fraction field."""
    return (sign << 31) | (exponent_field << FRACTION_BITS) | fraction
