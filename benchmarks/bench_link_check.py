"""What the link check costs (issue 24): the scale-16 4 x 9 scaling points of
``results/bench_scaling_s16.json`` (the ``ac510x4`` links, greedy partition, the same capacities)
(edge lists on chip, as there) with the link check off, in detect mode and with retransmission, no faults injected.

Per point and mode: cycles, MTEPS at the platform clock, the throughput cost against ``off``
(1 - cycles_off / cycles), the item bits on the links (the frame adds a sequence number, a CRC and,
with retransmission, an acknowledgement), link items (heartbeats and acknowledgements included)
and link-bound cycles. Measured on the compiled simulator (Verilator), every run verified.

Usage::

    python benchmarks/bench_link_check.py --json benchmarks/results/bench_link_check_s16.json
"""

import argparse
import time

from gravfm.flow import RunOptions, run
from gravfm.provenance import arguments, write_results
from gravfm.sim.verilator_backend import VerilatorBackend

#: name -> RunOptions fields of bench_scaling_s16.json's 4-FPGA points.
POINTS = {
    "wcc_rmat": dict(algorithm="wcc", graph="rmat:scale=16,ef=32,seed=1", local_bits=12, edges_per_pe=131072),
    "bfs_rmat": dict(algorithm="bfs", graph="rmat:scale=16,ef=32,seed=1", local_bits=12, edges_per_pe=65536,
                     root=33075),
    "wcc_uniform": dict(algorithm="wcc", graph="uniform:n=65536,deg=32,seed=1", local_bits=12,
                        edges_per_pe=131072),
    "bfs_uniform": dict(algorithm="bfs", graph="uniform:n=65536,deg=32,seed=1", local_bits=12, edges_per_pe=65536,
                        root=18058),
}
MODES = ("off", "detect", "retransmit")


def measure(point, check, *, cache_dir):
    """One run of ``point`` with the link check ``check``, as a JSON-ready dict."""
    started = time.perf_counter()
    backend = VerilatorBackend(cache_dir=cache_dir, threads=1)
    link_options = {} if check == "off" else {"check": check}
    report = run(RunOptions(fpgas=4, pes=9, backend=backend, edge_memory="onchip", link_options=link_options,
                            **POINTS[point]))
    links = report.links
    return {"point": point, "check": check, "verified": report.verified, "status": report.status,
            "cycles": report.cycles, "mteps": report.mteps, "item_bits": links["item_bits"],
            "link_items": links["items"], "link_bound_cycles": links["link_bound_cycles"],
            "retransmissions": links.get("retransmissions"), "run_s": report.run_s,
            "wall_s": time.perf_counter() - started}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default=",".join(POINTS), help="comma-separated points (default: all)")
    parser.add_argument("--cache", default=None, help="Verilator build cache")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args()
    results = []
    for point in args.points.split(","):
        rows = [measure(point, check, cache_dir=args.cache) for check in MODES]
        for row in rows:
            row["throughput_cost"] = 1 - rows[0]["cycles"] / row["cycles"]
            print(f"{point} {row['check']:>10}: {row['cycles']} cycles, {row['mteps']:.1f} MTEPS, "
                  f"cost {100 * row['throughput_cost']:+.2f}%, {row['item_bits']}-bit items", flush=True)
        results += rows
    write_results({"benchmark": "link_check_cost", "platform": "ac510x4", "fpgas": 4, "pes_per_fpga": 9,
                   "arguments": arguments(args), "results": results,
                   "bound": "the issue's: at most 3% of throughput on these points"}, args.json, stream=None)


if __name__ == "__main__":
    main()
