"""Plot of the predicted limits against the number of FPGAs (like the limit lines of the paper's Fig. 7)."""

import math

from .predict import LIMIT_DESCRIPTIONS
from .units import to_mteps

__all__ = ["plot_sweep"]

_STYLES = {
    "L_PE": {"color": "tab:blue", "linestyle": "--"},
    "L_mem": {"color": "tab:green", "linestyle": "--"},
    "L_if": {"color": "tab:red", "linestyle": ":"},
    "L_net": {"color": "tab:purple", "linestyle": ":"},
    "L_if_node": {"color": "tab:orange", "linestyle": "-."},
    "L_net_node": {"color": "tab:brown", "linestyle": "-."},
}


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
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window, works without a display
    from matplotlib import pyplot as plt

    fpgas = [prediction.fpgas for prediction in predictions]
    t_sys = [prediction.t_sys_mteps for prediction in predictions]
    figure, axes = plt.subplots(figsize=(6.4, 4.2))
    names = [name for name in LIMIT_DESCRIPTIONS if any(name in p.limits for p in predictions)]
    for name in names:
        values = [to_mteps(p.limits[name]) if name in p.limits and not math.isinf(p.limits[name])
                  else math.nan for p in predictions]
        axes.plot(fpgas, values, label=f"{name}: {LIMIT_DESCRIPTIONS[name]}", zorder=3,
                  **_STYLES.get(name, {}))
    # T_sys is the lowest limit, so it is drawn wide and pale underneath the limit lines.
    axes.plot(fpgas, t_sys, color="black", alpha=0.3, linewidth=6, marker="o", zorder=2,
              label="predicted T_sys = min(limits)")
    if max_fpgas is not None and max(fpgas) > max_fpgas:
        axes.axvspan(max_fpgas + 0.5, max(fpgas) + 0.5, color="grey", alpha=0.12, zorder=1,
                     label=f"beyond the platform's {max_fpgas} FPGAs")
    top = max(t_sys) * 2.0  # network limits at small n dwarf the rest; keep T_sys readable
    axes.set_ylim(0, top)
    axes.set_xticks(fpgas)
    axes.set_xlabel("Number of FPGAs")
    axes.set_ylabel("Predicted throughput (MTEPS)")
    first = predictions[0]
    axes.set_title(title or f"Model prediction: {first.platform}, {first.algorithm}, "
                            f"{'GraVF-M' if first.arch == 'gravfm' else 'GraVF'}, {first.pes} PEs/FPGA")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=120)
    plt.close(figure)
