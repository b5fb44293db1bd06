"""``gravfm run --plot FILE``: a run's messages and cycles per superstep and its cycle breakdown."""

from pathlib import Path

from ..errors import ConfigError
from ..flow.readings import cycle_breakdown, pe_cycles
from ..flow.reporting import superstep_cycles
from .common import check_output_file

__all__ = ["check_plot_file", "plot_run", "plot_caption", "PLOT_FORMATS"]

#: Suffixes matplotlib writes that --plot takes.
PLOT_FORMATS = (".png", ".pdf", ".svg")


def check_plot_file(path):
    """Refuse, before any work, a ``--plot`` file of another format or that cannot be written."""
    if path is None:
        return
    if Path(path).suffix.lower() not in PLOT_FORMATS:
        raise ConfigError(f"--plot {path}: unknown format {Path(path).suffix!r} (known: {', '.join(PLOT_FORMATS)})")
    check_output_file(path, "--plot")


def plot_caption(report):
    """The lines above the plot: what ran on which system, whether it verified, its throughput,
    and the memory and link figures, so that the picture stands alone."""
    verdict = "verified" if report.verified else f"NOT VERIFIED ({report.check_detail or report.status})"
    throughput = (f"{report.mteps:,.1f} MTEPS, CPE {report.cpe:,.2f}" if report.finished and report.messages
                  else f"did not finish ({report.status}): no MTEPS" if not report.finished else "no messages")
    lines = [f"{report.algorithm} on {report.graph_name}: {report.fpgas} FPGA{'s' * (report.fpgas != 1)} x "
             f"{report.pes_per_fpga} PE{'s' * (report.pes_per_fpga != 1)} ({report.arch}, {report.edge_memory} edges, "
             f"{report.platform} at {report.f_clk_hz / 1e6:g} MHz)",
             f"{verdict}; {report.cycles:,} cycles, {report.messages:,} messages, {throughput} (simulated)"]
    figures = []
    if report.memory:
        memory = report.memory
        figures.append(f"memory {memory['gib_s']:.2f} GiB/s, {memory['wait_cycles']:,} PE cycles waiting")
    if report.links:
        figures.append(f"links {int(report.links['bytes']):,} bytes, {report.links['bytes_per_edge']:.3f} "
                       f"per edge (theory {report.links['bytes_per_edge_theory']:.3f})")
    if figures:
        lines.append("; ".join(figures))
    return "\n".join(lines)


def plot_run(report, path):
    """Write the figure of a :class:`~gravfm.flow.RunReport` to ``path`` (format by suffix).

    Left: the messages of each round (bars) and the cycles they took (line, second axis;
    :func:`~gravfm.flow.reporting.superstep_cycles`). Right: the cycle breakdown as shares of
    the PEs' cycles, memory wait apart from work (:func:`~gravfm.flow.readings.cycle_breakdown`).
    Above: :func:`plot_caption`.
    """
    import matplotlib  # deferred: matplotlib (only when plotting)

    matplotlib.use("Agg")  # files only: never open a window, works without a display
    from matplotlib import pyplot as plt  # deferred: matplotlib (only when plotting)

    figure, (steps, stalls) = plt.subplots(1, 2, figsize=(10, 4.8), gridspec_kw={"width_ratios": (3, 2)})
    figure.suptitle(plot_caption(report), fontsize="small", x=0.01, ha="left")
    rounds = [row.round for row in report.rounds]
    steps.bar(rounds, [row.messages for row in report.rounds], color="tab:blue", label="messages")
    steps.set_xlabel("round (superstep)")
    steps.set_ylabel("messages", color="tab:blue")
    first_apply, cycles = superstep_cycles(report.rounds, report.cycles)
    if first_apply is not None:
        twin = steps.twinx()
        twin.plot(rounds, cycles, color="tab:red", marker="o", label="cycles of the round's messages")
        twin.set_ylabel("cycles", color="tab:red")
        twin.set_ylim(bottom=0)
    steps.set_title("messages and cycles per round", fontsize="medium")
    if len(rounds) <= 30:
        steps.set_xticks(rounds)

    breakdown, total = cycle_breakdown(report), pe_cycles(report)
    names = list(breakdown)
    colours = ["tab:green" if name == "work" else "tab:orange" if name == "mem_wait" else "tab:grey" for name in names]
    stalls.barh(names, [100 * breakdown[name] / total for name in names], color=colours)
    stalls.invert_yaxis()
    stalls.set_xlabel("share of PE cycles (%)")
    stalls.set_title(f"cycle breakdown, {report.total_pes} PE(s)", fontsize="medium")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
