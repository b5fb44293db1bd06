"""Pipelined binary32 multiplier."""

from amaranth.hdl import Const, Mux

from .binary32 import EXPONENT_BIAS
from .logic import leading_zeros, round_and_pack, shift_right_jam, unpack
from .unit import BinaryFPUnit, signed_special_case
from ..unused import refusal

__all__ = ["FPMultiplier"]

_PRODUCT_BITS = 48
#: Operand width of one ECP5 ``MULT18X18D`` (and of most FPGAs' DSP multipliers).
_DSP_BITS = 18


def _partial_products(a, b):
    """The four products of ``a`` and ``b`` (24 bits each) split at bit 18, each the width of
    one DSP multiplier: ``{"ll": a_lo * b_lo, "lh": a_lo * b_hi, "hl": a_hi * b_lo,
    "hh": a_hi * b_hi}``."""
    a_lo, a_hi = a[:_DSP_BITS], a[_DSP_BITS:]
    b_lo, b_hi = b[:_DSP_BITS], b[_DSP_BITS:]
    return {"ll": a_lo * b_lo, "lh": a_lo * b_hi, "hl": a_hi * b_lo, "hh": a_hi * b_hi}


class FPMultiplier(BinaryFPUnit):
    """IEEE-754 binary32 multiplier (``a * b``), fully pipelined.

    Round to nearest, ties to even; subnormal operands and results are supported exactly (no
    flushing), so results are bit-identical to numpy ``float32`` multiplication, except that every
    NaN result is the canonical quiet NaN ``0x7FC00000``. ``inf * 0`` is NaN; overflow gives a
    signed infinity, underflow a signed zero or subnormal.

    Latency is :attr:`latency` = 6 cycles, throughput one operation per cycle. Stages:
    (1) unpacking and special cases, and the significands' leading zeros; (2) the four 18-bit
    partial products of the 24 x 24-bit product, each one DSP multiplier with a register on each
    side; (3) their sum; (4) normalization of the product (a left shift by the operands' leading
    zeros and one bit more or not; needed for subnormal operands); (5) right shift into the
    subnormal range when the exponent is below 1; (6) rounding and packing. The product and its
    sum were one stage: on PageRank's 4-PE ECP5 top (64e5a27, router2 seed 1: 82.0 MHz) the path
    ran from the operand register over 3.9 ns of wire through a DSP (3.1 ns) into the partial
    products' carry chains.

    Operands, results and ``tag_shape`` as in :class:`~gravfm.hw.fp.unit.BinaryFPUnit`;
    ``constant_b``: a binary32 bit pattern that is ``b`` of every operation (``operands.payload.b``
    is then not read). Its significand then goes into the multiply as a constant rather than
    through a stage register: such a register, the same in every PE, was merged by synthesis
    into one that fed every PE's multiplier across the chip (PageRank's 4-PE top on ECP5,
    83b811f, router1 seed 1: 90.0 MHz, 3.5 ns of its 11.1 ns path the wire from one PE's
    register to another's multiplier).
    """

    latency = 6

    def __init__(self, *, tag_shape=None, constant_b=None):
        if constant_b is not None and not (isinstance(constant_b, int) and 0 <= constant_b < 2**32):
            raise refusal(self, f"FPMultiplier constant_b must be a binary32 bit pattern (0 .. 2**32 - 1), "
                                f"not {constant_b!r}")
        self._constant_b = constant_b
        super().__init__(tag_shape=tag_shape)

    def stages(self, m, pipe):
        constant = self._constant_b is not None
        b_bits = Const(self._constant_b, 32) if constant else self.operands.payload.b
        a, b = unpack(self.operands.payload.a), unpack(b_bits)

        # Stage 1: special results; exponent of the product for a leading one at bit 47.
        special = signed_special_case(
            m, a, b, invalid=a.is_nan | b.is_nan | (a.is_infinite & b.is_zero) | (a.is_zero & b.is_infinite),
            infinite=a.is_infinite | b.is_infinite)
        # The product's leading zeros foretold by the operands': a significand with z leading
        # zeros lies in [2^(23 - z), 2^(24 - z)), so the product of two has za + zb or
        # za + zb + 1 (operands are non-zero here). Counted here, so that the operand registers
        # feed nothing but the multipliers.
        operand_zeros = leading_zeros(a.significand)[:5] + leading_zeros(b.significand)[:5]
        s1 = pipe.register(
            **special,
            exponent_sum=a.exponent + b.exponent - (EXPONENT_BIAS - 1),
            operand_zeros=operand_zeros,
            a_significand=a.significand, **({} if constant else {"b_significand": b.significand}),
        )
        b_significand = b.significand if constant else s1.b_significand

        # Stage 2: the partial products, one DSP multiplier each, registered; the exponent less
        # the leading zeros (behind the count in stage 1 it made that stage 8 levels deep in
        # PageRank's 4-PE ECP5 netlist, 6228a4f).
        partial = _partial_products(s1.a_significand, b_significand)
        s2 = pipe.register(is_special=s1.is_special, special_result=s1.special_result, sign=s1.sign,
                           exponent=s1.exponent_sum - s1.operand_zeros, operand_zeros=s1.operand_zeros,
                           **{f"product_{name}": value for name, value in partial.items()})

        # Stage 3: their sum.
        middle = s2.product_lh + s2.product_hl
        s3_sum = s2.product_ll + (middle << _DSP_BITS) + (s2.product_hh << 2 * _DSP_BITS)
        s3 = pipe.register(is_special=s2.is_special, special_result=s2.special_result, sign=s2.sign,
                           exponent=s2.exponent, operand_zeros=s2.operand_zeros,
                           product=s3_sum[:_PRODUCT_BITS])

        # Stage 4: normalize so that bit 47 is set: the foretold shift, then one more if bit 47
        # is still clear (no leading-zero count of the 48-bit product on this path).
        shifted = (s3.product << s3.operand_zeros)[:_PRODUCT_BITS]
        short = ~shifted[_PRODUCT_BITS - 1]
        s4 = pipe.register(is_special=s3.is_special, special_result=s3.special_result,
                           sign=s3.sign, exponent=s3.exponent - short,
                           product=Mux(short, shifted << 1, shifted)[:_PRODUCT_BITS])

        # Stage 5: shift into the subnormal range if the exponent is below 1.
        tiny = s4.exponent < 1
        product = Mux(tiny, shift_right_jam(s4.product, 1 - s4.exponent, max_amount=_PRODUCT_BITS),
                      s4.product)
        s5 = pipe.register(is_special=s4.is_special, special_result=s4.special_result,
                           sign=s4.sign, exponent=Mux(tiny, 1, s4.exponent),
                           significand=product[24:], guard=product[23],
                           sticky=product[:23] != 0)

        # Stage 6: round and pack.
        packed = round_and_pack(s5.sign, s5.exponent, s5.significand, s5.guard, s5.sticky)
        return pipe.register(result=Mux(s5.is_special, s5.special_result, packed)).result
