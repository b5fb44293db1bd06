"""Benchmark of the pipelined floating-point units: correctness volume, simulation speed, cost.

For each unit, streams a fixed-seed set of operations (uniform bit patterns, boundary exponents,
near-cancelling pairs) through the Amaranth simulator, with and without output backpressure,
and checks every result against numpy float32 and the bit-accurate model. Optionally synthesises
each unit with Yosys (``--synth ecp5-85`` adds nextpnr's Fmax; ``--synth xcu`` counts only).

Usage::

    python benchmarks/bench_fp.py --operations 2000 --json fp.json [--synth ecp5-85]

The JSON records the arguments and the provenance (git revision, date, machine).
"""

import argparse
import random
import sys
import tempfile
import time

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gravfm.hw.fp import FPAdder, FPDivider, FPMultiplier, model
from gravfm.hw.fp.binary32 import compose
from gravfm.hw.fp.reference import EDGE_CASES, numpy_reference
from gravfm.hw.fp.simulation import run_operations
from gravfm.provenance import arguments, write_results

UNITS = {"add": FPAdder, "mul": FPMultiplier, "div": FPDivider}


class FlatPorts(wiring.Component):
    """A unit with its streams flattened to plain ports (the synthesis wrapper takes no views)."""

    a: In(32)
    b: In(32)
    operands_valid: In(1)
    operands_ready: Out(1)
    result: Out(32)
    results_valid: Out(1)
    results_ready: In(1)

    def __init__(self, unit):
        self.unit = unit
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.unit
        m.d.comb += [
            unit.operands.payload.a.eq(self.a), unit.operands.payload.b.eq(self.b),
            unit.operands.valid.eq(self.operands_valid), self.operands_ready.eq(unit.operands.ready),
            self.result.eq(unit.results.payload.result), self.results_valid.eq(unit.results.valid),
            unit.results.ready.eq(self.results_ready),
        ]
        return m


def make_operations(count, seed):
    """Fixed-seed operand pairs: a mix of uniform, boundary-exponent and near-cancelling pairs."""
    rng = random.Random(seed)

    def operand():
        if rng.random() < 0.4:
            return rng.getrandbits(32)
        if rng.random() < 0.1:
            return rng.choice(EDGE_CASES)
        exponent = rng.choice([0, 1, 2, 24, 25, 100, 126, 127, 128, 200, 253, 254, 255])
        return compose(rng.getrandbits(1), exponent, rng.getrandbits(23))

    operations = []
    for _ in range(count):
        a = operand()
        b = ((a ^ 0x8000_0000) + rng.randint(-3, 3)) % 2**32 if rng.random() < 0.2 else operand()
        operations.append({"a": a, "b": b})
    return operations


def run_unit(operation, operations, output_ready):
    unit_class = UNITS[operation]
    started = time.perf_counter()
    run = run_operations(unit_class(), operations, output_ready=output_ready)
    seconds = time.perf_counter() - started
    a = [op["a"] for op in operations]
    b = [op["b"] for op in operations]
    expected = numpy_reference(operation, a, b)
    function = model.OPERATIONS[operation]
    mismatches = sum(int(got) != int(want) or got != function(x, y)
                     for got, want, x, y in zip(run.results, expected, a, b))
    return {"unit": unit_class.__name__, "latency": unit_class.latency,
            "operations": len(operations), "backpressure": bool(output_ready),
            "cycles": run.cycles, "operations_per_cycle": round(len(operations) / run.cycles, 4),
            "mismatches": mismatches, "sim_seconds": round(seconds, 2),
            "sim_cycles_per_second": round(run.cycles / seconds)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--synth", choices=["ecp5-85", "xcu"], help="also synthesise each unit")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = parser.parse_args(argv)

    operations = make_operations(args.operations, args.seed)
    # A long stall, a burst, then cycle-by-cycle flicker (about 57 % of cycles ready overall).
    pattern_rng = random.Random(args.seed)
    stall_pattern = [False] * 7 + [True] * 13 + [pattern_rng.random() < 0.5 for _ in range(17)]
    rows = []
    for operation in UNITS:
        for output_ready in ((), stall_pattern):
            row = run_unit(operation, operations, output_ready)
            rows.append(row)
            print(f"{row['unit']:13s} latency {row['latency']:2d}  backpressure "
                  f"{row['backpressure']!s:5s}  {row['operations']} ops in {row['cycles']} cycles "
                  f"({row['operations_per_cycle']:.3f}/cycle)  mismatches {row['mismatches']}  "
                  f"{row['sim_cycles_per_second']} sim cycles/s")
    synthesis = []
    if args.synth:
        from gravfm.synth.report import synthesize
        for operation, unit_class in UNITS.items():
            with tempfile.TemporaryDirectory() as workdir:
                result = synthesize(FlatPorts(unit_class()), target=args.synth, workdir=workdir,
                                    name=f"fp_{operation}")
            entry = {"unit": unit_class.__name__, "target": result.target, "luts": result.luts,
                     "flip_flops": result.flip_flops, "dsps": result.dsps,
                     "fmax_mhz": result.fmax_mhz, "seconds": result.seconds}
            synthesis.append(entry)
            print(f"{entry['unit']:13s} {args.synth}: {entry['luts']} LUTs, "
                  f"{entry['flip_flops']} FFs, {entry['dsps']} DSPs, Fmax {entry['fmax_mhz']} MHz")
    if args.json:
        write_results({"seed": args.seed, "arguments": arguments(args), "simulation": rows,
                       "synthesis": synthesis}, args.json, stream=None)
    return 0 if all(row["mismatches"] == 0 for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
