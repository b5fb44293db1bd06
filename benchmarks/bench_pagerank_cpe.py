"""PageRank cycles per edge (CPE) on one PE, in the compiled (Verilator) simulator.

Builds a one-FPGA system for PageRank (binary32 kernels, :mod:`gravfm.algorithms.pagerank`),
loads fixed-seed graphs (default: RMAT scale 14, edge factor 16, seeds 1-3, and a uniform graph
of degree 32 on as many vertices, issue 23's targets), runs each to termination, verifies the
ranks against the float32 reference (and the message count), and reports CPE = PE cycles /
messages, with the hazard and other stall counters, for each ``--hazard-slots`` value asked for
(the gather adder's latency is 4 cycles, so 5 slots are needed to issue one message per cycle;
the default build has 4).

Usage::

    python benchmarks/bench_pagerank_cpe.py --graph rmat:scale=14,ef=16,seed=1 \\
        --supersteps 30 --hazard-slots 4 6 --json pagerank_cpe.json

The JSON records the arguments and the provenance (git revision, date, machine); ``--before FILE
...`` puts earlier runs' figures (same graph and hazard slots) beside each run as ``before``.
"""

import argparse
import json
import sys
import time

import numpy as np

from gravfm.algorithms.pagerank import RANK_RTOL, bits_float, make_pagerank
from gravfm.flow import RunOptions, run
from gravfm.graph import load_graph
from gravfm.provenance import arguments, write_results

#: Issue 23's PageRank CPE targets: RMAT scale 14 (seeds 1-3) and a uniform graph, one PE.
GRAPHS = ("rmat:scale=14,ef=16,seed=1", "rmat:scale=14,ef=16,seed=2", "rmat:scale=14,ef=16,seed=3",
          "uniform:n=16384,deg=32,seed=1")


def measure(algorithm, graph, *, pes, hazard_slots, cache_dir, log):
    """One run through the flow (verified by its rule); a dict of what was measured."""
    started = time.perf_counter()
    report = run(RunOptions(edge_memory="onchip", algorithm=algorithm, graph=graph, pes=pes, cache_dir=cache_dir,
                            hardware={"hazard_slots": hazard_slots}), log=log)
    wall = time.perf_counter() - started
    rank = bits_float(report.readback.state["rank"]).astype(np.float64)
    expected = report.prepared.reference.rank.astype(np.float64)
    relative = np.abs(rank - expected) / np.maximum(np.abs(expected), np.finfo(np.float32).tiny)
    busiest = max(report.per_pe, key=lambda counters: counters["messages"])
    return {
        "pes": pes, "hazard_slots": hazard_slots, "status": report.status, "verified": report.verified,
        "detail": report.check_detail, "supersteps": report.supersteps, "cycles": report.cycles,
        "messages": report.messages,
        # One PE: the PE's cycles are the run's cycles; with several, the busiest PE's messages.
        "cpe": report.cycles / max(1, busiest["messages"]),
        "bit_identical_vertices": int((rank == expected).sum()),
        "max_relative_difference": float(relative.max()) if relative.size else 0.0,
        "stalls": report.stalls, "build_s": report.build_s, "run_s": report.run_s, "wall_s": wall,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", nargs="+", default=list(GRAPHS))
    parser.add_argument("--supersteps", type=int, default=30)
    parser.add_argument("--pes", type=int, default=1)
    parser.add_argument("--hazard-slots", type=int, nargs="+", default=[6])
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--before", metavar="FILE", nargs="+", default=[],
                        help="earlier runs' JSON to show beside each run")
    args = parser.parse_args(argv)

    algorithm = make_pagerank(supersteps=args.supersteps)
    rows = []
    for spec in args.graph:
        graph = algorithm.prepare(load_graph(spec), {})
        for slots in args.hazard_slots:
            row = {"graph": spec, "vertices": graph.num_vertices, "edges": graph.num_edges,
                   **measure(algorithm, graph, pes=args.pes, hazard_slots=slots, cache_dir=args.cache_dir,
                             log=lambda message: print(f"  {message}", file=sys.stderr))}
            rows.append(row)
            print(f"{spec} hazard_slots={slots}: {row['status']}, verified={row['verified']} {row['detail']}, "
                  f"{row['supersteps']} supersteps, {row['cycles']:,} cycles, {row['messages']:,} messages, "
                  f"CPE {row['cpe']:.4f}, {row['bit_identical_vertices']}/{graph.num_vertices} ranks "
                  f"bit-identical, max rel. diff {row['max_relative_difference']:.2e} "
                  f"(tolerance {RANK_RTOL:g}); stalls {row['stalls']}")
    earlier = {}
    for name in args.before:
        with open(name) as file:
            before = json.load(file)
        for old in before["runs"]:
            # Files of one graph name it once, at the top.
            earlier[(old.get("graph", before.get("graph")), old["hazard_slots"])] = (old, before.get("provenance"))
    for row in rows:
        if (row["graph"], row["hazard_slots"]) in earlier:
            old, provenance = earlier[(row["graph"], row["hazard_slots"])]
            row["before"] = {key: old[key] for key in ("verified", "cycles", "messages", "cpe", "stalls")}
            row["before"]["provenance"] = provenance
    if args.json:
        write_results({"supersteps": args.supersteps, "arguments": arguments(args), "runs": rows},
                      args.json, stream=None)
    return 0 if all(row["verified"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
