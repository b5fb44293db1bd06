"""Drive a floating-point unit in the Amaranth simulator with a list of operations.

Used by the tests and ``benchmarks/bench_fp.py``; it knows nothing of what the unit computes.
"""

from dataclasses import dataclass
from collections.abc import Sequence

from amaranth.sim import Simulator

__all__ = ["StreamRun", "run_operations"]


@dataclass(frozen=True)
class StreamRun:
    """What came out of a unit.

    Attributes
    ----------
    results : tuple of int
        ``payload.result`` of each output transfer, in order.
    tags : tuple
        ``payload.tag`` of each output transfer as sampled (an ``int``, or a
        :class:`amaranth.lib.data.Const` for a layout), or empty if the unit has no tag.
    accept_cycles, result_cycles : tuple of int
        Cycle of each input transfer and of each output transfer.
    cycles : int
        Cycles simulated until the last result was transferred.
    """

    results: tuple
    tags: tuple
    accept_cycles: tuple
    result_cycles: tuple
    cycles: int


def run_operations(unit, operations: Sequence[dict], *, input_valid: Sequence[bool] = (),
                   output_ready: Sequence[bool] = (), max_cycles: int | None = None) -> StreamRun:
    """Stream ``operations`` into ``unit.operands`` and collect ``unit.results``.

    Parameters
    ----------
    unit : FPAdder, FPMultiplier or FPDivider (any component with those two streams)
        A fresh component (it is elaborated by the simulator).
    operations : sequence of dict
        Payload field values of each operation, e.g. ``{"a": 0x3F800000, "b": 0, "tag": 7}``.
    input_valid, output_ready : sequence of bool
        Per-cycle patterns, repeated cyclically; empty means always true (operations back to back,
        results always taken).
    max_cycles : int, optional
        Give up after this many cycles (default: generous bound from the pattern lengths).

    Raises
    ------
    RuntimeError
        If the unit does not deliver as many results as operations within ``max_cycles``.
    """
    operations = list(operations)
    has_tag = "tag" in unit.results.payload.shape().members
    if max_cycles is None:
        max_cycles = 4 * (len(operations) + 8) * (1 + len(input_valid) + len(output_ready)) + 100
    results, tags, accept_cycles, result_cycles = [], [], [], []
    total_cycles = 0

    async def testbench(ctx):
        nonlocal total_cycles
        sent = 0
        for cycle in range(max_cycles):
            valid = sent < len(operations) and (not input_valid or
                                                input_valid[cycle % len(input_valid)])
            ctx.set(unit.operands.valid, valid)
            if valid:
                for field, value in operations[sent].items():
                    ctx.set(getattr(unit.operands.payload, field), value)
            ready = not output_ready or output_ready[cycle % len(output_ready)]
            ctx.set(unit.results.ready, ready)
            *_, in_ready, out_valid, result, tag = await ctx.tick().sample(
                unit.operands.ready, unit.results.valid, unit.results.payload.result,
                unit.results.payload.tag if has_tag else unit.results.valid)
            if valid and in_ready:
                accept_cycles.append(cycle)
                sent += 1
            if out_valid and ready:
                results.append(result)
                if has_tag:
                    tags.append(tag)
                result_cycles.append(cycle)
                if len(results) == len(operations):
                    total_cycles = cycle + 1
                    return
        raise RuntimeError(f"unit delivered {len(results)} of {len(operations)} results in "
                           f"{max_cycles} cycles")

    simulator = Simulator(unit)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()
    return StreamRun(tuple(results), tuple(tags), tuple(accept_cycles), tuple(result_cycles),
                     total_cycles)
