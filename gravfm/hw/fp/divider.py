"""Pipelined binary32 divider (restoring division, one quotient bit per stage)."""

from amaranth.hdl import Cat, Const, Mux

from .binary32 import EXPONENT_BIAS, SIGNIFICAND_BITS
from .logic import leading_zeros, round_and_pack, shift_right_jam, unpack
from .model import EXTENDED_BITS, QUOTIENT_BITS
from .unit import BinaryFPUnit, signed_special_case

__all__ = ["FPDivider"]


def _normalized(significand, exponent, zeros):
    """Significand shifted by its leading ``zeros`` so that bit 23 is set, and the exponent
    lowered to match."""
    return (significand << zeros)[:SIGNIFICAND_BITS], exponent - zeros


def _restoring_step(remainder, divisor):
    """One radix-2 restoring division step: (quotient bit, next remainder)."""
    bit = remainder >= divisor
    difference = Mux(bit, remainder - divisor, remainder)
    return bit, (difference << 1)[:SIGNIFICAND_BITS + 1]


class FPDivider(BinaryFPUnit):
    """IEEE-754 binary32 divider (``a / b``), fully pipelined.

    Round to nearest, ties to even; subnormal operands and results are supported exactly (no
    flushing), so results are bit-identical to numpy ``float32`` division, except that every NaN
    result is the canonical quiet NaN ``0x7FC00000``. ``0/0`` and ``inf/inf`` are NaN; a finite
    non-zero number divided by zero is a signed infinity (no exception flags are raised).

    Latency is :attr:`latency` = 31 cycles, throughput one operation per cycle. Stages:
    (1) special cases and the significands' leading-zero counts; (2) normalization of subnormal
    significands (the shift) and the quotient's exponent; (3) doubling the dividend if it is
    smaller than the divisor, so the quotient lies in [1, 2); (4..29) restoring division,
    :attr:`quotient_bits_per_stage` quotient bits per stage, 26 bits in all (24 significand bits,
    guard and round; the remainder gives the sticky bit); (30) right shift into the subnormal
    range when the exponent is below 1; (31) rounding and packing. Count and shift are two
    stages: in one, behind the PageRank apply kernel's adder, they were the path of its 4-PE
    ECP5 top (14.4 ns, 69 MHz). One quotient bit per stage, one subtract's carry chain: with
    two, chained, the second behind the first, the PageRank 4-PE top's path was a stage of the
    divider (1b22f5f, router2 seed 1: 87.2 MHz, 11.5 ns). The stages cost flip-flops, not
    LUTs, and a pipeline that never stalls (rule 7 in docs/architecture.md) no cycle per item.

    Operands (``a`` the dividend, ``b`` the divisor), results and ``tag_shape`` as in
    :class:`~gravfm.hw.fp.unit.BinaryFPUnit`.
    """

    quotient_bits_per_stage = 1
    # Count, normalize, compare, the division stages, subnormal shift, round and pack.
    latency = 3 + -(-QUOTIENT_BITS // quotient_bits_per_stage) + 2

    def stages(self, m, pipe):
        a, b = unpack(self.operands.payload.a), unpack(self.operands.payload.b)

        # Stage 1: special results; the significands' leading zeros.
        special = signed_special_case(
            m, a, b, invalid=a.is_nan | b.is_nan | (a.is_zero & b.is_zero) | (a.is_infinite & b.is_infinite),
            infinite=a.is_infinite | b.is_zero)
        stage = pipe.register(
            **special,
            a_significand=a.significand, a_exponent=a.exponent, a_zeros=leading_zeros(a.significand)[:5],
            b_significand=b.significand, b_exponent=b.exponent, b_zeros=leading_zeros(b.significand)[:5],
        )

        # Stage 2: normalize the significands.
        dividend, dividend_exponent = _normalized(stage.a_significand, stage.a_exponent, stage.a_zeros)
        divisor, divisor_exponent = _normalized(stage.b_significand, stage.b_exponent, stage.b_zeros)
        stage = pipe.register(
            is_special=stage.is_special, special_result=stage.special_result, sign=stage.sign,
            exponent=dividend_exponent - divisor_exponent + EXPONENT_BIAS,
            dividend=dividend, divisor=divisor,
        )

        # Stage 3: make the dividend at least the divisor (quotient in [1, 2)).
        smaller = stage.dividend < stage.divisor
        stage = pipe.register(
            is_special=stage.is_special, special_result=stage.special_result, sign=stage.sign,
            exponent=stage.exponent - smaller,
            remainder=Mux(smaller, stage.dividend << 1, stage.dividend)[:SIGNIFICAND_BITS + 1],
            divisor=stage.divisor, quotient=Const(0, 1),
        )

        # Division stages: a group of restoring steps each.
        for first_bit in range(0, QUOTIENT_BITS, self.quotient_bits_per_stage):
            steps = min(self.quotient_bits_per_stage, QUOTIENT_BITS - first_bit)
            remainder, bits = stage.remainder, []
            for _ in range(steps):
                bit, remainder = _restoring_step(remainder, stage.divisor)
                bits.append(bit)
            # Cat puts its first argument at the bottom: newest bit lowest.
            quotient = Cat(*reversed(bits), stage.quotient[:first_bit])
            last = first_bit + steps == QUOTIENT_BITS
            # The last division stage also decides the subnormal shift (the exponent is settled
            # since stage 3), so the shift stage starts from registers: with the compare and the
            # subtraction in front of its shifter, that stage was 9 levels deep in PageRank's
            # 4-PE ECP5 netlist (6228a4f).
            subnormal = {"tiny": stage.exponent < 1, "tiny_shift": 1 - stage.exponent} if last else {}
            stage = pipe.register(is_special=stage.is_special,
                                  special_result=stage.special_result, sign=stage.sign,
                                  exponent=stage.exponent, remainder=remainder,
                                  divisor=stage.divisor, quotient=quotient, **subnormal)

        # Shift into the subnormal range if the exponent is below 1.
        extended = Cat(stage.remainder != 0, stage.quotient[:QUOTIENT_BITS])
        extended = Mux(stage.tiny, shift_right_jam(extended, stage.tiny_shift, max_amount=EXTENDED_BITS),
                       extended)
        stage = pipe.register(is_special=stage.is_special, special_result=stage.special_result,
                              sign=stage.sign, exponent=Mux(stage.tiny, 1, stage.exponent),
                              extended=extended)

        # Last stage: round and pack.
        packed = round_and_pack(stage.sign, stage.exponent, stage.extended[3:], stage.extended[2],
                                stage.extended[:2] != 0)
        return pipe.register(result=Mux(stage.is_special, stage.special_result, packed)).result
