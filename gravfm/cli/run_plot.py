"""``gravfm run --plot FILE``: a run's messages and cycles per superstep and its cycle breakdown."""

from pathlib import Path

from ..errors import ConfigError
from ..flow.reporting import superstep_cycles
from .common import check_output_file

__all__ = ["check_plot_file", "plot_run", "PLOT_FORMATS"]

#: Suffixes matplotlib writes that --plot takes.
PLOT_FORMATS = (".png", ".pdf", ".svg")


def check_plot_file(path):
    """Refuse, before any work, a ``--plot`` file of another format or that cannot be written."""
    if path is None:
        return
    if Path(path).suffix.lower() not in PLOT_FORMATS:
        raise ConfigError(f"--plot {path}: unknown format {Path(path).suffix!r} (known: {', '.join(PLOT_FORMATS)})")
    check_output_file(path, "--plot")


def plot_run(report, path):
    """Write the figure of a :class:`~gravfm.flow.RunReport` to ``path`` (format by suffix).

    Left: the messages of each round (bars) and the cycles they took (line, second axis;
    :func:`~gravfm.flow.reporting.superstep_cycles`). Right: each cycle-breakdown counter as a
    share of the PEs' cycles (the categories overlap).
    """
    import matplotlib  # deferred: matplotlib (only when plotting)

    matplotlib.use("Agg")  # files only: never open a window, works without a display
    from matplotlib import pyplot as plt  # deferred: matplotlib (only when plotting)

    figure, (steps, stalls) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": (3, 2)})
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
    steps.set_title(f"{report.algorithm} on {report.graph_name}: {report.cycles:,} cycles (simulated)",
                    fontsize="medium")
    if len(rounds) <= 30:
        steps.set_xticks(rounds)

    counted = sum(pe.get("cycles", 0) for pe in report.per_pe)
    pe_cycles = max(1, counted or report.cycles * report.total_pes)
    names = list(report.stalls)
    stalls.barh(names, [100 * report.stalls[name] / pe_cycles for name in names], color="tab:grey")
    stalls.invert_yaxis()
    stalls.set_xlabel("share of PE cycles (%; categories overlap)")
    stalls.set_title(f"cycle breakdown, {report.total_pes} PE(s)", fontsize="medium")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
