"""Large graphs with the edges off chip: RMAT up to scale 20 on 4 FPGAs x 9 PEs (issue: off-chip
edge memory, item 4).

Each point runs :func:`gravfm.flow.run` with ``edge_memory="offchip"`` on the compiled simulator
(one FPGA model per FPGA, threads) and records whether it verified, the simulated cycles, MTEPS at
the platform clock, the memory figures, and where the wall time went: the whole run, the build
(0 when cached), the simulation (load included) and the rest (graph generation, reference,
partition, elaboration, memory image). The JSON is rewritten after every point with the git revision.

Usage::

    python benchmarks/bench_offchip_scale.py --scales 18,20 --algorithms bfs,wcc \\
        --json benchmarks/results/bench_offchip_scale.json
"""

import argparse
import time
from pathlib import Path

from gravfm.flow import RunOptions, run
from gravfm.graph import load_graph
from gravfm.provenance import arguments, write_results


def measure(args, algorithm, scale):
    spec = f"rmat:scale={scale},ef={args.edge_factor},seed=1"
    started = time.time()
    root = load_graph(spec).hub() if algorithm == "bfs" else None  # an RMAT graph's vertex 0 may have no edge
    report = run(RunOptions(algorithm=algorithm, graph=spec, fpgas=args.fpgas, pes=args.pes, root=root,
                            cache_dir=args.cache, edge_memory="offchip", threads=args.threads,
                            watchdog_cycles=1 << 22),
                 log=lambda line: print("  " + line, flush=True))
    wall = time.time() - started
    return {
        "algorithm": algorithm, "params": dict(report.params),
        "graph": {"spec": spec, "vertices": report.vertices, "edges": report.edges},
        "fpgas": args.fpgas, "pes_per_fpga": args.pes,
        "measured": {"kind": "measured (Verilator simulation)", "verified": report.verified,
                     "status": report.status, "supersteps": report.supersteps, "cycles": report.cycles,
                     "messages": report.messages, "mteps": report.mteps, "cpe": report.cpe,
                     "memory": report.memory, "load_cycles": report.load_cycles},
        "model": {"kind": "prediction",
                  "mteps": report.prediction.t_sys_mteps if report.prediction else None,
                  "bottleneck": report.prediction.bottleneck if report.prediction else None},
        "wall_s": {"total": wall, "build": report.build_s, "simulate_and_load": report.run_s,
                   "prepare_elaborate_image": wall - report.build_s - report.run_s},
        "sim": {"build_cached": report.build_cached, "threads": report.threads,
                "edges_per_s": report.edges_per_s},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="18,20")
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--algorithms", default="bfs,wcc")
    parser.add_argument("--fpgas", type=int, default=4)
    parser.add_argument("--pes", type=int, default=9)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results, started = [], time.time()
    for scale in (int(x) for x in args.scales.split(",")):
        for algorithm in args.algorithms.split(","):
            point = measure(args, algorithm, scale)
            results.append(point)
            print(f"{algorithm} scale {scale} on {args.fpgas} x {args.pes}: verified {point['measured']['verified']}, "
                  f"{point['measured']['mteps']:.0f} MTEPS, wall {point['wall_s']['total']:.0f} s", flush=True)
            document = {"benchmark": "bench_offchip_scale", "arguments": arguments(args),
                        "wall_s": time.time() - started, "results": results}
            if args.json:
                write_results(document, args.json, stream=None)
    if not args.json:
        write_results({"benchmark": "bench_offchip_scale", "arguments": arguments(args), "results": results})


if __name__ == "__main__":
    main()
