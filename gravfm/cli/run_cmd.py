"""``gravfm run ALGO --graph SPEC``: simulate an algorithm on a graph, verify it and report."""

from dataclasses import replace

from ..algorithms.loading import resolve_algorithm
from ..board.backend import BoardBackend, LitexBackend
from ..architectures import ARCHITECTURES, ARCH_HELP, DEFAULT_ARCHITECTURE
from ..errors import ConfigError
from ..flow import RunOptions, run
from ..model import load_platform
from ..partition import METHODS
from ..sim.trace import TraceRequest, parse_window
from ..synth.clocks import check_synth_target, clock_rates
from .common import (add_capacity_arguments, add_graph_input_arguments, check_output_file, graph_load_options,
                     local_bits_of, parse_params, positive_int, report_stream, write_json)
from .link_options import add_link_arguments, bit_error_rate, link_options_from_args
from .memory_args import add_memory_arguments, memory_overrides
from .run_plot import check_plot_file, plot_run
from .run_report import FOLD_KEEP, FOLD_ROWS, print_report, result_line

__all__ = ["register", "handle", "print_report", "progress_display", "options_from_args", "execute", "result_line",
           "make_console", "trace_of"]


def register(subparsers):
    parser = subparsers.add_parser(
        "run", help="generate, simulate and verify an algorithm on a graph; report throughput",
        description="Generate the hardware, build the simulator (cached), load the graph, simulate "
                    "cycle by cycle, verify against the software reference and report the figures "
                    "beside the analytical model's prediction. Exit status 1 when verification fails, "
                    "2 on bad input.")
    add_run_arguments(parser)
    parser.add_argument("algorithm", metavar="ALGO",
                        help="registered algorithm (wcc, bfs, ...) or FILE.py:NAME of an Algorithm object")
    parser.add_argument("--graph", required=True, metavar="SPEC",
                        help="graph file or generator spec, e.g. rmat:scale=12,ef=16,seed=1")
    parser.add_argument("--pes", type=positive_int, default=1, help="PEs per FPGA (default 1)")
    parser.set_defaults(handler=handle)


def add_run_arguments(parser):
    """Options shared by ``run`` and ``demo``."""
    parser.add_argument("--fpgas", type=positive_int, default=1, help="number of FPGAs (default 1)")
    parser.add_argument("--platform", default="ac510x4", metavar="FILE|NAME",
                        help="platform for the clock, the most FPGAs and PEs per FPGA, the graph memory "
                             "and the model's prediction (default ac510x4)")
    parser.add_argument("--arch", choices=ARCHITECTURES, default=DEFAULT_ARCHITECTURE, help=ARCH_HELP)
    parser.add_argument("--update-lanes", type=int, choices=(1, 2), default=None, metavar="N",
                        help="updates a GraVF-M PE takes per cycle, 1 or 2 (default: 2 with 8 PEs or "
                             "more in the system, else 1)")
    parser.add_argument("--link-lanes", type=int, choices=(1, 2), default=None, metavar="N",
                        help="update lanes of each link to a peer FPGA, 1 or 2 (hybrid only; default: 2 from "
                             "32 PEs per FPGA on, else 1)")
    parser.add_argument("--hub-degree", type=int, default=None, metavar="D",
                        help="hybrid only: senders of more than D out-edges are hubs, whose updates every "
                             "scatter unit of their FPGA takes and whose edges there are dealt over all units "
                             "(default: no hubs)")
    parser.add_argument("--no-gather-forwarding", dest="gather_forwarding", action="store_false",
                        help="make messages to a vertex in the gather pipeline wait for its write-back "
                             "(the paper's hazard unit) instead of taking the in-flight result")
    parser.add_argument("--no-kernel-check", dest="kernel_check", action="store_false",
                        help="skip the kernel contract check (each kernel benched alone in Amaranth's "
                             "simulator before the build: outputs per input, barrier, declared latency)")
    parser.add_argument("--partition", default=None, choices=METHODS,
                        help="greedy (GraVF-M's and GraVF's default), sorted_greedy (largest out-degree first; "
                             "the hybrid's default), round_robin or metis")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="an algorithm parameter (repeatable), e.g. root=3 or weight_seed=2")
    parser.add_argument("--root", type=int, default=None, metavar="V",
                        help="root vertex, the file's own id (short for --param root=V; BFS, SSSP, ...)")
    parser.add_argument("--backend", choices=("verilator", "amaranth", "litex", "board"), default="verilator",
                        help="compiled Verilator simulation (default), the Amaranth simulator (no Verilog "
                             "kernels), litex: the whole board SoC (LiteX, LiteDRAM's DDR3 model) simulated and "
                             "driven by the host driver over a simulated UART, or board: a real board behind "
                             "litex_server (--board-build, --board-server); the last two need the board extra")
    parser.add_argument("--board-build", metavar="DIR", default=None,
                        help="--backend board: the --out folder of the board's `gravfm board build`")
    parser.add_argument("--board-server", metavar="HOST:PORT", default="127.0.0.1:1234",
                        help="--backend board: the litex_server connected to the board (default 127.0.0.1:1234); "
                             "several FPGAs: one per board, comma-separated, FPGA 0 first")
    parser.add_argument("--link-ber", type=bit_error_rate, default=None, metavar="RATE",
                        help="--backend litex with several FPGAs: bits flipped per bit on every simulated "
                             "board-to-board wire once the links are up (the link check retransmit recovers)")
    add_capacity_arguments(parser)
    parser.add_argument("--max-cycles", type=positive_int, default=None, metavar="N",
                        help="stop after N cycles")
    parser.add_argument("--watchdog", type=positive_int, default=1 << 20, metavar="N",
                        help="stop when nothing progresses for N cycles (default 1048576)")
    parser.add_argument("--threads", type=positive_int, default=None, metavar="N",
                        help="several FPGAs on the compiled simulator: threads that advance the FPGA models "
                             "(default: the machine's cores, at most the FPGAs; results do not depend on it). "
                             "With links of latency L >= 4 (FIFO depth >= 2, no faults, no --link-check) "
                             "the threads meet every L - 2 cycles at most, else every cycle")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="build cache (default $GRAVFM_CACHE, else $XDG_CACHE_HOME/gravfm, i.e. ~/.cache/gravfm)")
    parser.add_argument("--json", default=None, metavar="FILE",
                        help="also write the figures as JSON ('-': standard output, the report going to "
                             "the standard error)")
    parser.add_argument("--quiet", action="store_true",
                        help="print only the result line: ALGO on GRAPH: STATUS, verified|NOT VERIFIED, "
                             "CYCLES cycles, MESSAGES messages, MTEPS MTEPS at the met|assumed CLOCK (simulated); "
                             "no progress, no tables (--json and --plot files are still written)")
    parser.add_argument("--all-supersteps", action="store_true",
                        help=f"print every row of the per-superstep table (default: the first and last "
                             f"{FOLD_KEEP} when there are more than {FOLD_ROWS})")
    parser.add_argument("--plot", default=None, metavar="FILE.png",
                        help="draw the messages and cycles of each superstep and the cycle breakdown "
                             "(PNG, PDF or SVG by suffix)")
    parser.add_argument("--trace", default=None, metavar="FILE.vcd|FILE.fst",
                        help="dump the run's waveform, VCD or FST by suffix (compiled simulator only; a "
                             "traced build is cached apart). Several FPGAs write one file per FPGA: FILE "
                             "with -fpga0, -fpga1, ... before the suffix. Time 10c is cycle c's rising edge "
                             "(c = 1 samples start)")
    parser.add_argument("--trace-window", default=None, metavar="A:B",
                        help="dump only cycles A to B of the run (either end may be left out)")
    add_graph_input_arguments(parser)
    add_memory_arguments(parser)
    add_link_arguments(parser)


def check_paths(args):
    """The output path, checked before any work so that a finished run is not lost (the cache
    folder is checked by :class:`~gravfm.flow.RunOptions`)."""
    check_output_file(args.json, "--json", stdout=True)
    check_output_file(args.trace, "--trace")
    check_plot_file(args.plot)


def trace_of(args):
    """The :class:`~gravfm.sim.trace.TraceRequest` of ``--trace`` and ``--trace-window``, or None."""
    if args.trace is None:
        if args.trace_window is not None:
            raise ConfigError("--trace-window needs --trace FILE.vcd or FILE.fst")
        return None
    window = None if args.trace_window is None else parse_window(args.trace_window)
    return TraceRequest(args.trace, window)


def backend_of(args):
    """The back-end's name, or for ``--backend board`` the back-end itself (its build and server)."""
    backend = getattr(args, "backend", "verilator")
    link_ber = getattr(args, "link_ber", None)
    if link_ber is not None and backend != "litex":
        raise ConfigError("--link-ber goes with --backend litex (the simulated boards' wires); the harness's "
                          "links take --link-flip")
    if backend != "board":
        if getattr(args, "board_build", None) is not None:
            raise ConfigError("--board-build goes with --backend board")
        if link_ber is not None:
            return LitexBackend(link_ber=link_ber, max_cycles=args.max_cycles, cache_dir=getattr(args, "cache", None))
        return backend
    if args.board_build is None:
        raise ConfigError("--backend board needs --board-build DIR (the --out folder of `gravfm board build`)")
    return BoardBackend(build_dir=args.board_build, server=args.board_server, max_cycles=args.max_cycles)


def options_from_args(args, algorithm, graph, pes):
    """The :class:`~gravfm.flow.RunOptions` of parsed ``run`` (or ``demo``) arguments."""
    check_paths(args)
    return RunOptions(algorithm=resolve_algorithm(algorithm), graph=graph, fpgas=args.fpgas, pes=pes,
                      platform=args.platform, partition=args.partition,
                      params=parse_params(args.param, args.root), backend=backend_of(args),
                      local_bits=local_bits_of(args.vertices_per_pe), edges_per_pe=args.edges_per_pe,
                      max_cycles=args.max_cycles, watchdog_cycles=args.watchdog, cache_dir=args.cache,
                      threads=args.threads,
                      arch=args.arch, update_lanes=args.update_lanes, gather_forwarding=args.gather_forwarding,
                      hub_degree=args.hub_degree, check_kernels=args.kernel_check,
                      graph_options=graph_load_options(args),
                      edge_memory=args.edge_memory, memory=memory_overrides(args),
                      link_options=link_options_from_args(args), trace=trace_of(args),
                      hardware={} if args.link_lanes is None else {"link_lanes": args.link_lanes})


class progress_display:
    """Context manager: a rich progress line fed by ``stage`` (what runs: ``building`` the
    Verilator model, ``loading``, ...) and ``update`` (simulating: superstep, cycles, messages)."""

    def __init__(self, console, enabled=True):
        self.console, self.enabled = console, enabled
        self._progress = self._task = None

    def __enter__(self):
        if self.enabled:
            # deferred: rich (only when printing)
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                                      console=self.console, transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task("starting", total=None, detail="")
        return self

    def stage(self, name, detail=""):
        if self._progress is not None:
            self._progress.update(self._task, description=name, detail=detail, completed=0, total=None)

    def update(self, cycle, superstep, messages, total_messages):
        if self._progress is None:
            return
        self._progress.update(self._task, completed=messages, total=total_messages or None,
                              description=f"simulating superstep {superstep}",
                              detail=f"{cycle:,} cycles  {messages:,}/{total_messages:,} messages")

    def log(self, message):
        if self.enabled:
            self.console.print(f"[dim]{message}[/dim]", highlight=False)

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)
        return False


def make_console():
    """The report's console. Piped or redirected output is not a terminal: rich would wrap it at
    80 columns, mid-sentence, so it gets no width limit worth the name and no soft wrapping."""
    from rich.console import Console  # deferred: rich (only when printing)

    console = Console()
    return console if console.is_terminal else Console(width=1000, soft_wrap=True)


def with_clocks(report, platform):
    """``report`` with the clocks its MTEPS are given at: the platform's (met or assumed) and, for a
    platform with a synthesis target, the Fmax measured for the run's top."""
    clocks = clock_rates(platform, algorithm=report.algorithm, fpgas=report.fpgas, pes=report.pes_per_fpga,
                         edge_memory=report.edge_memory, arch=report.arch)
    return replace(report, clocks=tuple(clocks))


def execute(options, args):
    """Run with a progress display, print the report (or, ``--quiet``, its result line), write
    the JSON and the plot; exit status 1 unless verified."""
    platform = load_platform(options.platform)
    check_synth_target(platform)  # a bad platform file fails before the run, not after it
    with report_stream(args):
        console = make_console()
        with progress_display(console, enabled=not args.quiet) as display:
            report = run(options, log=display.log, on_progress=display.update, on_stage=display.stage)
        report = with_clocks(report, platform)
        if args.quiet:
            print(result_line(report), flush=True)
        else:
            print_report(report, console, all_supersteps=getattr(args, "all_supersteps", False))
        if getattr(args, "plot", None):
            plot_run(report, args.plot)
            if not args.quiet:
                console.print(f"plot written to {args.plot}", highlight=False)
    if args.json:
        write_json(args.json, report.to_dict(), args)
    return 0 if report.verified else 1


def handle(args):
    return execute(options_from_args(args, args.algorithm, args.graph, args.pes), args)
