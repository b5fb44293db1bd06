"""Speed of the compiled simulator: build time, simulated cycles/s and traversed edges per wall-second.

WCC on RMAT scale 14 (edge factor 16) on one FPGA with 1, 4 and 9 PEs by default; ``--fpgas``
adds systems of several FPGAs on the platform's links (``--platform``), simulated as one FPGA
model per FPGA (``--monolithic``: the whole system as one model). Each configuration is built
from scratch in a private cache so the build time is a real one; the run is verified against
the software reference. The machine is shared: its load average is recorded beside the
figures. Edges stay on chip unless ``--edge-memory offchip`` (the series began on chip; the
platform's default is now off chip). ``--threads 1 2`` runs each configuration once per thread
count on one build (several FPGAs: the per-FPGA threads, which meet once per quantum where the
links allow it); the results do not depend on it, the wall time does.

Usage: python benchmarks/bench_simulator.py [--out FILE] [--graph SPEC] [--pes 1 4 9] [--fpgas 1 4]
[--platform NAME] [--monolithic] [--edge-memory onchip|offchip] [--threads 1 2] [--cache DIR]; prints
the JSON and writes it (default benchmarks/results/bench_simulator.json), with its provenance
(git revision, date, machine).
"""

import argparse
import contextlib
import os
import resource
import tempfile
import time
from pathlib import Path

from gravfm.flow import RunOptions, run
from gravfm.provenance import arguments, machine, write_results

DEFAULT_GRAPH = "rmat:scale=14,ef=16,seed=1"
DEFAULT_PES = (1, 4, 9)


def measure_all(graph, pes, fpgas=1, platform="ac510x4", monolithic=False, edge_memory="onchip",
                threads=(None,), cache=None):
    """One configuration, built once (by default in a private cache: a real build time), run once
    per thread count."""
    with (contextlib.nullcontext(cache) if cache else tempfile.TemporaryDirectory(prefix="gravfm-bench-cache-")) \
            as folder:
        return [measure(graph, pes, fpgas, platform, monolithic, edge_memory, count, folder) for count in threads]


def children_cpu_s():
    """CPU seconds (user + system) of the finished child processes: the simulator's, and a build's."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(graph, pes, fpgas, platform, monolithic, edge_memory, threads, cache):
    from gravfm.sim.verilator_backend import VerilatorBackend

    load_before = os.getloadavg()[0]
    cpu_before = children_cpu_s()
    started = time.perf_counter()
    backend = VerilatorBackend(cache_dir=cache, per_fpga=not monolithic, threads=threads)
    report = run(RunOptions(algorithm="wcc", graph=graph, pes=pes, fpgas=fpgas, platform=platform,
                            backend=backend, edge_memory=edge_memory))
    total_s = time.perf_counter() - started
    child_cpu_s = children_cpu_s() - cpu_before
    return {
        "fpgas": fpgas,
        "simulation": "monolithic" if monolithic or fpgas == 1 else "per_fpga",
        "platform": platform,
        "edge_memory": edge_memory,
        "threads": threads if threads is not None else "default (the cores, at most the FPGAs)",
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
        # On a shared machine the wall time depends on the load; the CPU time much less. It covers
        # the simulator's whole life (loading and read-back too) and, if not cached, the build.
        "child_cpu_s": child_cpu_s,
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
    parser.add_argument("--edge-memory", choices=("onchip", "offchip"), default="onchip")
    parser.add_argument("--threads", type=int, nargs="+", default=[None],
                        help="thread counts to run each configuration with (default: the backend's default)")
    parser.add_argument("--cache", help="build cache to use (default: a private one, so that the build time "
                                        "is a real one)")
    args = parser.parse_args()
    results = [row for fpgas in args.fpgas for pes in args.pes
               for row in measure_all(args.graph, pes, fpgas, args.platform, args.monolithic, args.edge_memory,
                                      args.threads, args.cache)]
    data = {
        "benchmark": "simulator_speed",
        "simulator": "verilator, gravfm C++ harness (threads per result)",
        "arguments": arguments(args),
        "machine": machine(),
        "results": results,
    }
    write_results(data, args.out)  # adds the provenance (git revision); writes and prints
    return 0 if all(r["verified"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
