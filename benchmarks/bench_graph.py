"""Graph toolkit timings: RMAT generation and loading two packaged datasets.

Prints one JSON object (seconds, best of ``--repeat`` runs; the arguments and the provenance:
git revision, date, machine) so results can be compared over time.
Run: ``python benchmarks/bench_graph.py [--repeat N] [--scale 20]``.
"""

import argparse
import platform
import time

import numpy as np

from gravfm import datasets
from gravfm.graph import load_graph, rmat
from gravfm.provenance import arguments, write_results


def best_time(function, repeat):
    """Smallest wall time of ``repeat`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    parser.add_argument("--scale", type=int, default=20, help="RMAT scale (edge factor 16, seed 1)")
    args = parser.parse_args(argv)

    results = {"python": platform.python_version(), "numpy": np.__version__, "repeat": args.repeat,
               "arguments": arguments(args)}
    seconds, graph = best_time(lambda: rmat(args.scale, 16, seed=1), args.repeat)
    results[f"rmat_scale{args.scale}_ef16"] = {"seconds": round(seconds, 3), "vertices": graph.num_vertices,
                                              "edges": graph.num_edges,
                                              "edges_before_cleaning": graph.cleaning.input_edges}
    for name in ("Wiki-Vote.txt.gz", "s14e16.graph.gz"):
        seconds, graph = best_time(lambda: load_graph(datasets.path(name)), args.repeat)
        results[name] = {"seconds": round(seconds, 4), "vertices": graph.num_vertices, "edges": graph.num_edges,
                         "lines": graph.cleaning.input_edges}
    write_results(results)


if __name__ == "__main__":
    main()
