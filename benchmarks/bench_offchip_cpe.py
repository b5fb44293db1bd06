"""One-PE cycles per edge (CPE) with the edges off chip against on chip (issue 20's "Must hold").

For each algorithm and graph, runs the same one-FPGA, one-PE system twice in the compiled
(Verilator) simulator on the platform's memory figures (``ac510x4``: 128-bit words, 64 requests
in flight, 190 + up to 32 cycles of latency): edges in block RAM, then behind the AXI port in the
simulated off-chip memory. Every run is verified against the software reference. Reports CPE
(cycles / messages) both ways, the off-chip excess, the per-superstep cycles of both and the
off-chip memory counters; the target is an excess of at most 3%.

BFS roots: vertex 0 where it reaches the graph (RMAT seed 1, the README's point; the uniform
graph), the vertex of highest out-degree where vertex 0 has no edges (RMAT seeds 2 and 3).

Usage::

    python benchmarks/bench_offchip_cpe.py --cache-dir .gravfm-cache \\
        --json benchmarks/results/bench_offchip_cpe.json
"""

import argparse
import sys

from gravfm.flow import RunOptions, run
from gravfm.graph import load_graph
from gravfm.provenance import arguments, write_results

GRAPHS = ["rmat:scale=14,ef=16,seed=1", "rmat:scale=14,ef=16,seed=2", "rmat:scale=14,ef=16,seed=3",
          "uniform:n=16384,deg=16,seed=1"]
TARGET = 0.03


def bfs_root(spec):
    """Vertex 0 if it has out-edges, else the vertex of highest out-degree (the file's own id)."""
    graph = load_graph(spec)
    return graph.original_id(0) if graph.out_degree()[0] else graph.hub()


def measure(algorithm, graph, root, edge_memory, cache_dir):
    """One verified run; a dict of what was measured."""
    report = run(RunOptions(algorithm=algorithm, graph=graph, pes=1, root=root, edge_memory=edge_memory,
                            cache_dir=cache_dir), log=lambda message: print(f"  {message}", file=sys.stderr))
    return {
        "status": report.status, "verified": report.verified, "supersteps": report.supersteps,
        "cycles": report.cycles, "messages": report.messages, "cpe": report.cycles / max(1, report.messages),
        "per_superstep_cycles": [row["cycles"] for row in report.to_dict()["per_superstep"]],
        "memory": {key: report.memory[key] for key in ("requests", "words", "wait_cycles")}
        if edge_memory == "offchip" else None,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", nargs="+", default=["bfs", "wcc"])
    parser.add_argument("--graphs", nargs="+", default=GRAPHS)
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = parser.parse_args(argv)

    points = []
    for algorithm in args.algorithms:
        for graph in args.graphs:
            root = bfs_root(graph) if algorithm == "bfs" else None
            on, off = (measure(algorithm, graph, root, where, args.cache_dir) for where in ("onchip", "offchip"))
            excess = off["cpe"] / on["cpe"] - 1
            points.append({"algorithm": algorithm, "graph": graph, "root": root, "onchip": on, "offchip": off,
                           "excess": excess, "within_target": excess <= TARGET})
            print(f"{algorithm} {graph} root {root}: CPE on {on['cpe']:.4f} off {off['cpe']:.4f} "
                  f"({excess:+.1%}), verified {on['verified']}/{off['verified']}", file=sys.stderr)
    write_results({"configuration": {"fpgas": 1, "pes": 1, "platform": "ac510x4", "target_excess": TARGET},
                   "arguments": arguments(args), "points": points}, args.json, stream=None)
    ok = all(p["onchip"]["verified"] and p["offchip"]["verified"] for p in points)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
