"""Resources and Fmax of generated FPGA tops with the open tools (a sweep, or --matrix: issue 38's tops).

A sweep of PE counts and targets, or (``--matrix``) issue 38's matrix of tops, resumable, into
benchmarks/results/synth_matrix.json.

Sweep (the default): prints one JSON object (and writes it with --json, after every configuration),
with the arguments and the provenance (git revision, date, machine): for each target, algorithm and
PE count, the LUTs, flip-flops, block RAMs and DSPs per FPGA and per PE from Yosys, and — for ECP5 —
the Fmax and critical path after nextpnr place-and-route (CABGA381, placement seed 1 or each of
--seeds, nextpnr's router1 unless --router router2; speed 8 for ``ecp5-85``; placed and routed for
the target's goal clock, ``pnr_freq_mhz``; ``fmax_mhz`` is what nextpnr measured).
With ``--fpgas 2`` (or more) the top is FPGA 0 of such a system, its link ends included.
``xcu`` (the paper's KU060 family) has Yosys counts and PEs per KU060 only. Builds are small
(256 vertices and 4096 edges per PE) so that logic, not the graph, is measured.

Matrix (``--matrix``): every top of :data:`gravfm.synth.results.MATRIX` (the 4-PE WCC and BFS tops,
FPGA 0 of 2 x 4 and 4 x 4 WCC, the 4-PE PageRank top, the 1-PE off-chip top on ECP5-85 speed 8 at
150 MHz, the ULX3S's 4-PE WCC top on speed 6 at 125 MHz, and issue 37's 4-PE hybrid WCC top at
150 MHz; ``--tops`` for some of them) at
nextpnr seeds 1-3 with router1. One row per top and seed, with the commit, its RTL fingerprint,
seed, router, Fmax, critical path and resources, is appended to --results (rewritten whole after
each row), and a median row per top once its seeds (more than one) are all there. A row already in the file for
the checkout's RTL, or for the top's netlist fingerprint (``gravfm.synth.netlists``: the same design
measured on other RTL), and the same configuration is not run again, so a sweep stopped (Ctrl-C, SIGTERM:
the running tools are ended, nothing half-written) resumes where it stopped. The RTL must be
committed: each row names the commit that holds it. ``scripts/synth_table.py`` then writes the
README's Fmax table from the rows.

Each configuration runs ``gravfm synth`` in its own process with a time limit (--timeout); a run
that exceeds it, or whose tools fail (e.g. the design does not fit), is recorded with its
``status`` ("timeout" or "failed") instead of figures.

    .venv/bin/python benchmarks/bench_synth.py [--pes 1 2 4] [--fpgas 1 2] [--algorithms wcc bfs pagerank]
        [--targets xcu ecp5-85] [--seeds 1 2 3] [--router router1] [--timeout 900] [--json FILE]
    .venv/bin/python benchmarks/bench_synth.py --matrix [--tops wcc-4pe ...] [--seeds 1 2 3] [--timeout 3600]
        [--results benchmarks/results/synth_matrix.json]
"""

import argparse
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gravfm.errors import ConfigError
from gravfm.provenance import arguments, write_results
from gravfm.stop_signals import STOP_SIGNALS, install_stop_handlers
from gravfm.synth.fingerprint import commit_facts, rtl_fingerprint
from gravfm.synth.netlists import top_netlist
from gravfm.synth.results import (CONFIG_KEYS, FIGURES, MATRIX, MATRIX_ROUTER, MATRIX_SEEDS, RESULTS_FILE, design_match,
                                  load_rows, median_row, save_rows, seed_row)
from gravfm.synth.targets import NEXTPNR_ROUTERS, get_target

#: Seconds per configuration: a sweep's small tops, and the matrix's (FPGA 0 of 4 x 4 routes for ~40 min).
SWEEP_TIMEOUT_S, MATRIX_TIMEOUT_S = 900, 3600


def run_limited(command, timeout):
    """Run ``command`` in a session of its own for at most ``timeout`` seconds.

    Returns ``(returncode, output, seconds)``, ``returncode`` None when the time ran out (the
    process and the tools it started are then ended). A stop signal (Ctrl-C, SIGTERM) ends them
    too before it goes on up.
    """
    started = time.monotonic()
    # Own session, so a timeout ends the tools it started too (not only the Python process).
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None, "", round(time.monotonic() - started, 1)
    except KeyboardInterrupt:  # the session of its own does not get the terminal's Ctrl-C
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return process.returncode, output, round(time.monotonic() - started, 1)


def synth_once(synth_args, workdir, timeout):
    """Run ``gravfm synth`` with ``synth_args`` in ``workdir``; return its report, or a status row."""
    report_path = Path(workdir) / "report.json"
    command = [sys.executable, "-m", "gravfm", *synth_args, "--workdir", str(workdir), "--json", str(report_path)]
    returncode, output, seconds = run_limited(command, timeout)
    if returncode is None:
        return {"status": "timeout", "seconds": seconds, "note": f"gravfm synth did not finish within {timeout} s"}
    if returncode != 0:
        return {"status": "failed", "seconds": seconds, "error": "".join(output.splitlines(keepends=True)[-6:])}
    return json.loads(report_path.read_text())


def run_row(report):
    """The figures of one ``gravfm synth --json`` report, as a row of the sweep."""
    fpga = report["fpga"]
    return {"status": "ok", "luts": fpga["luts"], "flip_flops": fpga["flip_flops"],
            "bram_blocks": fpga["bram_blocks"], "dsps": fpga["dsps"], "per_pe": report["per_pe"],
            "fmax_mhz": fpga["fmax_mhz"], "pnr_freq_mhz": fpga.get("pnr_freq_mhz"),
            "pnr_seed": fpga.get("pnr_seed"), "pnr_router": fpga.get("pnr_router"),
            "critical_path": fpga["critical_path"],
            "seconds": fpga["seconds"], "pes_fit": {k: v["pes_fit"] for k, v in report["fits"].items()},
            # The sweep runs for hours: each row names the RTL it was elaborated from.
            "rtl": report["provenance"]["git_revision"]}


def scratch_folder(keep):
    """Where each configuration's tool files and logs go: ``keep`` (kept, e.g. for nextpnr's whole
    path report), or a temporary folder removed at the end."""
    if keep is None:
        return tempfile.TemporaryDirectory()
    keep.mkdir(parents=True, exist_ok=True)
    return contextlib.nullcontext(str(keep))


def sweep(args):
    """The sweep of PE counts, FPGA counts, algorithms and targets (one JSON document)."""
    runs = []
    result = {"benchmark": "synth", "date": time.strftime("%Y-%m-%d", time.gmtime()),
              "build": {"vertices_per_pe": 256, "edges_per_pe": 4096},
              "capacity_for_pes_fit": {"vertices": 1 << 16, "edges": 1 << 20},
              "timeout_s": args.timeout, "arguments": arguments(args), "runs": runs}

    def save():  # after every configuration, so an interrupted sweep keeps what it measured
        if args.json:
            write_results(result, args.json, stream=None)  # provenance refreshed on every write

    with scratch_folder(args.keep) as scratch:
        for target in args.targets:
            seeds = args.seeds if get_target(target).nextpnr else [1]  # a seed only matters to placement
            for name in args.algorithms:
                for fpgas, pes, seed in itertools.product(args.fpgas, args.pes, seeds):
                    synth_args = ["synth", name, "--pes", str(pes), "--fpgas", str(fpgas), "--target", target,
                                  "--seed", str(seed), "--router", args.router]
                    workdir = Path(scratch) / f"{target}-{name}{pes}-fpgas{fpgas}-seed{seed}-{args.router}"
                    report = synth_once(synth_args, workdir, args.timeout)
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


def matrix_config(top, router):
    """The :data:`CONFIG_KEYS` of a matrix top's rows."""
    return {**top.key(), "pnr_freq_mhz": top.freq_mhz, "router": router}


def rows_on(rows, config, rtl, netlist, kind="seed"):
    """The rows of ``kind`` with the configuration ``config`` measured on the RTL ``rtl`` or on
    another RTL with the same netlist fingerprint ``netlist`` (the same design)."""
    return [row for row in rows if row.get("kind") == kind and design_match(row, rtl, netlist)
            and all(row.get(key) == config[key] for key in CONFIG_KEYS)]


def matrix_row(top, seed, router, report, rtl, head, netlist=None):
    """The seed row of one matrix run: the report's figures, or its status when it gave none;
    ``netlist``: the top's netlist fingerprint (:mod:`gravfm.synth.netlists`)."""
    source = "benchmarks/bench_synth.py --matrix"
    if "fpga" in report:
        return {**seed_row(report, rtl=rtl, source=source, **head), "netlist": netlist}
    return {"kind": "seed", **matrix_config(top, router), "seed": seed, **head, "rtl": rtl, "netlist": netlist,
            **{key: report.get(key) for key in FIGURES}, "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "source": source, "note": report.get("note") or report.get("error")}


def matrix(args):
    """Issue 38's matrix: each top at each seed not yet in the results for the checkout's RTL."""
    rtl = rtl_fingerprint()
    if rtl != rtl_fingerprint("HEAD"):
        raise ConfigError("the RTL has uncommitted changes: commit them first, so that each row names the commit "
                          "holding its RTL")
    head, rows = commit_facts("HEAD"), load_rows(args.results)
    with scratch_folder(args.keep) as scratch:
        for top in (top for top in MATRIX if top.name in args.tops):
            config = matrix_config(top, args.router)
            netlist = top_netlist(top)
            for seed in args.seeds:
                if any(row["seed"] == seed for row in rows_on(rows, config, rtl, netlist)):
                    print(f"{top.name} seed {seed}: in {args.results} for RTL {rtl} or netlist {netlist}, not run again",
                          file=sys.stderr)
                    continue
                print(f"{top.name} seed {seed}: gravfm {' '.join(top.command(seed, args.router))}", file=sys.stderr)
                report = synth_once(top.command(seed, args.router), Path(scratch) / f"{top.name}-{seed}", args.timeout)
                rows.append(matrix_row(top, seed, args.router, report, rtl, head, netlist))
                save_rows(args.results, rows)
                print(f"{top.name} seed {seed}: {rows[-1]['status']}, Fmax {rows[-1]['fmax_mhz']}", file=sys.stderr)
            seeds = [row for row in rows_on(rows, config, rtl, netlist) if row["seed"] in args.seeds]
            done = len(args.seeds) > 1 and {row["seed"] for row in seeds} == set(args.seeds)
            if done and not any(row["seeds"] == sorted(args.seeds)
                                for row in rows_on(rows, config, rtl, netlist, "median")):
                rows.append(median_row(seeds))
                save_rows(args.results, rows)
    print(f"rows in {args.results}; python scripts/synth_table.py writes the README's table from them")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix", action="store_true", help="issue 38's matrix of tops into --results")
    parser.add_argument("--tops", nargs="+", choices=[top.name for top in MATRIX], default=[top.name for top in MATRIX],
                        help="with --matrix: these tops only (default all)")
    parser.add_argument("--results", type=Path, default=RESULTS_FILE, help="with --matrix: the rows' file")
    parser.add_argument("--pes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--fpgas", type=int, nargs="+", default=[1],
                        help="systems of this many FPGAs (FPGA 0's top, link ends included, for more than 1)")
    parser.add_argument("--algorithms", nargs="+", default=["wcc", "bfs", "pagerank"])
    parser.add_argument("--targets", nargs="+", default=["xcu", "ecp5-85"])
    parser.add_argument("--seeds", type=int, nargs="+", default=None,
                        help="nextpnr placement seeds, one place-and-route each (default 1; 1 2 3 with --matrix)")
    parser.add_argument("--router", choices=NEXTPNR_ROUTERS, default=MATRIX_ROUTER, help="nextpnr router")
    parser.add_argument("--timeout", type=float, default=None,
                        help=f"seconds per configuration (default {SWEEP_TIMEOUT_S}; {MATRIX_TIMEOUT_S} with --matrix)")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep each configuration's tool files and logs under DIR (default: a temporary folder)")
    args = parser.parse_args(argv)
    args.seeds = args.seeds or (list(MATRIX_SEEDS) if args.matrix else [1])
    args.timeout = args.timeout or (MATRIX_TIMEOUT_S if args.matrix else SWEEP_TIMEOUT_S)
    previous = install_stop_handlers()
    try:
        if args.matrix:
            matrix(args)
        else:
            sweep(args)
    except ConfigError as error:
        print(f"bench_synth.py: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        signum = getattr(stop, "signum", signal.SIGINT)
        print(f"bench_synth.py: {STOP_SIGNALS[signum]}; what was measured is in "
              f"{args.results if args.matrix else args.json}", file=sys.stderr)
        return 128 + signum
    finally:
        for number, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be restored
                signal.signal(number, handler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
