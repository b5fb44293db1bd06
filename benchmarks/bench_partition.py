"""Partitioning speed and quality on RMAT scale 20, edge factor 16, for 4 FPGAs x 9 PEs.

Prints one JSON object: for greedy, round-robin and METIS, the seconds to partition (median of
``--repeat`` runs for the fast methods, one run for METIS) and the resulting imbalance and
FPGA-crossing fraction; plus the seconds to build the GraVF-M edge stores. Fixed seed. The
arguments and the provenance (git revision, date, machine) are recorded beside the figures.

    .venv/bin/python benchmarks/bench_partition.py [--scale 20] [--edge-factor 16]
"""

import argparse
import platform
import statistics
import sys
import time


def timed(function, repeat):
    seconds, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--fpgas", type=int, default=4)
    parser.add_argument("--pes", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-metis", action="store_true", help="skip METIS (the slow one)")
    args = parser.parse_args(argv)

    from gravfm.graph import load_graph
    from gravfm.partition import gravfm_edge_stores, partition, partition_report
    from gravfm.provenance import arguments, write_results

    spec = f"rmat:scale={args.scale},ef={args.edge_factor},seed={args.seed}"
    started = time.perf_counter()
    graph = load_graph(spec)
    results = {
        "benchmark": "partition",
        "graph": spec,
        "num_vertices": graph.num_vertices,
        "num_edges": graph.num_edges,
        "load_seconds": time.perf_counter() - started,
        "fpgas": args.fpgas,
        "pes_per_fpga": args.pes,
        "python": platform.python_version(),
        "arguments": arguments(args),
        "methods": {},
    }
    methods = ["greedy", "round_robin"] + ([] if args.no_metis else ["metis"])
    for method in methods:
        options = {"seed": 0} if method == "metis" else {}
        repeat = 1 if method == "metis" else args.repeat
        seconds, parts = timed(lambda: partition(graph, args.fpgas, args.pes, method, **options),
                               repeat)
        report = partition_report(graph, parts)
        figures = {
            "seconds": seconds,
            "vertex_imbalance": report.vertex_imbalance,
            "out_edge_imbalance": report.out_edge_imbalance,
            "in_edge_imbalance": report.in_edge_imbalance,
            "crossing_fraction": report.crossing_fraction,
            "remote_update_copies": report.remote_update_copies,
            "local_bits": parts.min_local_bits,
        }
        if method == "greedy":
            store_seconds, stores = timed(
                lambda: gravfm_edge_stores(graph, parts, parts.min_local_bits), 1)
            figures["gravfm_edge_store_seconds"] = store_seconds
            figures["gravfm_edge_store_bits"] = stores.footprint().total_bits
        results["methods"][method] = figures
    write_results(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
