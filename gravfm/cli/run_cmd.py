"""``gravfm run ALGO --graph SPEC``: simulate an algorithm on a graph, verify it and report."""

import argparse
import math

from ..algorithms.loading import resolve_algorithm
from ..board.backend import BoardBackend, LitexBackend
from ..architectures import ARCHITECTURES, ARCH_HELP, DEFAULT_ARCHITECTURE
from ..errors import ConfigError
from ..flow import RunOptions, run
from ..flow.readings import BREAKDOWN_LABELS, cycle_breakdown, pe_cycles, run_notes, superstep_lines
from ..flow.reporting import SUPERSTEP_CYCLES_NOTE, hazard_stall_note, superstep_cycles, superstep_overhead
from ..partition import METHODS
from ..sim.trace import TraceRequest, parse_window
from .common import (add_capacity_arguments, add_graph_input_arguments, check_output_file, graph_load_options,
                     local_bits_of, parse_params, positive_int, report_stream, write_json)
from .link_options import add_link_arguments, link_options_from_args
from .memory_args import add_memory_arguments, memory_overrides
from .run_plot import check_plot_file, plot_run

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
    parser.add_argument("--no-gather-forwarding", dest="gather_forwarding", action="store_false",
                        help="make messages to a vertex in the gather pipeline wait for its write-back "
                             "(the paper's hazard unit) instead of taking the in-flight result")
    parser.add_argument("--no-kernel-check", dest="kernel_check", action="store_false",
                        help="skip the kernel contract check (each kernel benched alone in Amaranth's "
                             "simulator before the build: outputs per input, barrier, declared latency)")
    parser.add_argument("--partition", default="greedy", choices=METHODS,
                        help="greedy (default), sorted_greedy (largest out-degree first), round_robin or metis")
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
                             "CYCLES cycles, MESSAGES messages, MTEPS MTEPS (simulated); no progress, "
                             "no tables (--json and --plot files are still written)")
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


def bit_error_rate(text):
    """An argparse type: a bit-error rate in [0, 0.5)."""
    try:
        rate = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a rate such as 1e-5, not {text!r}") from None
    if not 0 <= rate < 0.5:
        raise argparse.ArgumentTypeError(f"a bit-error rate is in [0, 0.5), not {text}")
    return rate


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
                      check_kernels=args.kernel_check, graph_options=graph_load_options(args),
                      edge_memory=args.edge_memory, memory=memory_overrides(args),
                      link_options=link_options_from_args(args), trace=trace_of(args))


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


#: Per-superstep tables longer than this are folded to their first and last FOLD_KEEP rows.
FOLD_ROWS = 12
FOLD_KEEP = 5


def _figure(value, digits=3):
    """A figure for reading: thousands separators, ``digits`` decimals for a float, "-" if none."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{int(value):,}"


def _count(number, noun):
    """``1 FPGA``, ``4 PEs``."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def folded(rows, show_all=False):
    """``rows`` to print: all of them, or the first and last :data:`FOLD_KEEP` with None where
    the others were, when there are more than :data:`FOLD_ROWS` and ``show_all`` is false."""
    rows = list(rows)
    if show_all or len(rows) <= FOLD_ROWS:
        return rows
    return [*rows[:FOLD_KEEP], None, *rows[-FOLD_KEEP:]]


def print_report(report, console, *, all_supersteps=False):
    """The human-readable report of a :class:`gravfm.flow.RunReport`; a long per-superstep table
    is folded unless ``all_supersteps``."""
    from rich.table import Table  # deferred: rich (only when printing)

    verdict = "[bold green]verified[/] against the software reference" if report.verified \
        else "[bold red]NOT VERIFIED[/]"
    detail = f" ({report.check_detail})" if report.check_detail else ""
    # Edges as loaded and cleaned (as `gravfm graph info` counts them), then as the algorithm runs.
    edges = f"{report.input_edges:,} edges"
    if report.edges != report.input_edges:
        edges += f" ({report.edges:,} as {report.algorithm} runs them)"
    params = "".join(f", {name} {value}" for name, value in report.params.items())
    console.print(f"[bold]{report.algorithm}[/]{params} on {report.graph_name}: {report.vertices:,} vertices, "
                  f"{edges} — {verdict}{detail}", highlight=False)
    console.print(f"configuration: {_count(report.fpgas, 'FPGA')} x {_count(report.pes_per_fpga, 'PE')} ({report.arch}, "
                  f"{report.partition} partition), capacity {1 << report.local_bits:,} vertices and "
                  f"{report.edges_per_pe:,} {'edges per list' if report.edge_memory == 'offchip' else 'edges per PE'}"
                  f" ({report.edge_memory}), {_count(report.update_lanes, 'update lane')}, gather "
                  f"{'forwarding' if report.gather_forwarding else 'waits on hazards'}; platform {report.platform} at "
                  f"{report.f_clk_hz / 1e6:g} MHz", highlight=False)

    figures = Table(title="measurement (simulated)", show_header=True, title_justify="left")
    for column in ("status", "supersteps", "cycles", "messages", "CPE", "MTEPS"):
        figures.add_column(column, justify="right")
    finished = report.finished
    figures.add_row(report.status, _figure(report.supersteps), _figure(report.cycles), _figure(report.messages),
                    _figure(report.cpe if finished else None), _figure(report.mteps if finished else None, 1))
    console.print(figures)
    for note in run_notes(report):
        console.print(f"[bold yellow]note:[/] {note}", highlight=False)
    hazard_note = hazard_stall_note(report)
    if hazard_note:
        console.print(f"[bold yellow]warning:[/] {hazard_note}", highlight=False)

    if report.rounds:
        first_apply, cycles = superstep_cycles(report.rounds, report.cycles)
        rounds = Table(title="per superstep", title_justify="left")
        for column in ("round", "active vertices", "messages", "cycles"):
            rounds.add_column(column, justify="right")
        shown = folded(zip(report.rounds, cycles), all_supersteps)
        for entry in shown:
            if entry is None:
                rounds.add_row("...", f"{len(report.rounds) - 2 * FOLD_KEEP:,} rounds folded", "",
                               "(--all-supersteps)")
                continue
            row, row_cycles = entry
            rounds.add_row(str(row.round), _figure(row.active), _figure(row.messages), _figure(row_cycles))
        console.print(rounds)
        if first_apply is not None:
            console.print(f"{SUPERSTEP_CYCLES_NOTE}; round 0's apply took the first {first_apply:,} cycles",
                          highlight=False)
        overhead = superstep_overhead(report)
        if overhead is not None:
            console.print(f"above the message bound ({overhead['message_bound_cycles']:,.1f} cycles = messages / PEs): "
                          f"{overhead['above_bound']:,.1f} cycles, {overhead['per_superstep_mean']:,.1f} per superstep "
                          f"(round 0's apply {overhead['first_apply'] or 0:,}; per PE: apply "
                          f"{overhead['apply_per_pe']:,.1f}, barrier wait {overhead['wait_barrier_per_pe']:,.1f})",
                          highlight=False)

    breakdown = cycle_breakdown(report)
    if breakdown:
        stalls = Table(title="cycle breakdown",
                       caption="PE cycles summed over PEs; work + mem_wait = busy, the other rows overlap them",
                       title_justify="left", caption_justify="left")
        for column, justify in (("counter", "left"), ("", "left"), ("cycles", "right"), ("share of PE cycles", "right")):
            stalls.add_column(column, justify=justify)
        total = pe_cycles(report)
        for cause, cycles in breakdown.items():
            stalls.add_row(cause, BREAKDOWN_LABELS[cause], _figure(cycles), f"{100 * cycles / total:.1f}%")
        console.print(stalls)

    if report.links:
        _print_links(report.links, console)
    if report.board_links:
        _print_board_links(report.board_links, console)
    if report.memory:
        _print_memory(report.memory, console)

    label = "link error" if report.status == "link_error" else "deadlock"
    for line in report.diagnosis:
        console.print(f"[bold red]{label}:[/] {line}", highlight=False)

    if report.prediction is not None:
        p = report.prediction
        measured = (f"measured {report.mteps:,.1f} MTEPS at CPE {_figure(report.cpe)}" if report.finished
                    else f"no measured MTEPS: the run did not finish ({report.status})")
        console.print(f"model prediction: {p.t_sys_mteps:,.1f} MTEPS, bottleneck {p.bottleneck} "
                      f"({report.prediction_note}); {measured}", highlight=False)
    elif report.prediction_note:
        console.print(f"model prediction: {report.prediction_note}", highlight=False)
    for line in superstep_lines(report):
        console.print(line, highlight=False)

    cache = "cached build" if report.build_cached else f"built in {report.build_s:.1f} s"
    console.print(f"simulator: {report.backend}, {cache}, run {report.run_s:.2f} s, "
                  f"{report.cycles_per_s:,.0f} cycles/s, {report.edges_per_s:,.0f} edges/s", highlight=False)


def _print_board_links(rows, console):
    """Several boards: each link's frames, what the wire cost and what the link check replayed."""
    from rich.table import Table  # deferred: rich (only when printing)

    table = Table(title="board links (SERWB; docs/boards.md)", title_justify="left")
    names = ("frames_sent", "frames_received", "frames_dropped", "bad_packets", "retransmissions", "discarded_in")
    for column in ("FPGA -> peer", *names, "check error"):
        table.add_column(column, justify="left" if column in ("FPGA -> peer", "check error") else "right")
    for row in rows:
        table.add_row(f"{row['fpga']} -> {row['peer']}", *(f"{row[name]:,}" for name in names),
                      row["error"]["kind"] or "-")
    console.print(table)


def _print_links(links, console):
    """Inter-FPGA traffic: one row per link, then bytes per traversed edge beside the theory."""
    from rich.table import Table  # deferred: rich (only when printing)

    check = f", link check {links['check']}" if "check" in links else ""
    table = Table(title=f"inter-FPGA links (simulated; {links['item_bits']}-bit items, "
                        f"{links['word_bits']}-bit words{check})", title_justify="left")
    # Faults injected and the link check's work, when the run has them, as "a/b/c" columns.
    extra = {title: names for title, names in (("lost/\ntwice/\nflipped", ("dropped", "duplicated", "flipped")),
                                                ("resent/\ndiscarded", ("retransmissions", "discarded")))
             if names[0] in links}
    for column in ("link", "items", "bytes", "words", "link-bound cycles", *extra):
        table.add_column(column, justify="right")

    def extra_cells(row):
        return ["/".join(_figure(row[name]) for name in names) for names in extra.values()]

    def cells(row):  # whole bytes, words and cycles: a fraction of a byte says nothing here
        return [_figure(round(row[name])) for name in ("items", "bytes", "words", "link_bound_cycles")]

    for row in links["per_link"]:
        table.add_row(f"{row['from']}->{row['to']}", *cells(row), *extra_cells(row))
    table.add_row("total", *cells(links), *extra_cells(links))
    console.print(table)
    console.print(f"inter-FPGA bytes per traversed edge: measured {links['bytes_per_edge']:.4f}, "
                  f"theory {links['bytes_per_edge_theory']:.4f}", highlight=False)


def _print_memory(memory, console):
    """Off-chip edge memory: requests, words and the bandwidth the PEs drew (simulated)."""
    from rich.table import Table  # deferred: rich (only when printing)

    table = Table(title=f"off-chip edge memory (simulated; {memory['word_bits']}-bit words, "
                        f"{memory['requests_in_flight']} requests in flight per PE)", title_justify="left")
    for column in ("requests", "words", "bytes", "PE cycles waiting", "GiB/s", "GiB/s per FPGA"):
        table.add_column(column, justify="right")
    table.add_row(_figure(memory["requests"]), _figure(memory["words"]), _figure(memory["bytes"]),
                  _figure(memory["wait_cycles"]), _figure(memory["gib_s"], 2), _figure(memory["gib_s_per_fpga"], 2))
    console.print(table)


def result_line(report):
    """The one line ``--quiet`` prints: what ran, its status, verdict (and why not verified),
    cycles, messages, MTEPS."""
    reason = report.check_detail or (report.diagnosis[0] if report.diagnosis else "")
    verdict = "verified" if report.verified else f"NOT VERIFIED{f' ({reason})' if reason else ''}"
    throughput = f", {report.mteps:,.1f} MTEPS" if report.finished else ""
    return (f"{report.algorithm} on {report.graph_name}: {report.status}, {verdict}, {report.cycles:,} cycles, "
            f"{report.messages:,} messages{throughput} (simulated)")


def make_console():
    """The report's console. Piped or redirected output is not a terminal: rich would wrap it at
    80 columns, mid-sentence, so it gets no width limit worth the name and no soft wrapping."""
    from rich.console import Console  # deferred: rich (only when printing)

    console = Console()
    return console if console.is_terminal else Console(width=1000, soft_wrap=True)


def execute(options, args):
    """Run with a progress display, print the report (or, ``--quiet``, its result line), write
    the JSON and the plot; exit status 1 unless verified."""
    with report_stream(args):
        console = make_console()
        with progress_display(console, enabled=not args.quiet) as display:
            report = run(options, log=display.log, on_progress=display.update, on_stage=display.stage)
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
