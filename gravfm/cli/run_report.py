"""`gravfm run`'s report on the terminal: configuration, result, supersteps, the cycle breakdown,
links (the harness's and the boards'), memory; and the one-line result of ``--quiet``."""

import math

from ..flow.readings import BREAKDOWN_LABELS, cycle_breakdown, pe_cycles, run_notes, superstep_lines
from ..flow.reporting import SUPERSTEP_CYCLES_NOTE, hazard_stall_note, superstep_cycles, superstep_overhead

__all__ = ["print_report", "result_line", "clock_lines", "folded", "FOLD_ROWS", "FOLD_KEEP"]


#: Per-superstep tables longer than this are folded to their first and last FOLD_KEEP rows.
FOLD_ROWS = 12
FOLD_KEEP = 5


def _hubs(report):
    """The hybrid's hub path in the configuration line, or nothing."""
    if report.hub_senders is None:
        return ""
    return f", hub path ({_count(report.hub_senders, 'hub sender')})"


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
                  f"{'forwarding' if report.gather_forwarding else 'waits on hazards'}{_hubs(report)}; platform "
                  f"{report.platform} at "
                  f"{report.f_clk_hz / 1e6:g} MHz", highlight=False)

    figures = Table(title="measurement (simulated)", show_header=True, title_justify="left")
    for column in ("status", "supersteps", "cycles", "messages", "CPE", "MTEPS"):
        figures.add_column(column, justify="right")
    finished = report.finished
    figures.add_row(report.status, _figure(report.supersteps), _figure(report.cycles), _figure(report.messages),
                    _figure(report.cpe if finished else None), _figure(report.mteps if finished else None, 1))
    console.print(figures)
    for line in clock_lines(report):
        console.print(line, highlight=False)
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
    if "channels" in memory:   # pseudo-channel memory: the busiest channel bounds the PEs reading it
        table.caption = (f"{memory['channels']} pseudo-channels, {memory['pes_per_channel']} PE(s) each at most; "
                         f"the busiest channel {memory['busiest_channel_gib_s']:.2f} GiB/s")
    console.print(table)


def clock_lines(report):
    """MTEPS at each clock of ``report.clocks``, each labelled: the platform's (met, by which design,
    or assumed) and a measured Fmax (its seeds and whether its RTL is today's)."""
    lines = []
    for clock in report.clocks:
        what = "the platform clock" if clock["kind"] == "platform" else "this top's measured Fmax"
        if clock["mhz"] is None:
            lines.append(f"MTEPS at {what}: none ({clock['label']})")
            continue
        mteps = report.mteps_at(clock["mhz"])
        figure = "-, the run did not finish" if mteps is None else f"{mteps:,.1f}"
        lines.append(f"MTEPS at {what}, {clock['mhz']:.1f} MHz ({clock['label']}): {figure}")
    return lines


def result_line(report):
    """The one line ``--quiet`` prints: what ran, its status, verdict (and why not verified),
    cycles, messages, MTEPS at the platform clock (met or assumed)."""
    reason = report.check_detail or (report.diagnosis[0] if report.diagnosis else "")
    verdict = "verified" if report.verified else f"NOT VERIFIED{f' ({reason})' if reason else ''}"
    clock = f"the {report.clock_basis} {report.f_clk_hz / 1e6:g} MHz"
    throughput = f", {report.mteps:,.1f} MTEPS at {clock}" if report.finished else ""
    return (f"{report.algorithm} on {report.graph_name}: {report.status}, {verdict}, {report.cycles:,} cycles, "
            f"{report.messages:,} messages{throughput} (simulated)")
