"""The kernel contract check (issue 22, items 1 and 4): each kernel of an algorithm benched alone
before the build (:mod:`gravfm.hw.kernel_contract`, :func:`gravfm.flow.elaboration.check_kernels`).

The faulty kernels below are written as a user would write them: a gather that forgets some
messages, an apply that never passes the barrier, a scatter that swallows it, a pipelined
gather with a wrong (or no) latency declaration, a registered gather declared combinational.
Each must be refused in one line naming the algorithm, the kernel and the rule.
"""

import dataclasses
import sys
import time
import types
from pathlib import Path

import pytest
from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring

from conftest import assert_verified, cli_error, run_flow
from gravfm.algorithms import REGISTRY, WCC
from gravfm.errors import UserCodeError
from gravfm.flow.elaboration import check_kernels, gather_latency
from gravfm.flow.reporting import hazard_stall_note
from gravfm.hw import SystemConfig, apply_signature, gather_signature, scatter_signature
from gravfm.hw.fp import FPAdder
from gravfm.hw.kernel_contract import check_kernel_contract

THIS_FILE = Path(__file__).name
GRAPH = "uniform:n=32,deg=4,seed=1"  # hazard stalls are 28% of cycles with a too-small hazard unit


def _smaller_label(i):
    """WCC's gather on the ``gather_in`` payload ``i``: (state, changed)."""
    smaller = i.message.label < i.state.label
    return Mux(smaller, i.message.label, i.state.label), smaller | i.state.active


class PipelinedMinGather(wiring.Component):
    """WCC's gather through ``depth`` pipeline registers (``i.ready = ~o.valid | o.ready``)."""

    def __init__(self, layouts, depth, **traits):
        super().__init__(gather_signature(layouts, **traits))
        self._layouts, self._depth = layouts, depth

    def elaborate(self, platform):
        m = Module()
        label, active = _smaller_label(self.i.payload)
        advance = ~self.o.valid | self.o.ready
        valid, item = self.i.valid, Signal(self._layouts.gather_out)
        m.d.comb += [item.nodeid.eq(self.i.payload.nodeid), item.state.label.eq(label),
                     item.state.active.eq(active), self.i.ready.eq(advance)]
        for stage in range(self._depth):
            next_valid, next_item = Signal(name=f"valid{stage}"), Signal(self._layouts.gather_out, name=f"item{stage}")
            with m.If(advance):
                m.d.sync += [next_valid.eq(valid), next_item.eq(item)]
            valid, item = next_valid, next_item
        m.d.comb += [self.o.valid.eq(valid), self.o.payload.eq(item)]
        return m


def pipelined_gather(depth, **declared):
    """Factory of a :class:`PipelinedMinGather` whose signature declares the traits ``declared``."""
    def build(layouts):
        return PipelinedMinGather(layouts, depth, **declared)
    return build


class ForgetfulGather(wiring.Component):
    """WCC's gather that produces nothing for messages to odd vertex ids."""

    def __init__(self, layouts):
        super().__init__(gather_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        label, active = _smaller_label(self.i.payload)
        m.d.comb += [self.o.payload.nodeid.eq(self.i.payload.nodeid), self.o.payload.state.label.eq(label),
                     self.o.payload.state.active.eq(active),
                     self.o.valid.eq(self.i.valid & ~self.i.payload.nodeid[0]), self.i.ready.eq(self.o.ready)]
        return m


class CornerDroppingGather(wiring.Component):
    """WCC's gather that produces nothing when message and state labels are both 0: a corner
    random labels all but never reach (as a k-core gather dropping its output at slack 0)."""

    def __init__(self, layouts):
        super().__init__(gather_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        label, active = _smaller_label(self.i.payload)
        corner = (self.i.payload.state.label == 0) & (self.i.payload.message.label == 0)
        m.d.comb += [self.o.payload.nodeid.eq(self.i.payload.nodeid), self.o.payload.state.label.eq(label),
                     self.o.payload.state.active.eq(active), self.o.valid.eq(self.i.valid & ~corner),
                     self.i.ready.eq(self.o.ready | corner)]
        return m


class CountingGather(wiring.Component):
    """WCC's gather, combinational, that also counts the messages it takes (state a twin of it,
    seeing only some of the messages, would not share)."""

    def __init__(self, layouts):
        super().__init__(gather_signature(layouts, combinational=True))

    def elaborate(self, platform):
        m = Module()
        label, active = _smaller_label(self.i.payload)
        taken = Signal(8)
        with m.If(self.i.valid & self.o.ready):
            m.d.sync += taken.eq(taken + 1)
        m.d.comb += [self.o.payload.nodeid.eq(self.i.payload.nodeid), self.o.payload.state.label.eq(label),
                     self.o.payload.state.active.eq(active | taken[7]), self.o.valid.eq(self.i.valid),
                     self.i.ready.eq(self.o.ready)]
        return m


class BarrierlessApply(wiring.Component):
    """WCC's apply that emits active vertices' labels but never the barrier."""

    def __init__(self, layouts):
        super().__init__(apply_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, st, up = self.i.payload, self.state_o.payload, self.update_o.payload
        m.d.comb += [st.nodeid.eq(i.nodeid), st.state.label.eq(i.state.label), st.barrier.eq(i.barrier),
                     self.state_o.valid.eq(self.i.valid),
                     up.update.label.eq(i.state.label), up.sender.eq(i.nodeid), up.round.eq(i.round),
                     self.update_o.valid.eq(self.i.valid & i.state.active & ~i.barrier),
                     self.i.ready.eq(self.update_o.ready | ~self.update_o.valid)]
        return m


class BarrierSwallowingScatter(wiring.Component):
    """WCC's scatter (combinational) that drops the barrier item."""

    def __init__(self, layouts):
        super().__init__(scatter_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        m.d.comb += [o.message.label.eq(i.update.label), o.neighbor.eq(i.neighbor), o.sender.eq(i.sender),
                     o.round.eq(i.round), self.o.valid.eq(self.i.valid & ~i.barrier),
                     self.i.ready.eq(self.o.ready | i.barrier)]
        return m


class DeafScatter(wiring.Component):
    """WCC's scatter whose author forgot to drive ``i.ready`` (it stays 0)."""

    def __init__(self, layouts):
        super().__init__(scatter_signature(layouts))

    def elaborate(self, platform):
        m = Module()
        i, o = self.i.payload, self.o.payload
        m.d.comb += [o.message.label.eq(i.update.label), o.neighbor.eq(i.neighbor), o.barrier.eq(i.barrier),
                     self.o.valid.eq(self.i.valid)]
        return m


def user_algorithm(name, **kernels):
    """WCC with the given kernels replaced, as a user's file would define it."""
    return dataclasses.replace(WCC, name=name, **kernels)


def refusal(algorithm):
    """The one-line error of the kernel check for ``algorithm``."""
    with pytest.raises(UserCodeError) as caught:
        check_kernels(SystemConfig.of(algorithm))
    message = str(caught.value)
    assert "\n" not in message and f"algorithm {algorithm.name!r}" in message
    return message


def test_builtin_algorithms_pass_the_kernel_check():
    for algorithm in REGISTRY.values():
        verdicts = check_kernels(SystemConfig.of(algorithm))
        assert all(v.checked and v.ok and not v.warnings for v in verdicts.values()), (algorithm.name, verdicts)
    pagerank = check_kernels(SystemConfig.of(REGISTRY["pagerank"]))
    assert pagerank["gather"].latency == pagerank["gather"].declared == FPAdder.latency == 5
    # Multiplier 6 + adder 5 + divider 31, then the update queue's head register (LatencyQueue):
    # measured by the check, not only declared.
    assert pagerank["apply"].latency == pagerank["apply"].declared == 43


def test_gather_without_an_output_for_some_inputs_is_refused():
    message = refusal(user_algorithm("forgetful", gather=ForgetfulGather))
    assert f"{THIS_FILE}:" in message.split(": ")[0]  # at the user's kernel class
    assert "gather kernel ForgetfulGather" in message and "(one output per input, in order)" in message
    assert "has no output" in message


def test_gather_that_drops_its_output_in_a_field_corner_is_refused_naming_the_input():
    message = refusal(user_algorithm("cornered", gather=CornerDroppingGather))
    assert "gather kernel CornerDroppingGather" in message and "(one output per input, in order)" in message
    # Found by the corner segment (the random ones passed), naming the corner of the input.
    assert "on the field corners" in message and "every field 0) has no output" in message


def test_corner_items_cover_zero_all_ones_and_equal_values():
    import random

    from gravfm.hw.arch import architecture
    from gravfm.hw.kernel_bench import corner_items, field_value

    config = SystemConfig.of(WCC)
    layout = architecture(config.arch).layouts(config.algorithm, config).gather_in
    items = dict((label, raw) for raw, label in corner_items(layout, random.Random(1)))
    width = layout["state"].shape["label"].width
    for label, want in (("every field 0", 0), ("every field all ones", (1 << width) - 1), ("every field 1", 1)):
        assert field_value(layout["state"].shape, items[label] >> layout["state"].offset, "label") == want
        assert field_value(layout["message"].shape, items[label] >> layout["message"].offset, "label") == want
    assert "state.label = 0" in items and "message.label all ones" in items


def test_apply_that_drops_the_barrier_is_refused():
    message = refusal(user_algorithm("barrierless", apply=BarrierlessApply))
    assert "apply kernel BarrierlessApply" in message and "(the barrier passes)" in message
    assert "no update_o item with barrier=1" in message


def test_scatter_that_swallows_the_barrier_is_refused():
    message = refusal(user_algorithm("swallower", scatter=BarrierSwallowingScatter))
    assert "scatter kernel BarrierSwallowingScatter" in message and "(the barrier passes)" in message


def test_kernel_that_never_takes_its_input_is_refused():
    message = refusal(user_algorithm("deaf", scatter=DeafScatter))
    assert "(the kernel takes its inputs)" in message and "it took 0 of 12 inputs" in message


def test_gather_latency_declared_lower_than_measured_is_refused():
    message = refusal(user_algorithm("late", gather=pipelined_gather(3, latency=1)))
    assert "(the declared latency covers the measured one)" in message
    assert "declares latency = 1" in message and "declare latency = 3" in message
    assert "max(hazard_slots, latency + 3) = 4 vertices in flight; fewer than 6" in message


def test_gather_without_a_latency_declaration_is_refused_when_it_has_latency():
    message = refusal(user_algorithm("undeclared", gather=pipelined_gather(2)))
    assert "declares no latency (0)" in message and "declare latency = 2" in message


def test_gather_latency_declared_too_low_is_a_warning_when_the_hazard_slots_cover_it():
    lines = []
    slow = user_algorithm("covered", gather=pipelined_gather(3, latency=1))
    verdicts = check_kernels(SystemConfig.of(slow, hazard_slots=6), log=lines.append)
    assert verdicts["gather"].ok and verdicts["gather"].latency == 3
    assert any("declares latency = 1" in line and "this build's 6 hazard slots cover it" in line
               for line in lines), lines
    refusal(slow)  # the default 4 slots do not


def test_registered_gather_declared_combinational_is_refused():
    message = refusal(user_algorithm("not_combinational", gather=pipelined_gather(1, combinational=True)))
    assert "(a combinational gather answers" in message and "1 cycle(s) after its input" in message


def test_combinational_gather_that_keeps_state_is_refused():
    message = refusal(user_algorithm("counting", gather=CountingGather))
    assert "keeps state (registers in domain 'sync')" in message and "two instances" in message


def test_gather_latency_declared_higher_than_measured_is_a_warning():
    lines = []
    verdicts = check_kernels(SystemConfig.of(user_algorithm("early", gather=pipelined_gather(1, latency=4))),
                             log=lines.append)
    assert verdicts["gather"].ok and verdicts["gather"].latency == 1
    assert any("warning: algorithm 'early': gather kernel PipelinedMinGather declares latency = 4" in line
               and "3 slot(s) larger" in line for line in lines), lines


def test_correctly_declared_pipelined_gather_passes_and_is_benched_once():
    algorithm = user_algorithm("pipelined", gather=pipelined_gather(3, latency=3))
    config = SystemConfig.of(algorithm)
    lines = []
    first = check_kernels(config, log=lines.append)
    assert first["gather"].ok and first["gather"].latency == 3 and first["gather"].cycles > 0
    assert any(line.startswith("kernel contract checked in") for line in lines)
    started = time.perf_counter()
    again = check_kernels(config, log=lines.append)
    assert all(again[kind] is first[kind] for kind in first)  # the cached verdicts
    assert time.perf_counter() - started < first["gather"].seconds + 0.5
    assert gather_latency(config) == (3, 3, 6)  # declared, measured, hazard slots (latency + 3)


def test_skipping_the_check_still_elaborates_the_kernels():
    algorithm = user_algorithm("unchecked", gather=ForgetfulGather)
    assert check_kernels(SystemConfig.of(algorithm), contract=False) == dict.fromkeys(("gather", "apply", "scatter"))


def test_verilog_kernels_are_not_benched_and_say_why():
    sys.path.insert(0, str(Path(__file__).parents[1] / "examples" / "verilog_wcc"))
    try:
        from wcc_verilog import WCC_VERILOG
    finally:
        sys.path.pop(0)
    config = SystemConfig.of(WCC_VERILOG)
    from gravfm.hw.arch import architecture
    layouts = architecture(config.arch).layouts(WCC_VERILOG, config)
    verdict = check_kernel_contract("gather", WCC_VERILOG.gather(layouts), layouts)
    assert not verdict.checked and verdict.ok and "Verilog" in verdict.reason


def test_cli_refuses_a_forgetful_gather_with_exit_2(capsys, tmp_path):
    source = Path(__file__).read_text()
    module = tmp_path / "forgetful.py"
    module.write_text(source[:source.index("def user_algorithm")]
                      + "FORGETFUL = dataclasses.replace(WCC, name='forgetful', gather=ForgetfulGather)\n")
    line = cli_error(capsys, "run", f"{module}:FORGETFUL", "--graph", "tiny:grid", "--backend", "amaranth")
    assert line.startswith(f"gravfm: error: {module}:") and "one output per input" in line, line


def test_cli_option_turns_the_check_off():
    from gravfm.cli import build_parser
    from gravfm.cli.run_cmd import options_from_args

    args = build_parser().parse_args(["run", "wcc", "--graph", "tiny:grid", "--no-kernel-check"])
    assert options_from_args(args, args.algorithm, args.graph, args.pes).check_kernels is False


def _report(stall_hazard, plan=None):
    return types.SimpleNamespace(stalls={"stall_hazard": stall_hazard}, per_pe=({"cycles": 1000}, {"cycles": 1000}),
                                 cycles=1000, total_pes=2, plan=plan)


def test_wrong_latency_run_without_the_check_verifies_slower_and_says_so():
    """The issue's case: a latency-3 gather declared 1 verifies, but its hazard unit is too
    small; the report names the stalls and the declaration."""
    late = run_flow(user_algorithm("late_run", gather=pipelined_gather(3, latency=1)), GRAPH,
                    check_kernels=False)
    assert_verified(late)
    note = hazard_stall_note(late)
    assert note is not None and "declares latency 1" in note and "holds 4 vertices" in note, note
    right = run_flow(user_algorithm("right_run", gather=pipelined_gather(3, latency=3)), GRAPH)
    assert_verified(right)
    assert hazard_stall_note(right) is None and right.cycles < late.cycles


def test_hazard_stalls_above_three_percent_are_reported_with_the_declared_latency():
    assert hazard_stall_note(_report(50)) is None  # 2.5% of PE cycles
    plan = types.SimpleNamespace(config=SystemConfig.of(user_algorithm("late_report",
                                                                       gather=pipelined_gather(3, latency=1))))
    note = hazard_stall_note(_report(400, plan))
    assert "400 PE cycles (20.0% of them)" in note and "declares latency 1" in note and "holds 4 vertices" in note


def test_apply_that_keeps_its_accumulator_is_refused():
    """WCC's apply writes its label back: as an accumulator it would add one round's labels
    into the round after next."""
    message = refusal(user_algorithm("keeper", sparse_apply=False, accumulator="label"))
    assert "apply kernel" in message and "(with an accumulator, apply writes back every vertex" in message
    assert "apply must clear the accumulator" in message
