"""The bit-accurate models of the floating-point units against numpy float32 arithmetic."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gravfm.hw.fp import model
from gravfm.hw.fp.binary32 import (
    CANONICAL_NAN, canonicalize_nan, compose, float_to_bits,
)
from gravfm.hw.fp.reference import (
    EDGE_CASES, exact_result, is_rounding_tie, numpy_reference, rounding_ties,
)

OPERATIONS = ("add", "sub", "mul", "div")

bit_patterns = st.one_of(
    st.sampled_from(EDGE_CASES),
    st.integers(0, 2**32 - 1),
    st.builds(compose, st.integers(0, 1),
              st.sampled_from([0, 1, 2, 23, 24, 25, 26, 100, 126, 127, 128, 200, 253, 254, 255]),
              st.one_of(st.integers(0, 2**23 - 1), st.sampled_from([0, 1, 2, 2**22, 2**23 - 1]))),
)


def assert_matches_numpy(operation, a_values, b_values):
    expected = numpy_reference(operation, a_values, b_values)
    function = model.OPERATIONS[operation]
    for a, b, want in zip(a_values, b_values, expected):
        got = function(int(a), int(b))
        assert got == int(want), (f"{operation}({int(a):#010x}, {int(b):#010x}) = {got:#010x}, "
                                  f"numpy says {int(want):#010x}")


def random_operands(rng, count):
    """Bit patterns: half uniform, half with exponents near the interesting boundaries."""
    uniform = rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32)
    exponents = rng.choice(np.array([0, 1, 2, 24, 25, 100, 126, 127, 128, 253, 254, 255],
                                    dtype=np.uint32), count)
    fractions = rng.integers(0, 2**23, count, dtype=np.uint32)
    signs = rng.integers(0, 2, count, dtype=np.uint32)
    boundary = (signs << 31) | (exponents << 23) | fractions
    return np.where(rng.random(count) < 0.5, uniform, boundary).astype(np.uint32)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_edge_cases_cross_product(operation):
    a, b = np.meshgrid(np.array(EDGE_CASES, dtype=np.uint32), np.array(EDGE_CASES, dtype=np.uint32))
    assert_matches_numpy(operation, a.ravel(), b.ravel())


@pytest.mark.parametrize("seed, count, near", [
    pytest.param(7, 20_000, 5_000, id="many"),
    pytest.param(2026, 250_000, 60_000, marks=pytest.mark.slow, id="volume"),
])
@pytest.mark.parametrize("operation", OPERATIONS)
def test_random_operands(operation, seed, count, near):
    rng = np.random.default_rng(seed)
    a = random_operands(rng, count)
    b = random_operands(rng, count)
    # About a quarter of the pairs nearly cancel (b close to -a), which exercises the adder's
    # leading-zero normalization.
    b[:near] = (a[:near] ^ np.uint32(0x8000_0000)) + rng.integers(-4, 5, near).astype(np.uint32)
    assert_matches_numpy(operation, a, b)


@settings(max_examples=300)
@given(operation=st.sampled_from(OPERATIONS), a=bit_patterns, b=bit_patterns)
def test_hypothesis_operands(operation, a, b):
    assert_matches_numpy(operation, [a], [b])


@pytest.mark.parametrize("operation", ["add", "mul", "div"])
def test_rounding_ties_round_to_even(operation):
    pairs = rounding_ties(operation, 300, seed=3)
    for a, b in pairs:
        result = model.OPERATIONS[operation](a, b)
        assert is_rounding_tie(exact_result(operation, a, b), result)
        assert result & 1 == 0, f"{operation}({a:#010x}, {b:#010x}): a tie must round to even"
    assert_matches_numpy(operation, *zip(*pairs))


@pytest.mark.parametrize("a, b", [
    (1.0, 2.0**-24), (1.0, 3 * 2.0**-24), (1.0 + 2.0**-23, 2.0**-24), (-1.0, -(2.0**-24)),
    (2.0**24, 1.0), (2.0**24 + 2, 1.0), (1.0, -(2.0**-25)),
])
def test_addition_ties_round_to_even(a, b):
    a_bits, b_bits = float_to_bits(a), float_to_bits(b)
    result = model.add(a_bits, b_bits)
    assert is_rounding_tie(exact_result("add", a_bits, b_bits), result)
    assert result & 1 == 0, "a tie must round to the even neighbour"
    assert_matches_numpy("add", [a_bits], [b_bits])


@pytest.mark.parametrize("operation, a, b, expected", [
    # Overflow to infinity, and the largest finite number rounding up.
    ("mul", 0x7F7F_FFFF, float_to_bits(2.0), 0x7F80_0000),
    ("add", 0x7F7F_FFFF, 0x7F7F_FFFF, 0x7F80_0000),
    ("add", 0x7F7F_FFFF, float_to_bits(2.0**103), 0x7F80_0000),
    ("div", 0xFF7F_FFFF, float_to_bits(0.5), 0xFF80_0000),
    # Underflow: ties in the subnormal range round to even, tiny results to a signed zero.
    ("div", 0x0000_0003, float_to_bits(2.0), 0x0000_0002),
    ("div", 0x0000_0001, float_to_bits(2.0), 0x0000_0000),
    ("div", 0x8000_0001, float_to_bits(1.5), 0x8000_0001),
    ("mul", 0x0000_0005, float_to_bits(0.5), 0x0000_0002),
    ("mul", 0x0080_0000, float_to_bits(0.5), 0x0040_0000),
    ("mul", 0x0000_0001, 0x0000_0001, 0x0000_0000),
    ("mul", 0x8000_0001, 0x0000_0001, 0x8000_0000),
    # The largest subnormal rounds up into the smallest normal number.
    ("mul", 0x007F_FFFF, float_to_bits(1.0 + 2.0**-23), 0x0080_0000),
    # Subnormal arithmetic is exact in the adder; cancellation gives +0.
    ("add", 0x0000_0001, 0x007F_FFFF, 0x0080_0000),
    ("sub", 0x0080_0000, 0x0000_0001, 0x007F_FFFF),
    ("sub", 0x3F80_0001, 0x3F80_0001, 0x0000_0000),
    ("add", 0x8000_0000, 0x8000_0000, 0x8000_0000),
    ("add", 0x8000_0000, 0x0000_0000, 0x0000_0000),
    # Invalid operations.
    ("add", 0x7F80_0000, 0xFF80_0000, CANONICAL_NAN),
    ("mul", 0x7F80_0000, 0x8000_0000, CANONICAL_NAN),
    ("div", 0x0000_0000, 0x8000_0000, CANONICAL_NAN),
    ("div", 0xFF80_0000, 0x7F80_0000, CANONICAL_NAN),
    ("div", 0x3F80_0000, 0x8000_0000, 0xFF80_0000),
    ("add", 0xFFC1_2345, 0x3F80_0000, CANONICAL_NAN),
])
def test_named_cases(operation, a, b, expected):
    assert model.OPERATIONS[operation](a, b) == expected
    assert int(numpy_reference(operation, [a], [b])[0]) == expected


def test_canonicalize_nan_only_touches_nans():
    assert canonicalize_nan(0xFFC0_0001) == CANONICAL_NAN
    assert canonicalize_nan(0x7F80_0001) == CANONICAL_NAN
    assert canonicalize_nan(0xFF80_0000) == 0xFF80_0000


def test_is_rounding_tie_detects_midpoints_only():
    one = float_to_bits(1.0)
    assert is_rounding_tie(exact_result("add", one, float_to_bits(2.0**-24)), one)
    assert not is_rounding_tie(exact_result("add", one, float_to_bits(2.0**-23)), one + 1)
    assert not is_rounding_tie(exact_result("add", one, float_to_bits(3 * 2.0**-26)), one)


def test_numpy_reference_rejects_unknown_operation():
    with pytest.raises(ValueError, match="'pow'"):
        numpy_reference("pow", [0], [0])


def test_edge_cases_reach_every_result_category():
    # The edge-case cross product (which the hardware tests also stream) must produce each kind
    # of result the units special-case, or those tests would not exercise it.
    finite = [x for x in EDGE_CASES if (x >> 23) & 0xFF != 0xFF]
    seen = set()
    for operation in OPERATIONS:
        for a in finite:
            for b in finite:
                result = model.OPERATIONS[operation](a, b)
                field, magnitude = (result >> 23) & 0xFF, result & 0x7FFF_FFFF
                if field == 0xFF and magnitude == 0x7F80_0000:
                    seen.add("overflow to infinity")
                if field == 0 and magnitude and (a >> 23) & 0xFF and (b >> 23) & 0xFF:
                    seen.add("subnormal from normal operands")
                if magnitude == 0 and a & 0x7FFF_FFFF and b & 0x7FFF_FFFF:
                    seen.add("zero from non-zero operands")
                if operation == "add" and magnitude == 0 and a == b ^ 0x8000_0000 and a & 0x7FFF_FFFF:
                    seen.add("exact cancellation")
                if operation == "sub" and field and ((a >> 23) & 0xFF) - field >= 8:
                    seen.add("massive cancellation")
                if result == CANONICAL_NAN:
                    seen.add("invalid operation")
    assert seen == {"overflow to infinity", "subnormal from normal operands",
                    "zero from non-zero operands", "exact cancellation", "massive cancellation",
                    "invalid operation"}
