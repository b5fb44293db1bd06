"""Verilator build time of a large FPGA design, and what the build options cost at run time.

For each PE count (default 9 and 16 PEs per FPGA) and each build variant, this builds the FPGA
design of a 4-FPGA system from scratch in a private cache (a real build time), then runs WCC on it
(one model per FPGA, one thread) and records the build time beside the simulation speed: an
option that builds faster but simulates slower is a trade, and the JSON shows both.

Variants (Verilator options added to gravfm.sim.verilator_build.VERILATOR_FLAGS, which already
split the C++ into many small files — ``--output-split``, chosen by measurement in issue 19):

* ``default``: the flags every build uses (C++ at the wheel's ``OPT_FAST=-Os``; ``-j`` as many
  jobs as cores, make holding back while the machine's load is that high: ``build_jobs``);
* ``O1`` / ``O0``: the model's hot C++ compiled at ``-O1`` / ``-O0``;
* ``j1``: one job, as builds were before issue 37 (Verilator then compiles its C++ as one file).

The platform ``ac510x4`` allows 9 PEs per FPGA; for more, a copy of it with ``max_pes`` raised is
used (its other figures unchanged; a hypothetical device, said in the JSON). The machine may be
shared: its load average is recorded before each build.

Usage: python benchmarks/bench_build.py [--pes 9 16] [--variants default O1 O0 j1]
[--graph SPEC] [--out FILE]
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

from gravfm.flow import RunOptions, run
from gravfm.provenance import arguments, machine, write_results

PLATFORM = "ac510x4"
FPGAS = 4
DEFAULT_GRAPH = "rmat:scale=13,ef=16,seed=1"
VARIANTS = {
    "default": (),
    "O1": ("-MAKEFLAGS", "OPT_FAST=-O1"),
    "O0": ("-MAKEFLAGS", "OPT_FAST=-O0"),
    "j1": ("-j", "1"),
}


def platform_for(pes, folder):
    """The platform file for ``pes`` PEs per FPGA: ac510x4 itself, or a copy allowing more PEs."""
    from gravfm.model.platform import PLATFORM_DIR
    source = PLATFORM_DIR / f"{PLATFORM}.toml"
    text = source.read_text()
    if "max_pes = 9" not in text:
        raise SystemExit(f"{source}: expected 'max_pes = 9' to raise")
    if pes <= 9:
        return PLATFORM, None
    path = Path(folder) / f"{PLATFORM}-{pes}pes.toml"
    path.write_text(text.replace("max_pes = 9", f"max_pes = {pes}"))
    return str(path), f"{PLATFORM} with max_pes raised to {pes} (hypothetical device; other figures unchanged)"


def measure(pes, variant, graph):
    from gravfm.sim.verilator_backend import VerilatorBackend

    with tempfile.TemporaryDirectory(prefix="gravfm-bench-build-") as folder:
        platform, platform_note = platform_for(pes, folder)
        load_before = os.getloadavg()[0]
        backend = VerilatorBackend(cache_dir=str(Path(folder) / "cache"), threads=1,
                                   extra_flags=VARIANTS[variant])
        started = time.perf_counter()
        report = run(RunOptions(algorithm="wcc", graph=graph, pes=pes, fpgas=FPGAS, platform=platform,
                                backend=backend, edge_memory="onchip"))
        total_s = time.perf_counter() - started
    row = {
        "pes_per_fpga": pes,
        "fpgas": FPGAS,
        "variant": variant,
        "extra_flags": list(VARIANTS[variant]),
        "platform": platform_note or platform,
        "graph": graph,
        "verified": report.verified,
        "build_s": report.build_s,
        "build_cpu_s": report.build_cpu_s,
        "build_cached": report.build_cached,
        "run_s": report.run_s,
        "cycles": report.cycles,
        "messages": report.messages,
        "cycles_per_s": report.cycles / report.run_s if report.run_s else None,
        "edges_per_s": report.messages / report.run_s if report.run_s else None,
        "end_to_end_s": total_s,
        "load_average_before": load_before,
    }
    print(f"  {pes} PEs/FPGA, {variant}: build {report.build_s:.1f} s ({report.build_cpu_s or 0:.1f} CPU s), run {report.run_s:.2f} s, "
          f"{row['cycles_per_s'] or 0:,.0f} cycles/s, verified={report.verified}", flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_build.json"))
    parser.add_argument("--graph", default=DEFAULT_GRAPH)
    parser.add_argument("--pes", type=int, nargs="+", default=[9, 16])
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args()
    results = []
    for pes in args.pes:
        for variant in args.variants:
            results.append(measure(pes, variant, args.graph))
            data = {
                "benchmark": "verilator_build",
                "definition": "build_s: Verilator + C++ compile + link of one FPGA design of a 4-FPGA system, "
                              "cold private cache (wall); build_cpu_s: the CPU seconds of its processes (the "
                              "figure to compare on a shared machine); cycles_per_s: its simulation (one model "
                              "per FPGA, 1 thread)",
                "arguments": arguments(args),
                "machine": machine(),
                "results": results,
            }
            write_results(data, args.out, stream=None)  # rewritten after every point: a stopped run keeps them
    write_results(data, args.out)
    return 0 if all(r["verified"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
