"""CPE of one PE: WCC and BFS on RMAT scale 14 (edge factor 16) and on a uniform graph of degree 32.

CPE = cycles x PEs / messages, measured on the compiled (Verilator) simulation of the generated
system with on-chip edge storage; every run is verified against the software reference. The
paper measured 1.05 (WCC) and 1.10 (BFS) on one PE; our target is <= 1.02.

Also reported: ``cpe_steady``, the CPE of the superstep that carried the most messages (cycles
from the end of one apply pass to the end of the next, over the messages scattered in between),
which leaves out the per-superstep latency that dominates small supersteps.

Usage: python benchmarks/bench_cpe.py [--out FILE] [--cache DIR] [--before FILE]; prints the JSON
and writes it (default benchmarks/results/bench_cpe.json), with its provenance (git revision, date,
machine). ``--before`` takes an earlier run's JSON (another revision, same configurations) and
puts its figures beside each result as ``before`` (with that run's provenance), so one file shows
a change's effect per configuration.
"""

import json

import argparse
import time
from pathlib import Path

from gravfm.flow import RunOptions, run
from gravfm.provenance import arguments, machine, write_results

GRAPHS = {
    "rmat14": "rmat:scale=14,ef=16,seed=1",
    "uniform32": "uniform:n=16384,deg=32,seed=1",
}
ALGORITHMS = ("wcc", "bfs")
PAPER_CPE = {"wcc": 1.05, "bfs": 1.10}
TARGET_CPE = 1.02


def steady_cpe(report):
    """CPE of the superstep with the most messages (messages of round r are handled in row r+1)."""
    rows = report.rounds
    candidates = [(rows[r].messages, rows[r + 1].cycles) for r in range(len(rows) - 1) if rows[r].messages]
    if not candidates:
        return None
    messages, cycles = max(candidates)
    return cycles * report.total_pes / messages


def measure(algorithm, graph, cache):
    report = run(RunOptions(edge_memory="onchip", algorithm=algorithm, graph=graph, pes=1, cache_dir=cache))
    return {
        "algorithm": algorithm,
        "graph": graph,
        "vertices": report.vertices,
        "edges": report.edges,
        "pes": report.total_pes,
        "verified": report.verified,
        "status": report.status,
        "supersteps": report.supersteps,
        "cycles": report.cycles,
        "messages": report.messages,
        "cpe": report.cpe,
        "cpe_steady": steady_cpe(report),
        "paper_cpe": PAPER_CPE[algorithm],
        "target_cpe": TARGET_CPE,
        "meets_target": report.cpe <= TARGET_CPE,
        "cycle_breakdown": report.stalls,
        "build_s": report.build_s,
        "build_cached": report.build_cached,
        "run_s": report.run_s,
        "cycles_per_s": report.cycles_per_s,
    }


def with_before(results, before_file):
    """``results`` with each configuration's figures from ``before_file`` under ``before``."""
    before = json.loads(Path(before_file).read_text())
    earlier = {(row["algorithm"], row["graph"]): row for row in before["results"]}
    for row in results:
        old = earlier.get((row["algorithm"], row["graph"]))
        if old is not None:
            row["before"] = {key: old[key] for key in ("verified", "cycles", "messages", "cpe", "cpe_steady",
                                                        "cycle_breakdown")}
            row["before"]["provenance"] = before.get("provenance")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_cpe.json"))
    parser.add_argument("--cache", default=None, help="build cache (default $GRAVFM_CACHE, else $XDG_CACHE_HOME/gravfm, i.e. ~/.cache/gravfm)")
    parser.add_argument("--before", default=None, help="an earlier run's JSON to show beside each result")
    args = parser.parse_args()
    started = time.time()
    results = [measure(algorithm, graph, args.cache) for graph in GRAPHS.values() for algorithm in ALGORITHMS]
    if args.before:
        results = with_before(results, args.before)
    data = {
        "benchmark": "cpe_one_pe",
        "definition": "CPE = cycles x PEs / messages (traversed edges), whole run from start to done",
        "arguments": arguments(args),
        "machine": machine(),
        "wall_s": time.time() - started,
        "results": results,
    }
    write_results(data, args.out)  # adds the provenance (git revision); writes and prints
    return 0 if all(r["verified"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
