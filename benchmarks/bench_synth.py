"""Resources and Fmax of generated FPGA tops with the open tools, for 1, 2 and 4 PEs.

Prints one JSON object (and writes it with --json): for each algorithm and PE count, the LUTs,
flip-flops, block RAMs and DSPs per FPGA and per PE from Yosys, and — for ECP5 — the Fmax and
critical path after nextpnr place-and-route (speed 8, CABGA381, seed 1). Builds are small
(256 vertices and 4096 edges per PE) so that logic, not the graph, is measured.

    .venv/bin/python benchmarks/bench_synth.py [--pes 1 2 4] [--algorithms wcc bfs] [--target ecp5-85]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--algorithms", nargs="+", default=["wcc", "bfs"])
    parser.add_argument("--target", default="ecp5-85")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)

    from gravfm.algorithms import get_algorithm
    from gravfm.synth.system_report import GraphCapacity, synth_system

    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.algorithms:
            for pes in args.pes:
                report = synth_system(get_algorithm(name), pes=pes, target=args.target,
                                      workdir=Path(scratch) / f"{name}{pes}",
                                      capacity=GraphCapacity(vertices=1 << 16, edges=1 << 20))
                fpga = report["fpga"]
                runs.append({"algorithm": name, "pes": pes, "target": args.target,
                             "luts": fpga["luts"], "flip_flops": fpga["flip_flops"],
                             "bram_blocks": fpga["bram_blocks"], "dsps": fpga["dsps"],
                             "per_pe": report["per_pe"], "fmax_mhz": fpga["fmax_mhz"],
                             "critical_path": fpga["critical_path"], "seconds": fpga["seconds"],
                             "pes_fit": {k: v["pes_fit"] for k, v in report["fits"].items()}})
                print(f"{name} x{pes}: {fpga['luts']} LUTs, Fmax {fpga['fmax_mhz']}", file=sys.stderr)
    result = {"benchmark": "synth", "build": {"vertices_per_pe": 256, "edges_per_pe": 4096}, "runs": runs}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
