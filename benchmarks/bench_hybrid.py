"""The hybrid architecture beside GraVF-M on many PEs: system CPE and traversed edges per cycle.

Issue 37's targets, measured on the compiled (Verilator) simulation of the generated systems,
every answer verified against the software reference: on 1 FPGA x 64 PEs (RMAT scale 18 edge
factor 16, and a uniform graph of the same size) WCC and BFS at a system CPE <= 1.15, PageRank
<= 1.25, GraVF-M measured beside it; on 4 FPGAs x 64 PEs (``u280x4``) >= 200 traversed edges per
cycle for WCC on the uniform graph. The primary figure is edges per cycle (clock-independent);
the MTEPS beside it are at the platform's clock, whose basis (``assumed`` for the U280 platforms:
nothing of gravfm has been placed and routed for it) is written beside every figure.

System CPE = cycles x PEs (all FPGAs) / traversed edges.

    .venv/bin/python benchmarks/bench_hybrid.py [--fpgas 1] [--pes 64] [--graphs rmat18 uniform18]
        [--algorithms wcc bfs pagerank] [--archs hybrid gravfm] [--platform u280] [--json FILE]

Smaller configurations (e.g. ``--pes 16 --graphs rmat14``) run in minutes; the issue's take hours
on a 2-core machine (a 64-PE build, then millions of cycles a run).
"""

import argparse
import json
import time
from pathlib import Path

from gravfm.architectures import architecture_info
from gravfm.errors import GravfmError, SimulatorError
from gravfm.flow import RunOptions, run
from gravfm.partition import METHODS
from gravfm.provenance import arguments, machine, write_results

GRAPHS = {
    "rmat14": "rmat:scale=14,ef=16,seed=1",
    "rmat18": "rmat:scale=18,ef=16,seed=1",
    "uniform18": "uniform:n=262144,deg=16,seed=1",
}
TARGET_CPE = {"wcc": 1.15, "bfs": 1.15, "pagerank": 1.25}
TARGET_EDGES_PER_CYCLE_4X64 = 200


def measure(args, algorithm, graph, arch):
    """One verified run's figures, or its error."""
    row = {"algorithm": algorithm, "graph": graph, "arch": arch, "fpgas": args.fpgas, "pes_per_fpga": args.pes,
           "platform": args.platform, "edge_memory": args.edge_memory, "partition": partition_of(args, arch),
           "link_lanes": link_lanes_of(args, arch), "hub_degree": hub_degree_of(args, arch)}
    options = RunOptions(algorithm=algorithm, graph=graph, fpgas=args.fpgas, pes=args.pes, arch=arch,
                         platform=args.platform, edge_memory=args.edge_memory, cache_dir=args.cache,
                         partition=row["partition"], hardware={"link_lanes": row["link_lanes"]},
                         hub_degree=row["hub_degree"])
    try:
        report = run(options)
    except (GravfmError, SimulatorError) as error:  # a failed build (e.g. out of memory) is a row too
        return {**row, "status": "error", "error": str(error).splitlines()[0]}
    edges_per_cycle = report.messages / report.cycles if report.cycles else 0.0
    return {**row, "status": report.status, "verified": report.verified, "vertices": report.vertices,
            "edges": report.edges, "supersteps": report.supersteps, "cycles": report.cycles,
            "messages": report.messages, "edges_per_cycle": edges_per_cycle, "system_cpe": report.cpe,
            "target_cpe": TARGET_CPE.get(algorithm), "update_lanes": report.update_lanes,
            "hub_senders": int(report.plan.partition.hub_senders.sum()),
            "mteps": report.mteps, "f_clk_mhz": report.f_clk_hz / 1e6, "clock_basis": report.clock_basis,
            "model": (report.prediction.t_sys_mteps if report.prediction is not None else None),
            "model_design_cycles": design_cycles(report),
            "build_s": report.build_s, "build_cpu_s": report.build_cpu_s, "build_cached": report.build_cached,
            "run_s": report.run_s, "cycles_per_s": report.cycles / report.run_s if report.run_s else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fpgas", type=int, default=1)
    parser.add_argument("--pes", type=int, default=64, help="PEs per FPGA (a power of two for the hybrid)")
    parser.add_argument("--graphs", nargs="+", default=["rmat18", "uniform18"], choices=sorted(GRAPHS))
    parser.add_argument("--algorithms", nargs="+", default=["wcc", "bfs", "pagerank"])
    parser.add_argument("--archs", nargs="+", default=["hybrid", "gravfm"])
    parser.add_argument("--platform", default="u280")
    parser.add_argument("--edge-memory", default="onchip", choices=("onchip", "offchip"))
    parser.add_argument("--partition", default=None, choices=METHODS,
                        help="partitioning method (default: each architecture's own)")
    parser.add_argument("--link-lanes", type=int, default=None, choices=(1, 2),
                        help="update lanes per link to a peer (default: each architecture's rule)")
    parser.add_argument("--hub-degree", type=int, default=None, metavar="D",
                        help="hybrid rows: senders of more than D out-edges take the hub path (default: none)")
    parser.add_argument("--cache", default=None, help="build cache (default: gravfm's)")
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "bench_hybrid.json"))
    parser.add_argument("--resume", action="store_true",
                        help="keep the verified rows of --json and run only the others (the file is rewritten "
                             "after every row, so an interrupted sweep resumes)")
    args = parser.parse_args()
    started = time.time()
    kept = resumed_rows(args.json) if args.resume else {}
    results = []
    for graph in args.graphs:
        for algorithm in args.algorithms:
            for arch in args.archs:
                row = kept.get(row_key(args, algorithm, GRAPHS[graph], arch))
                if row is None:
                    row = measure(args, algorithm, GRAPHS[graph], arch)
                results.append(row)
                print(f"{arch} {algorithm} {graph}: {row.get('status')}, verified {row.get('verified')}, "
                      f"{row.get('edges_per_cycle', 0):.2f} edges/cycle, system CPE {row.get('system_cpe')}",
                      flush=True)
                write_results(document(args, results, started), args.json, stream=None)
    write_results(document(args, results, started), args.json)
    return 0 if all(r.get("verified") for r in results) else 1


def design_cycles(report):
    """The superstep-aware prediction of the generated design's cycles (one FPGA: each superstep's
    busiest PE and its barrier), or None."""
    design = (report.superstep_model or {}).get("design")
    return design["cycles"] if design else None


def partition_of(args, arch):
    """The partitioning method of ``arch``'s runs: ``--partition`` or the architecture's default."""
    return architecture_info(arch).default_partition if args.partition is None else args.partition


def link_lanes_of(args, arch):
    """The link lanes of ``arch``'s runs: ``--link-lanes`` or the architecture's rule."""
    if args.link_lanes is None:
        return architecture_info(arch).default_link_lanes(args.fpgas, args.pes)
    return args.link_lanes


def hub_degree_of(args, arch):
    """The hub degree of ``arch``'s runs: ``--hub-degree`` for the hybrid's, else None (no hub path)."""
    return args.hub_degree if architecture_info(arch).has_hub_path else None


def row_key(args, algorithm, graph, arch):
    return (algorithm, graph, arch, args.fpgas, args.pes, args.platform, args.edge_memory, partition_of(args, arch),
            link_lanes_of(args, arch), hub_degree_of(args, arch))


def resumed_rows(path):
    """The verified rows of an earlier run's file, by :func:`row_key` (none when there is no file)."""
    try:
        rows = json.loads(Path(path).read_text())["results"]
    except FileNotFoundError:
        return {}
    # rows from before the partition, the link lanes and the hubs were recorded were all greedy's, of one
    # lane, without hubs
    return {(r["algorithm"], r["graph"], r["arch"], r["fpgas"], r["pes_per_fpga"], r["platform"], r["edge_memory"],
             r.get("partition", "greedy"), r.get("link_lanes", 1), r.get("hub_degree")): r
            for r in rows if r.get("verified")}


def document(args, results, started):
    return {"benchmark": "hybrid_vs_gravfm",
            "definition": "system CPE = cycles x PEs (all FPGAs) / traversed edges; edges_per_cycle = traversed "
                          "edges / cycles; MTEPS at the platform clock, whose basis is clock_basis (assumed: not "
                          "met by place and route)",
            "targets": {"system_cpe": TARGET_CPE, "edges_per_cycle_4x64_wcc_uniform": TARGET_EDGES_PER_CYCLE_4X64},
            "arguments": arguments(args), "machine": machine(), "wall_s": time.time() - started, "results": results}

if __name__ == "__main__":
    raise SystemExit(main())
