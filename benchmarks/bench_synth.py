"""Resources and Fmax of generated FPGA tops with the open tools, for 1, 2 and 4 PEs.

Prints one JSON object (and writes it with --json, after every configuration), with the arguments
and the provenance (git revision, date, machine): for each target, algorithm and PE count, the
LUTs, flip-flops, block RAMs and DSPs per FPGA and per PE from Yosys, and — for ECP5 — the Fmax
and critical path after nextpnr place-and-route (CABGA381, placement seed 1 or each of --seeds,
nextpnr's router1 unless --router router2;
speed 8 for ``ecp5-85``; placed and routed for the target's goal clock, ``pnr_freq_mhz``;
``fmax_mhz`` is what nextpnr measured).
With ``--fpgas 2`` (or more) the top is FPGA 0 of such a system, its link ends included.
``xcu`` (the paper's KU060 family) has Yosys counts and PEs per KU060 only. Builds are small
(256 vertices and 4096 edges per PE) so that logic, not the graph, is measured.

Each configuration runs ``gravfm synth`` in its own process with a time limit (--timeout); a run
that exceeds it, or whose tools fail (e.g. the design does not fit), is recorded with its
``status`` ("timeout" or "failed") instead of figures.

    .venv/bin/python benchmarks/bench_synth.py [--pes 1 2 4] [--fpgas 1 2] [--algorithms wcc bfs pagerank]
        [--targets xcu ecp5-85] [--seeds 1 2 3] [--router router1] [--timeout 900] [--json FILE]
"""

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gravfm.provenance import arguments, write_results
from gravfm.synth.targets import NEXTPNR_ROUTERS, get_target


def synth_once(name, pes, target, scratch, timeout, seed=1, fpgas=1, router="router1"):
    """Run ``gravfm synth`` for one configuration; return its report, or a status row."""
    workdir = Path(scratch) / f"{target}-{name}{pes}-fpgas{fpgas}-seed{seed}-{router}"
    report_path = workdir / "report.json"
    command = [sys.executable, "-m", "gravfm", "synth", name, "--pes", str(pes), "--fpgas", str(fpgas),
               "--target", target, "--seed", str(seed), "--router", router, "--workdir", str(workdir),
               "--json", str(report_path)]
    started = time.monotonic()
    # Own session, so a timeout ends the tools it started too (not only the Python process).
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return {"status": "timeout", "seconds": round(time.monotonic() - started, 1),
                "note": f"gravfm synth did not finish within {timeout} s"}
    if process.returncode != 0:
        return {"status": "failed", "seconds": round(time.monotonic() - started, 1),
                "error": "".join(output.splitlines(keepends=True)[-6:])}
    return json.loads(report_path.read_text())


def run_row(report):
    """The figures of one ``gravfm synth --json`` report, as a row of this benchmark."""
    fpga = report["fpga"]
    return {"status": "ok", "luts": fpga["luts"], "flip_flops": fpga["flip_flops"],
            "bram_blocks": fpga["bram_blocks"], "dsps": fpga["dsps"], "per_pe": report["per_pe"],
            "fmax_mhz": fpga["fmax_mhz"], "pnr_freq_mhz": fpga.get("pnr_freq_mhz"),
            "pnr_seed": fpga.get("pnr_seed"), "pnr_router": fpga.get("pnr_router"),
            "critical_path": fpga["critical_path"],
            "seconds": fpga["seconds"], "pes_fit": {k: v["pes_fit"] for k, v in report["fits"].items()},
            # The sweep runs for hours: each row names the RTL it was elaborated from.
            "rtl": report["provenance"]["git_revision"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--fpgas", type=int, nargs="+", default=[1],
                        help="systems of this many FPGAs (FPGA 0's top, link ends included, for more than 1)")
    parser.add_argument("--algorithms", nargs="+", default=["wcc", "bfs", "pagerank"])
    parser.add_argument("--targets", nargs="+", default=["xcu", "ecp5-85"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1],
                        help="nextpnr placement seeds, one place-and-route each (targets with nextpnr)")
    parser.add_argument("--router", choices=NEXTPNR_ROUTERS, default="router1", help="nextpnr router")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per configuration")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)

    runs = []
    result = {"benchmark": "synth", "date": time.strftime("%Y-%m-%d", time.gmtime()),
              "build": {"vertices_per_pe": 256, "edges_per_pe": 4096},
              "capacity_for_pes_fit": {"vertices": 1 << 16, "edges": 1 << 20},
              "timeout_s": args.timeout, "arguments": arguments(args), "runs": runs}

    def save():  # after every configuration, so an interrupted sweep keeps what it measured
        if args.json:
            write_results(result, args.json, stream=None)  # provenance refreshed on every write

    with tempfile.TemporaryDirectory() as scratch:
        for target in args.targets:
            seeds = args.seeds if get_target(target).nextpnr else [1]  # a seed only matters to placement
            for name in args.algorithms:
                for fpgas, pes, seed in itertools.product(args.fpgas, args.pes, seeds):
                    report = synth_once(name, pes, target, scratch, args.timeout, seed, fpgas, args.router)
                    row = {"algorithm": name, "fpgas": fpgas, "pes": pes, "target": target}
                    if "fpga" not in report:
                        runs.append({**row, **report})
                        save()
                        print(f"{target} {name} {fpgas}x{pes} seed {seed}: {report['status']}", file=sys.stderr)
                        continue
                    runs.append({**row, **run_row(report)})
                    save()
                    print(f"{target} {name} {fpgas}x{pes} seed {seed}: {report['fpga']['luts']} LUTs, "
                          f"Fmax {report['fpga']['fmax_mhz']}", file=sys.stderr)
    write_results(result, args.json)


if __name__ == "__main__":
    main()
