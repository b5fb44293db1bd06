"""The whole board SoC simulated (``--backend litex``) beside the harness back-end, same graph.

For each algorithm and PE count, runs the same one-FPGA system twice with its edges off chip:
in the whole-SoC simulation (LiteX, LiteDRAM's controller and DDR3 model, the top in its own
clock domain, driven by the host driver over a simulated UART) and in the compiled harness with
the platform's memory model (``ac510x4``: 190 + up to 32 cycles of latency, 8.1 GiB/s). Both are
verified against the software reference; the report gives their cycles, messages and the ratio,
and the SoC's load times (host writes, edge image over the bus or placed by backdoor).

Usage::

    python benchmarks/bench_board_sim.py --cache-dir .gravfm-cache --json benchmarks/results/bench_board_sim.json
"""

import argparse
import sys
import time
from pathlib import Path

from gravfm.board.backend import LitexBackend
from gravfm.flow import RunOptions, run
from gravfm.provenance import arguments, write_results

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ALGORITHMS = {"wcc": None, "bfs": 0, "pagerank": None, "sssp": 0, f"{EXAMPLES / 'widest_path.py'}:WIDEST_PATH": 0}


def measure(algorithm, root, graph, pes, backend, cache_dir, sizes):
    lines = []
    started = time.perf_counter()
    report = run(RunOptions(algorithm=algorithm, graph=graph, pes=pes, root=root, edge_memory="offchip",
                            backend=backend, cache_dir=cache_dir, **sizes), log=lines.append)
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    return {"status": report.status, "verified": report.verified, "cycles": report.cycles,
            "messages": report.messages, "supersteps": report.supersteps, "build_cached": report.build_cached,
            "build_s": round(report.build_s, 1), "wall_s": round(time.perf_counter() - started, 1),
            "log": [line for line in lines if "host writes" in line]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="rmat:scale=7,ef=8,seed=3")
    parser.add_argument("--pes", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS))
    parser.add_argument("--local-bits", type=int, default=7)
    parser.add_argument("--edges-per-pe", type=int, default=256)
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = parser.parse_args(argv)
    sizes = {"local_bits": args.local_bits, "edges_per_pe": args.edges_per_pe}

    points = []
    for algorithm in args.algorithms:
        for pes in args.pes:
            root = ALGORITHMS.get(algorithm)
            soc = measure(algorithm, root, args.graph, pes, LitexBackend(cache_dir=args.cache_dir), args.cache_dir,
                          sizes)
            harness = measure(algorithm, root, args.graph, pes, "verilator", args.cache_dir, sizes)
            name = Path(algorithm.split(":")[0]).stem
            points.append({"algorithm": name, "pes": pes, "soc": soc, "harness": harness,
                           "cycles_ratio_soc_to_harness": soc["cycles"] / harness["cycles"],
                           "same_messages": soc["messages"] == harness["messages"]})
            print(f"{name} {pes} PE: SoC {soc['cycles']:,} cycles, harness {harness['cycles']:,} "
                  f"(x{soc['cycles'] / harness['cycles']:.3f}), messages {soc['messages']:,} / {harness['messages']:,}, "
                  f"verified {soc['verified']}/{harness['verified']}", file=sys.stderr)
    write_results({"configuration": {"graph": args.graph, "fpgas": 1, "edge_memory": "offchip",
                                     "soc": "LiteX SimSoC: LiteDRAM + MT41K128M16 DDR3 model, UARTBone, no CPU",
                                     "harness_platform": "ac510x4"},
                   "arguments": arguments(args), "points": points}, args.json, stream=None)
    ok = all(p["soc"]["verified"] and p["harness"]["verified"] and p["same_messages"] for p in points)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
