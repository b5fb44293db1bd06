"""The rates ``gravfm reproduce --dry-run`` estimates wall time from, measured on this machine.

Runs a few ``gravfm reproduce`` points exactly as a sweep does (each in a child process,
:func:`gravfm.reproduce.task.run_point_isolated`, one simulation thread) in a fresh private build
cache, each twice: the first run builds its design (Verilator) and exports its Verilog, the
second finds the build by its configuration (:mod:`gravfm.sim.design_memo`). From each pair:

* ``build_s`` / ``build_cpu_s``: the Verilator build of the design (wall / CPU seconds);
* ``export_s`` / ``export_cpu_s``: elaborating and exporting the Verilog of the design (the FPGA
  top a multi-FPGA point builds), measured on its own in this process (wall / CPU seconds);
* ``overhead_s``: the second run's wall time outside the simulator (prepare: graph, reference,
  partition; load image; verification; model);
* ``run_s``, ``cycles``, ``messages``: the simulator's run (loading included) of the second run;
* ``cpu_fraction``: the CPU seconds of both runs (every process they started) over their wall
  time. On a shared machine the wall times follow its load; one worker on an idle machine takes
  about the CPU seconds, so the estimate gives both.

:mod:`gravfm.reproduce.estimate` interpolates these by PEs per FPGA (build, export) and by PEs
in the system (simulation rates). The machine may be shared: its load average is recorded.

Usage: python benchmarks/bench_reproduce_rates.py [--out FILE]
"""

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from gravfm.provenance import arguments, machine, write_results
from gravfm.reproduce.points import Point

#: Points spanning the full sizes' designs: 1 and 4 PEs on one FPGA, 4 FPGAs x 9 PEs.
POINTS = (
    Point("wcc", "uniform:n=16384,deg=16,seed=1", fpgas=1, pes=1),
    Point("wcc", "uniform:n=16384,deg=16,seed=1", fpgas=1, pes=4),
    Point("wcc", "rmat:scale=15,ef=16,seed=1", fpgas=4, pes=9),
)


def measure(point, cache):
    from gravfm.reproduce.task import run_point_isolated

    load = os.getloadavg()[0]
    cpu = _children_cpu_s()
    first = run_point_isolated(point, cache_dir=cache)
    second = run_point_isolated(point, cache_dir=cache)
    cpu = _children_cpu_s() - cpu
    for result in (first, second):
        if result["status"] != "ok" or not result["verified"]:
            raise SystemExit(f"{point.label()}: {result.get('error') or result['measured']['detail']}")
    if second["sim"]["build_cached"] is not True or first["sim"]["build_cached"] is not False:
        raise SystemExit(f"{point.label()}: expected a new build, then a cached one")
    export_s, export_cpu_s = _export(point)
    measured = second["measured"]
    return {"point": point.to_dict(), "label": point.label(), "fpgas": point.fpgas, "pes_per_fpga": point.pes,
            "total_pes": point.fpgas * point.pes, "vertices": measured["vertices"], "edges": measured["edges"],
            "messages": measured["messages"], "supersteps": measured["supersteps"], "cycles": measured["cycles"],
            "build_s": first["sim"]["build_s"], "build_cpu_s": first["sim"]["build_cpu_s"],
            "export_s": export_s, "export_cpu_s": export_cpu_s,
            "overhead_s": second["wall_s"] - second["sim"]["build_s"] - second["sim"]["run_s"],
            "run_s": second["sim"]["run_s"], "wall_first_s": first["wall_s"], "wall_second_s": second["wall_s"],
            "cpu_s": cpu, "cpu_fraction": cpu / (first["wall_s"] + second["wall_s"]),
            "build_key": second["build_key"], "load_average_before": load}


def _export(point):
    """Wall and CPU seconds of elaborating and exporting the design ``point`` builds."""
    from gravfm.algorithms import get_algorithm
    from gravfm.flow import elaborate, plan, prepare
    from gravfm.reproduce.plan import _platform
    from gravfm.reproduce.points import point_root
    from gravfm.sim.verilator_build import simulator_sources

    algorithm = get_algorithm(point.algorithm)
    root = point_root(point, algorithm)
    prepared = prepare(algorithm, point.graph, params={} if root is None else {"root": root})
    platform, edge_memory = _platform(point)
    top = elaborate(plan(prepared, fpgas=point.fpgas, pes=point.pes, arch=point.arch, edge_memory=edge_memory),
                    platform=platform)
    top._MustUse__silence = True  # its FPGA top is exported
    wall, cpu = time.perf_counter(), time.process_time()
    simulator_sources(top.tops[0] if point.fpgas > 1 else top)
    return time.perf_counter() - wall, time.process_time() - cpu


def _children_cpu_s():
    """CPU seconds (user + system) of this process's finished children and their descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "reproduce_rates.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gravfm-rates-") as cache:
        results = []
        for point in POINTS:
            results.append(measure(point, cache))
            print(f"{point.label()}: build {results[-1]['build_s']:.1f} s, export {results[-1]['export_s']:.1f} s, "
                  f"overhead {results[-1]['overhead_s']:.1f} s, run {results[-1]['run_s']:.1f} s "
                  f"({results[-1]['messages'] / results[-1]['run_s'] / 1e6:.2f} M messages/s), CPU/wall "
                  f"{results[-1]['cpu_fraction']:.2f}", flush=True)
    write_results({"benchmark": "reproduce_rates", "definition": __doc__.split("\n\n")[1].strip(),
                   "arguments": arguments(args), "machine": machine(), "results": results}, args.out, stream=None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
