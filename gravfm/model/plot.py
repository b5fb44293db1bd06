"""Plot of the predicted limits against the number of FPGAs (like the limit lines of the paper's Fig. 7)."""

import math

from ..architectures import architecture_info
from .prediction import LIMIT_DESCRIPTIONS
from .units import to_mteps

__all__ = ["plot_sweep", "y_top", "TOP_FACTOR"]

#: The y axis reaches this factor above the highest predicted T_sys (unless every limit stays lower):
#: the network limits at small n are orders of magnitude above the rest and would flatten it.
TOP_FACTOR = 3.0

_STYLES = {
    "L_PE": {"color": "tab:blue", "linestyle": "--"},
    "L_mem": {"color": "tab:green", "linestyle": "--"},
    "L_if": {"color": "tab:red", "linestyle": ":"},
    "L_net": {"color": "tab:purple", "linestyle": ":"},
    "L_if_node": {"color": "tab:orange", "linestyle": "-."},
    "L_net_node": {"color": "tab:brown", "linestyle": "-."},
    "L_intake": {"color": "tab:olive", "linestyle": "--"},
    "L_msgnet": {"color": "tab:cyan", "linestyle": "--"},
    "L_linkend": {"color": "tab:pink", "linestyle": ":"},
}


def y_top(t_sys, curves):
    """Top of the y axis (MTEPS): :data:`TOP_FACTOR` x the highest T_sys, raised so that every
    limit curve shows at least its lowest point, lowered to the highest finite value (plus a
    margin) when everything is below; unbounded limits never count."""
    finite = [[value for value in values if math.isfinite(value)] for values in curves]
    top = TOP_FACTOR * max(t_sys)
    top = max([top] + [1.1 * min(values) for values in finite if values])
    highest = max([max(t_sys)] + [max(values) for values in finite if values])
    return min(top, 1.05 * highest)


def plot_sweep(predictions, path, *, title=None, max_fpgas=None):
    """Write a PNG of every limit and of T_sys (MTEPS) against n_FPGA.

    Parameters
    ----------
    predictions : list of Prediction
        One per number of FPGAs, e.g. from :func:`gravfm.model.sweep`.
    path : str or os.PathLike
        Output file (PNG).
    title : str, optional
        Figure title; by default names the platform, algorithm and architecture.
    max_fpgas : int, optional
        FPGAs the platform has; larger n are shaded as extrapolation.
    """
    import matplotlib  # deferred: matplotlib (only when plotting)

    matplotlib.use("Agg")  # files only: never open a window, works without a display
    from matplotlib import pyplot as plt  # deferred: matplotlib (only when plotting)

    fpgas = [prediction.fpgas for prediction in predictions]
    t_sys = [prediction.t_sys_mteps for prediction in predictions]
    figure, axes = plt.subplots(figsize=(7.2, 5.6))
    names = [name for name in LIMIT_DESCRIPTIONS if any(name in p.limits for p in predictions)]
    curves = {name: [to_mteps(p.limits[name]) if name in p.limits else math.nan for p in predictions]
              for name in names}
    top = y_top(t_sys, curves.values())
    for name, values in curves.items():
        style = _STYLES.get(name, {})
        axes.plot(fpgas, [value if math.isfinite(value) else math.nan for value in values],
                  label=f"{name}: {LIMIT_DESCRIPTIONS[name]}", zorder=3, **style)
        # Off the scale (unbounded, e.g. L_if on one FPGA, or above the top): a mark on the top edge.
        above = [n for n, value in zip(fpgas, values) if value > top]
        if above:
            axes.plot(above, [top] * len(above), linestyle="none", marker="^", markersize=7, clip_on=False,
                      zorder=4, color=style.get("color"))
    # T_sys is the lowest limit, so it is drawn wide and pale underneath the limit lines.
    axes.plot(fpgas, t_sys, color="black", alpha=0.3, linewidth=6, marker="o", zorder=2,
              label="predicted T_sys = min(limits)")
    if max_fpgas is not None and max(fpgas) > max_fpgas:
        axes.axvspan(max_fpgas + 0.5, max(fpgas) + 0.5, color="grey", alpha=0.12, zorder=1,
                     label=f"beyond the platform's {max_fpgas} FPGAs")
    axes.plot([], [], linestyle="none", marker="^", color="grey", label="limit above the scale")
    axes.set_ylim(0, top)
    axes.set_xticks(fpgas)
    axes.set_xlabel("Number of FPGAs")
    axes.set_ylabel("Predicted throughput (MTEPS)")
    first = predictions[0]
    axes.set_title(title or f"Model prediction: {first.platform}, {first.algorithm}, "
                            f"{architecture_info(first.arch).title}, {first.pes} PEs/FPGA")
    axes.grid(True, alpha=0.3)
    # Below the axes: inside, it would hide the curves it names.
    axes.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=120)
    plt.close(figure)
