"""Pipelined binary32 adder/subtractor."""

from amaranth.hdl import Cat, Const, Mux, Signal

from .binary32 import CANONICAL_NAN
from .logic import EXPONENT_SHAPE, leading_zeros, round_and_pack, shift_right_jam, unpack
from .unit import BinaryFPUnit

__all__ = ["FPAdder"]

# Extended significand: hidden bit at bit 26, then 23 fraction bits, guard, round, sticky.
_EXTENDED_BITS = 27


class FPAdder(BinaryFPUnit):
    """IEEE-754 binary32 adder (``a + b``, or ``a - b`` per operation), fully pipelined.

    Round to nearest, ties to even; subnormal operands and results are supported exactly (no
    flushing), so results are bit-identical to numpy ``float32`` addition, except that every NaN
    result is the canonical quiet NaN ``0x7FC00000``. ``inf - inf`` is NaN; an exact zero sum is
    ``+0`` except ``(-0) + (-0) = -0``; overflow gives a signed infinity.

    Latency is :attr:`latency` = 5 cycles, throughput one operation per cycle. Stages: (1) special
    cases and operand swap so that ``|x| >= |y|``; (2) alignment of ``y`` with guard, round and
    sticky bits, then addition or subtraction; (3) the leading-zero count of a cancellation,
    stopping at the subnormal exponent; (4) normalization (the shift); (5) rounding and packing.

    Operands, results and ``tag_shape`` as in :class:`~gravfm.hw.fp.unit.BinaryFPUnit`.

    Parameters
    ----------
    subtract_field : bool
        If true, the operands carry a 1-bit ``subtract`` field selecting ``a - b``
        (``operands_layout(tag_shape, subtract_field=True)``).
    """

    latency = 5

    def __init__(self, *, tag_shape=None, subtract_field=False):
        if not isinstance(subtract_field, bool):
            raise TypeError(f"subtract_field must be a bool, not {subtract_field!r}")
        self._subtract_field = subtract_field
        super().__init__(tag_shape=tag_shape, subtract_field=subtract_field)

    def stages(self, m, pipe):
        payload = self.operands.payload
        subtract = payload.subtract if self._subtract_field else 0
        b_bits = Cat(payload.b[:31], payload.b[31] ^ subtract)
        a, b = unpack(payload.a), unpack(b_bits)

        # Stage 1: special results; order the operands by magnitude.
        special_result = Signal(32)
        with m.If(a.is_nan | b.is_nan | (a.is_infinite & b.is_infinite & (a.sign != b.sign))):
            m.d.comb += special_result.eq(CANONICAL_NAN)
        with m.Elif(a.is_infinite):
            m.d.comb += special_result.eq(payload.a)
        with m.Else():
            m.d.comb += special_result.eq(b_bits)
        swap = a.magnitude < b.magnitude
        large_exponent = Mux(swap, b.exponent, a.exponent)
        # Both differences beside the compare, so that the swap only selects one (no subtractor
        # behind the comparator).
        exponent_difference = Mux(swap, b.exponent - a.exponent, a.exponent - b.exponent)[:9]
        s1 = pipe.register(
            is_special=a.is_nan | b.is_nan | a.is_infinite | b.is_infinite,
            special_result=special_result,
            sign=Mux(swap, b.sign, a.sign),
            zero_sign=a.sign & b.sign,
            effective_subtract=a.sign ^ b.sign,
            large_significand=Mux(swap, b.significand, a.significand),
            small_significand=Mux(swap, a.significand, b.significand),
            exponent=large_exponent,
            exponent_difference=exponent_difference,
        )

        # Stage 2: align the smaller operand and add or subtract it, on one carry chain (the
        # subtrahend inverted, the carry in set) rather than two beside a multiplexer.
        aligned = shift_right_jam(Cat(Const(0, 3), s1.small_significand),
                                  s1.exponent_difference, max_amount=_EXTENDED_BITS)
        large = Cat(Const(0, 3), s1.large_significand)
        invert = s1.effective_subtract.replicate(_EXTENDED_BITS + 1)
        total = (large + (aligned ^ invert) + s1.effective_subtract)[:_EXTENDED_BITS + 1]
        s2 = pipe.register(is_special=s1.is_special, special_result=s1.special_result,
                           sign=s1.sign, zero_sign=s1.zero_sign, exponent=s1.exponent, total=total,
                           shift_limit=_shift_limit(s1.exponent))

        # Stage 3: count the leading zeros of a cancellation. A left shift never goes below
        # exponent 1 (the result is then subnormal and exact): the limit's marker bit stops the
        # count there, so no compare follows it.
        s3 = pipe.register(is_special=s2.is_special, special_result=s2.special_result,
                           sign=s2.sign, zero_sign=s2.zero_sign, exponent=s2.exponent, total=s2.total,
                           is_zero=s2.total == 0,
                           shift=leading_zeros(s2.total[:_EXTENDED_BITS] | s2.shift_limit)[:5])

        # Stage 4: normalize. A carry shifts right by one, a cancellation left by the count. Count
        # and shift were one stage: on PageRank's 4-PE ECP5 top (6228a4f, router2 seed 1:
        # 82.7 MHz) they were its path, 10 levels of logic in 12.1 ns.
        extended = Signal(_EXTENDED_BITS)
        exponent = Signal(EXPONENT_SHAPE)
        with m.If(s3.total[_EXTENDED_BITS]):
            m.d.comb += [extended.eq(shift_right_jam(s3.total, 1, max_amount=1)),
                         exponent.eq(s3.exponent + 1)]
        with m.Else():
            m.d.comb += [extended.eq(s3.total << s3.shift), exponent.eq(s3.exponent - s3.shift)]
        s4 = pipe.register(is_special=s3.is_special, special_result=s3.special_result,
                           sign=s3.sign, is_zero=s3.is_zero, zero_sign=s3.zero_sign,
                           exponent=exponent, extended=extended)

        # Stage 5: round and pack.
        packed = round_and_pack(s4.sign, s4.exponent, s4.extended[3:], s4.extended[2],
                                s4.extended[:2] != 0)
        result = Mux(s4.is_special, s4.special_result,
                     Mux(s4.is_zero, Cat(Const(0, 31), s4.zero_sign), packed))
        return pipe.register(result=result).result


def _shift_limit(exponent):
    """A marker at bit ``27 - exponent`` of the extended significand: a left shift that moves it
    to the top brings the exponent to 1. None when the exponent is above 27 (no shift reaches 1)."""
    return Cat(*(exponent == _EXTENDED_BITS - bit for bit in range(_EXTENDED_BITS)))
