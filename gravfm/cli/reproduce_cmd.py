"""``gravfm reproduce``: the paper's evaluation (figures 7-13, tables 2-3) in one command."""

import os
from pathlib import Path

from ..reproduce import PointStore, chosen_points, reproduce
from ..reproduce.estimate import DEFAULT_RATES, Rates, estimate, format_estimate
from ..reproduce.experiments import EXPERIMENTS
from ..reproduce.plan import format_plan, plan_points, probe_cache
from ..errors import ConfigError
from .common import positive_int

__all__ = ["register", "handle"]

def register(subparsers):
    parser = subparsers.add_parser(
        "reproduce", help="run the paper's experiments on a Dask cluster; write PNGs, results.json, REPORT.md",
        description="Run the GraVF-M paper's experiments (each point simulated, verified and beside the model) "
                    "as tasks on dask.distributed, and write one PNG per experiment, results.json and REPORT.md "
                    "(the paper's claims beside the measured values) into --out. Points already in "
                    "OUT/points are reused. Experiments: " + ", ".join(EXPERIMENTS) + ", or all.")
    parser.add_argument("experiments", nargs="*", metavar="EXPERIMENT", default=["all"],
                        help="experiments to run (default: all)")
    parser.add_argument("--out", metavar="DIR", help="output folder (created; needed unless --dry-run)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="small graphs, 2 PEs per FPGA, few points (default; aimed at `all` in under 30 min on "
                           "2 idle cores)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="the paper's sizes: 9 PEs per FPGA, larger graphs (hours to days)")
    parser.set_defaults(mode="quick")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="address of a running Dask scheduler (tcp://HOST:8786); default: a local cluster")
    parser.add_argument("--workers", type=positive_int, metavar="N",
                        help="workers of the local cluster (default: the machine's cores)")
    parser.add_argument("--cache", metavar="DIR", help="Verilator build cache (a shared folder on a cluster)")
    parser.add_argument("--points-limit", type=positive_int, metavar="N",
                        help="run only the first N points of each experiment (a smoke test)")
    parser.add_argument("--report-only", action="store_true",
                        help="run nothing: write the PNGs, results.json and REPORT.md from the points already in DIR")
    parser.add_argument("--dry-run", action="store_true",
                        help="run nothing: list each experiment's points and the distinct designs (Verilator "
                             "builds) they need, estimated by hardware configuration, and estimate the builds, "
                             "simulated edges and wall time from --rates; --out is not written")
    parser.add_argument("--rates", metavar="FILE",
                        help="--dry-run: the rates measured on this machine by benchmarks/bench_reproduce_rates.py "
                             "(default: benchmarks/results/reproduce_rates.json of the source tree)")
    parser.add_argument("--quiet", action="store_true", help="no live progress display")
    parser.set_defaults(handler=handle)


def handle(args):
    from rich.console import Console  # deferred: rich (only when printing)

    if args.dry_run:
        return _dry_run(args)
    if args.out is None:
        raise ConfigError("--out DIR is required (only --dry-run writes nothing)")
    console = Console(stderr=True)
    claims, results, stats = reproduce(args.experiments, args.out, mode=args.mode, cache_dir=args.cache,
                                       scheduler=args.scheduler, workers=args.workers,
                                       points_limit=args.points_limit, display=not args.quiet,
                                       console=console, report_only=args.report_only)
    for name, claim in claims.items():
        verdict = {True: "holds", False: "does not hold", None: "not yet"}[claim.holds]
        print(f"{name}: {verdict}: {claim.measured}")
    where = f" in {stats.wall_s:.0f} s on {stats.scheduler} with {stats.workers} workers" if stats.computed else ""
    print(f"{stats.total} points: {stats.reused} reused, {stats.computed} computed{where}, {stats.failed} failed"
          f"{f', {stats.missing} not measured yet' if stats.missing else ''}; {args.out}/REPORT.md")
    return 1 if stats.failed else 0


def _dry_run(args):
    rates = Rates.load(args.rates or DEFAULT_RATES) if args.rates or DEFAULT_RATES.exists() else None
    _, by_experiment = chosen_points(args.experiments, args.mode, args.points_limit, args.cache)
    cache = probe_cache(args.mode, args.cache)
    planned, distinct = plan_points(by_experiment, cache)
    print(format_plan(planned, distinct))
    if rates is None:
        print(f"no estimate of the wall time: no measured rates ({DEFAULT_RATES} is missing; run "
              "benchmarks/bench_reproduce_rates.py)")
        return 0
    workers = args.workers or (1 if args.scheduler else os.cpu_count() or 1)
    store = PointStore(Path(args.out) / "points") if args.out and (Path(args.out) / "points").is_dir() else None
    done = {p for rows in planned.values() for p, _ in rows if store is not None and store.get(p) is not None}
    if done:
        print(f"{len(done)} points already stored in {args.out}: the estimate is for the rest")
    idle = rates.idle()
    print(format_estimate(estimate(planned, rates, cache_dir=cache, workers=workers, done=done),
                          None if idle is None else estimate(planned, idle, cache_dir=cache, workers=workers,
                                                             done=done)))
    return 0
