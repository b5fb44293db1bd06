"""Speed of the compiled simulator: build time, simulated cycles/s and traversed edges per wall-second.

WCC on RMAT scale 14 (edge factor 16) on one FPGA with 1, 4 and 9 PEs by default; ``--fpgas``
adds systems of several FPGAs on the platform's links (``--platform``), simulated as one FPGA
model per FPGA (``--monolithic``: the whole system as one model). Each configuration is built
from scratch in a private cache so the build time is a real one; the run is verified against
the software reference. The machine is shared: its load average is recorded beside the
figures.

Usage: python benchmarks/bench_simulator.py [--out FILE] [--graph SPEC] [--pes 1 4 9] [--fpgas 1 4]
[--platform NAME] [--monolithic]; prints
the JSON and writes it (default benchmarks/results/bench_simulator.json), with its provenance
(git revision, date, machine).
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

from gravfm.flow import RunOptions, run
from gravfm.provenance import arguments, machine, write_results

DEFAULT_GRAPH = "rmat:scale=14,ef=16,seed=1"
DEFAULT_PES = (1, 4, 9)


def measure(graph, pes, fpgas=1, platform="ac510x4", monolithic=False):
    from gravfm.sim.verilator_backend import VerilatorBackend

    with tempfile.TemporaryDirectory(prefix="gravfm-bench-cache-") as cache:
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        backend = VerilatorBackend(cache_dir=cache, per_fpga=not monolithic)
        report = run(RunOptions(algorithm="wcc", graph=graph, pes=pes, fpgas=fpgas, platform=platform,
                                backend=backend))
        total_s = time.perf_counter() - started
    return {
        "fpgas": fpgas,
        "simulation": "monolithic" if monolithic or fpgas == 1 else "per_fpga",
        "platform": platform,
        "pes": pes,
        "graph": graph,
        "vertices": report.vertices,
        "edges": report.edges,
        "verified": report.verified,
        "build_s": report.build_s,
        "build_cached": report.build_cached,
        "run_s": report.run_s,
        "cycles": report.cycles,
        "messages": report.messages,
        "cycles_per_s": report.cycles_per_s,
        "edges_per_s": report.edges_per_s,
        "pe_cycles_per_s": report.cycles_per_s * pes,
        "cpe": report.cpe,
        "load_cycles": report.load_cycles,
        "end_to_end_s": total_s,
        "load_average_before": load_before,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_simulator.json"))
    parser.add_argument("--graph", default=DEFAULT_GRAPH)
    parser.add_argument("--pes", type=int, nargs="+", default=list(DEFAULT_PES))
    parser.add_argument("--fpgas", type=int, nargs="+", default=[1])
    parser.add_argument("--platform", default="ac510x4")
    parser.add_argument("--monolithic", action="store_true",
                        help="several FPGAs as one compiled model (default: one model per FPGA)")
    args = parser.parse_args()
    results = [measure(args.graph, pes, fpgas, args.platform, args.monolithic)
               for fpgas in args.fpgas for pes in args.pes]
    data = {
        "benchmark": "simulator_speed",
        "simulator": "verilator (single-threaded), gravfm C++ harness",
        "arguments": arguments(args),
        "machine": machine(),
        "results": results,
    }
    write_results(data, args.out)  # adds the provenance (git revision); writes and prints
    return 0 if all(r["verified"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
