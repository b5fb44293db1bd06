# amaranth: UnusedElaboratable=no
# (the constructor-error tests create units that raise before they can be used)
"""The pipelined floating-point units, simulated, against the models and numpy float32."""

import random

import numpy as np
import pytest
from amaranth.back import rtlil
from amaranth.lib import data
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from gravfm.hw.fp import FPAdder, FPDivider, FPMultiplier, model, operands_layout
from gravfm.hw.fp.binary32 import compose
from gravfm.hw.fp.reference import EDGE_CASES, numpy_reference, rounding_ties
from gravfm.hw.fp.simulation import run_operations

UNITS = {"add": FPAdder, "mul": FPMultiplier, "div": FPDivider}

bit_patterns = st.one_of(
    st.sampled_from(EDGE_CASES),
    st.integers(0, 2**32 - 1),
    st.builds(compose, st.integers(0, 1),
              st.sampled_from([0, 1, 2, 24, 25, 126, 127, 128, 253, 254, 255]),
              st.one_of(st.integers(0, 2**23 - 1), st.sampled_from([0, 1, 2**22, 2**23 - 1]))),
)


@st.composite
def operand_pairs(draw):
    """Independent pairs, and pairs sharing an exponent or nearly cancelling (b close to -a)."""
    a = draw(bit_patterns)
    kind = draw(st.sampled_from(["independent", "same exponent", "near negation"]))
    if kind == "independent":
        b = draw(bit_patterns)
    elif kind == "same exponent":
        b = (a & 0x7F80_0000) | (draw(st.integers(0, 1)) << 31) | draw(st.integers(0, 2**23 - 1))
    else:
        b = ((a ^ 0x8000_0000) + draw(st.integers(-3, 3))) % 2**32
    return a, b


def check_results(operation, operations, run):
    """Results equal the model's and numpy's, in order, one per operation."""
    a = [op["a"] for op in operations]
    b = [op["b"] for op in operations]
    subtract = [op.get("subtract", 0) for op in operations]
    expected_numpy = np.where(np.array(subtract, dtype=bool), numpy_reference("sub", a, b),
                              numpy_reference(operation, a, b))
    assert len(run.results) == len(operations)
    for op, got, want in zip(operations, run.results, expected_numpy):
        function = model.sub if op.get("subtract") else model.OPERATIONS[operation]
        assert got == function(op["a"], op["b"]) == int(want), (
            f"{operation}({op['a']:#010x}, {op['b']:#010x}): unit {got:#010x}, "
            f"numpy {int(want):#010x}")


def check_full_throughput(unit_class, operations, run):
    """Back to back, every result leaves exactly `latency` cycles after its operation entered."""
    assert run.accept_cycles == tuple(range(len(operations)))
    assert all(out - accepted == unit_class.latency
               for accepted, out in zip(run.accept_cycles, run.result_cycles))
    assert run.cycles == len(operations) + unit_class.latency


@pytest.mark.parametrize("operation", UNITS)
def test_edge_cases_back_to_back(operation):
    operations = [{"a": a, "b": b} for a in EDGE_CASES for b in EDGE_CASES]
    run = run_operations(UNITS[operation](), operations)
    check_results(operation, operations, run)
    check_full_throughput(UNITS[operation], operations, run)


@pytest.mark.parametrize("operation", UNITS)
# No shrinking: every shrink step is a simulation, and the failure message already names the
# operation that differs.
@settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.data_too_large])
@given(pairs=st.lists(operand_pairs(), min_size=50, max_size=150))
def test_hypothesis_operands_back_to_back(operation, pairs):
    operations = [{"a": a, "b": b} for a, b in pairs]
    run = run_operations(UNITS[operation](), operations)
    check_results(operation, operations, run)
    check_full_throughput(UNITS[operation], operations, run)


@pytest.mark.parametrize("operation", UNITS)
def test_rounding_ties_back_to_back(operation):
    operations = [{"a": a, "b": b} for a, b in rounding_ties(operation, 150, seed=9)]
    run = run_operations(UNITS[operation](), operations)
    check_results(operation, operations, run)
    assert all(result & 1 == 0 for result in run.results)


@pytest.mark.parametrize("constant", [0x3F59_999A, 0x0000_0001, 0x8000_0000, 0x7F80_0000, 0x7FC0_0000, 0x4B80_0001])
def test_a_constant_factor_multiplies_as_an_operand_would(constant):
    """0.85 (PageRank's damping), a subnormal, -0, infinity, NaN, a full significand."""
    operations = [{"a": a, "b": constant} for a in EDGE_CASES] + [
        {"a": a, "b": constant} for a in random.Random(constant).choices(range(2**32), k=60)]
    driven = [{**op, "b": 0x4049_0FDB} for op in operations]   # pi on the port: not read
    run = run_operations(FPMultiplier(constant_b=constant), driven)
    check_results("mul", operations, run)
    check_full_throughput(FPMultiplier, operations, run)


def test_a_constant_factor_must_be_a_bit_pattern():
    with pytest.raises(TypeError, match="constant_b must be a binary32 bit pattern"):
        FPMultiplier(constant_b=0.85)


TAG_LAYOUT = data.StructLayout({"vertex": 12, "last": 1})


@pytest.mark.parametrize("operation", UNITS)
def test_random_backpressure_keeps_order_and_tags(operation):
    rng = random.Random(11)
    operations = []
    for index in range(300):
        a, b = rng.choice(EDGE_CASES + (rng.getrandbits(32),) * 8), rng.getrandbits(32)
        operations.append({"a": a, "b": b, "tag": {"vertex": index % 4096, "last": index % 2}})
    # Back to back into the first long stall, which then fills the pipeline; flicker after.
    latency = UNITS[operation].latency
    input_valid = [True] * latency + [rng.random() < 0.8 for _ in range(61)]
    # Long stalls as well as cycle-by-cycle flicker on the output.
    output_ready = [False] * (latency + 20) + [rng.random() < 0.6 for _ in range(70)] + [True] * 10
    unit = UNITS[operation](tag_shape=TAG_LAYOUT)
    run = run_operations(unit, operations, input_valid=input_valid, output_ready=output_ready)
    check_results(operation, operations, run)
    assert [tag["vertex"] for tag in run.tags] == [op["tag"]["vertex"] for op in operations]
    assert [tag["last"] for tag in run.tags] == [op["tag"]["last"] for op in operations]
    # After each clock edge the pipeline holds at most `latency` operations: a stalled output
    # freezes it instead of accepting more (and the long stall does fill it).
    in_flight = max(sum(c <= cycle for c in run.accept_cycles) -
                    sum(c <= cycle for c in run.result_cycles) for cycle in range(run.cycles))
    assert in_flight == UNITS[operation].latency


@pytest.mark.parametrize("operation", UNITS)
def test_stalls_cost_only_the_stalled_cycles(operation):
    # With operations always waiting, a result leaves on every cycle the output is ready, from
    # the cycle the first one reaches the output on: freezing the pipeline adds no bubbles.
    rng = random.Random(4)
    operations = [{"a": rng.getrandbits(32), "b": rng.getrandbits(32)} for _ in range(120)]
    output_ready = [rng.random() < 0.5 for _ in range(53)]
    unit_class = UNITS[operation]
    run = run_operations(unit_class(), operations, output_ready=output_ready)
    check_results(operation, operations, run)
    ready_cycles = [cycle for cycle in range(unit_class.latency, run.cycles)
                    if output_ready[cycle % len(output_ready)]]
    assert run.result_cycles == tuple(ready_cycles)


def test_adder_subtract_field_selects_per_operation():
    rng = random.Random(5)
    operations = [{"a": rng.choice(EDGE_CASES), "b": rng.getrandbits(32),
                   "subtract": rng.getrandbits(1)} for _ in range(200)]
    operations += [{"a": a, "b": b, "subtract": 1} for a in EDGE_CASES for b in EDGE_CASES[::3]]
    operations += [{"a": a, "b": a, "subtract": s} for a in EDGE_CASES for s in (0, 1)]
    run = run_operations(FPAdder(subtract_field=True), operations)
    check_results("add", operations, run)
    check_full_throughput(FPAdder, operations, run)


@pytest.mark.parametrize("make", [
    lambda: FPAdder(tag_shape="vertex"), lambda: FPMultiplier(tag_shape=3.5),
    lambda: FPDivider(tag_shape=[1, 2]),
])
def test_bad_tag_shape_is_rejected(make):
    with pytest.raises(TypeError, match="Tag shape must be a shape-castable object or None"):
        make()


def test_bad_subtract_field_is_rejected():
    with pytest.raises(TypeError, match="subtract_field must be a bool, not 1"):
        FPAdder(subtract_field=1)


@pytest.mark.parametrize("operation", UNITS)
def test_units_convert_to_rtlil_with_documented_ports(operation):
    unit = UNITS[operation](tag_shape=7)
    assert set(unit.operands.payload.shape().members) == {"a", "b", "tag"}
    assert set(unit.results.payload.shape().members) == {"result", "tag"}
    text = rtlil.convert(unit, name=f"fp_{operation}")
    assert "operands__payload" in text and "results__valid" in text


def test_adder_without_options_has_only_operands():
    assert set(operands_layout().members) == {"a", "b"}
    assert set(operands_layout(subtract_field=True).members) == {"a", "b", "subtract"}
    assert FPDivider.latency == 31 and FPAdder.latency == 5 and FPMultiplier.latency == 6


@pytest.mark.slow
@pytest.mark.parametrize("operation", UNITS)
def test_volume_with_backpressure(operation):
    # About 20 s for the three units: 15,000 operations each, checked one by one.
    rng = random.Random(23)
    exponents = [0, 1, 2, 24, 25, 100, 126, 127, 128, 200, 253, 254, 255]
    operations = []
    for _ in range(15_000):
        a = rng.getrandbits(32) if rng.random() < 0.4 else compose(
            rng.getrandbits(1), rng.choice(exponents), rng.getrandbits(23))
        b = ((a ^ 0x8000_0000) + rng.randint(-3, 3)) % 2**32 if rng.random() < 0.2 else \
            rng.getrandbits(32)
        operations.append({"a": a, "b": b, "tag": rng.getrandbits(7)})
    output_ready = [rng.random() < 0.7 for _ in range(101)]
    run = run_operations(UNITS[operation](tag_shape=7), operations, output_ready=output_ready)
    check_results(operation, operations, run)
    assert list(run.tags) == [op["tag"] for op in operations]
