"""One PNG per experiment, in the paper's layout: a panel per algorithm (WCC, BFS, PageRank),
measured points as markers joined by solid lines, the model's limits as dashed lines, every
legend entry labelled "measured" or "predicted".

``plot_<name>(experiment, results, path)`` draws one experiment; :func:`plot` dispatches.
Only verified points are drawn (failed ones are listed in REPORT.md).
"""

from ..architectures import architecture_info
from .claims import _wd, degree, good

__all__ = ["plot"]

PANELS = {"wcc": "WCC", "bfs": "BFS", "pagerank": "PageRank"}
MTEPS = "System throughput (MTEPS)"


def plot(experiment, results, path):
    """Write the PNG of ``experiment`` to ``path``."""
    import matplotlib  # deferred: matplotlib (only when plotting)

    matplotlib.use("Agg")  # files only, no display needed
    globals()[f"plot_{experiment.plot}"](experiment, results, path)


def _figure(panels, title):
    from matplotlib import pyplot as plt  # deferred: matplotlib (only when plotting)

    figure, axes = plt.subplots(1, len(panels), figsize=(max(6.4, 4.6 * len(panels)), 4.2), squeeze=False)
    figure.suptitle(title, fontsize="medium")
    return figure, axes[0]


def _save(figure, axes, path):
    from matplotlib import pyplot as plt  # deferred: matplotlib (only when plotting)

    for ax in axes:
        ax.grid(True, alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(fontsize="x-small")
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=110)
    plt.close(figure)


def _panels(experiment, results, path, *, x, xlabel, series, lines=(), xlog=False):
    """The generic three-panel figure.

    ``x(result)`` and ``series(point)`` place a measured marker; ``lines`` are
    ``(label, select(point) -> bool, y(result) -> MTEPS or None, style)`` drawn per panel
    from the results' model predictions.
    """
    ok = good(results)
    algorithms = [a for a in PANELS if any(r["point"]["algorithm"] == a for r in results)] or ["wcc"]
    figure, axes = _figure(algorithms, f"{experiment.name}: {experiment.title}")
    for ax, algorithm in zip(axes, algorithms):
        mine = [r for r in ok if r["point"]["algorithm"] == algorithm]
        for name in dict.fromkeys(series(r["point"]) for r in mine):
            rows = sorted((x(r), r["measured"]["mteps"]) for r in mine if series(r["point"]) == name)
            ax.plot([a for a, _ in rows], [b for _, b in rows], marker="o", label=f"{name} (measured)")
        for label, select, y, style in lines:
            rows = sorted((x(r), y(r)) for r in mine if select(r["point"]) and y(r) is not None)
            if rows:
                ax.plot([a for a, _ in rows], [b for _, b in rows], linestyle="--", marker="_", markersize=12,
                        label=f"{label} (predicted)", **style)
        ax.set_title(PANELS[algorithm])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(MTEPS)
        ax.set_ylim(bottom=0)
        if xlog:
            ax.set_xscale("log", base=2)
        xs = sorted({x(r) for r in mine})
        if xs and not xlog:
            ax.set_xticks(xs)
    _save(figure, axes, path)


def _limit(name, *, hardware_sizes=False):
    """A model limit of a result; ``hardware_sizes``: the model with the simulated hardware's
    item sizes (:func:`gravfm.reproduce.points.run_point`'s ``model.hardware_sizes``) when there."""
    def limit(r):
        sized = r["model"].get("hardware_sizes") if hardware_sizes else None
        return ((sized or {}).get("limits_mteps") or r["model"]["limits_mteps"]).get(name)
    return limit


def _arch(point):
    return architecture_info(point["arch"]).title


def _broadcasts(point):
    """GraVF-M's points (update broadcast), not GraVF's."""
    return architecture_info(point["arch"]).broadcasts


def plot_fig7(experiment, results, path):
    _panels(experiment, results, path, x=lambda r: r["point"]["fpgas"], xlabel="Number of FPGAs", series=_arch,
            lines=[("computation limit L_PE", _broadcasts, _limit("L_PE"), {"color": "black"}),
                   ("network interface limit for GraVF L_if (hardware's item sizes)", lambda p: not _broadcasts(p),
                    _limit("L_if", hardware_sizes=True), {"color": "tab:red"})])


def plot_fig8(experiment, results, path):
    memory = {"offchip": "HMC", "onchip": "BRAM"}
    _panels(experiment, results, path, x=lambda r: r["point"]["pes"], xlabel="Number of PEs",
            series=lambda p: f"{_arch(p)} with {memory[p['edge_memory']]}",
            lines=[("computation limit L_PE", lambda p: _broadcasts(p) and p["edge_memory"] == "onchip",
                    _limit("L_PE"), {"color": "black"})])


def plot_fig9(experiment, results, path):
    _panels(experiment, results, path, x=degree, xlabel="Average degree |E|/|V| of the graph generated", series=lambda p: f"GraVF-M {p['fpgas']} FPGAs", xlog=True,
            lines=[("computation limit L_PE", lambda p: True, _limit("L_PE"), {"color": "black"}),
                   ("network interface limit L_if", lambda p: True, _limit("L_if"), {"color": "tab:red"}),
                   ("model T_sys", lambda p: True, lambda r: r["model"]["mteps"], {"color": "grey"})])


def plot_road(experiment, results, path):
    _bars(experiment, results, path, xlabel="Algorithm",
          paper={PANELS[a]: v for a, v in experiment.paper.items()}, paper_label="paper, 4 x 9 PEs")


def plot_fig11(experiment, results, path):
    _panels(experiment, results, path, x=lambda r: _wd(r["point"]["graph"])[0],
            xlabel="w: active vertices per superstep (w x d constant)", series=lambda p: "GraVF-M BFS", xlog=True,
            lines=[("superstep-aware model", lambda p: True,
                    lambda r: (r["model"].get("supersteps") or {}).get("mteps"), {"color": "tab:green"}),
                   ("steady-state model T_sys", lambda p: True, lambda r: r["model"]["mteps"], {"color": "grey"})])


def _partitions(experiment, results, path, *, axis, xlabel):
    names = {"round_robin": "Round-robin", "greedy": "Greedy edge", "metis": "METIS"}
    _panels(experiment, results, path, x=lambda r: r["point"][axis], xlabel=xlabel,
            series=lambda p: names[p["partition"]],
            lines=[("computation limit L_PE", lambda p: p["partition"] == "greedy", _limit("L_PE"),
                    {"color": "black"})])


def plot_fig12(experiment, results, path):
    _partitions(experiment, results, path, axis="pes", xlabel="Number of PEs")


def plot_fig13(experiment, results, path):
    _partitions(experiment, results, path, axis="fpgas", xlabel="Number of FPGAs")


def plot_table2(experiment, results, path):
    """A panel per link setting (the platform's, and scaled): per FPGA count the measured send and
    receive bandwidth per FPGA (the least over the FPGAs) beside the setting (the platform file's
    figure, an input of the simulation) and the one-item-per-cycle limit."""
    rows = [(r["point"], r["measured"]["link"]) for r in good(results)
            if r["measured"]["link"] and "setting_gib_s" in r["measured"]["link"]]
    scales = sorted({p["link_scale"] for p, _ in rows}, reverse=True) or [1.0]
    figure, axes = _figure(scales, f"{experiment.name}: {experiment.title}")
    width = 0.2
    for ax, scale in zip(axes, scales):
        mine = sorted(((p["fpgas"], link) for p, link in rows if p["link_scale"] == scale), key=lambda r: r[0])
        xs = [n for n, _ in mine]
        bars = (("send (measured, least FPGA)", lambda link: min(link["send_gib_s"]), None),
                ("receive (measured, least FPGA)", lambda link: min(link["receive_gib_s"]), None),
                ("link setting (platform file" + (", = paper Table 2)" if scale == 1.0 else f" x{scale:g})"),
                 lambda link: link["setting_gib_s"], "grey"),
                ("one item per cycle (simulated link's limit)", lambda link: link["item_rate_gib_s"], "lightgrey"))
        for k, (label, value, colour) in enumerate(bars):
            ax.bar([x + (k - 1.5) * width for x in xs], [value(link) for _, link in mine], width, label=label,
                   color=colour)
        ax.set_xticks(xs)
        ax.set_title(f"links x{scale:g}", fontsize="small")
        ax.set_xlabel("FPGAs (each sends to all others)")
        ax.set_ylabel("Bandwidth per FPGA (GiB/s)")
    _save(figure, axes, path)


def plot_table3(experiment, results, path):
    _bars(experiment, results, path, xlabel="Algorithm",
          paper={PANELS[a]: v[0] for a, v in experiment.paper.items()}, paper_label="paper GraVF-M, 4 x 9 PEs",
          other={PANELS[a]: v[1] for a, v in experiment.paper.items()}, other_label="paper ForeGraph")


def _bars(experiment, results, path, *, xlabel, paper, paper_label, other=None, other_label=None):
    """Measured and predicted MTEPS per algorithm beside the paper's figures."""
    from matplotlib import pyplot as plt  # deferred: matplotlib (only when plotting)

    ok = {PANELS[r["point"]["algorithm"]]: r for r in good(results)}
    names = [n for n in PANELS.values() if n in paper]
    figure, ax = plt.subplots(figsize=(7.2, 4.4))
    size = next(iter(ok.values()))["point"] if ok else None
    figure.suptitle(f"{experiment.name}: {experiment.title}", fontsize="medium")
    ours = f" ({size['fpgas']} x {size['pes']} PEs)" if size else ""

    def figure_of(name, get):
        return (get(ok[name]) or 0) if name in ok else 0

    bars = [(f"gravfm{ours} (measured)", lambda r: r["measured"]["mteps"], {}),
            (f"model T_sys{ours} (predicted)", lambda r: r["model"]["mteps"], {"hatch": "//", "alpha": 0.6}),
            ("superstep-aware model (predicted)", lambda r: (r["model"].get("supersteps") or {}).get("mteps"),
             {"hatch": "..", "alpha": 0.6})]
    columns = [(label, [figure_of(n, get) for n in names], style) for label, get, style in bars]
    columns.append((paper_label, [paper[n] for n in names], {"color": "grey"}))
    if other:
        columns.append((other_label, [other[n] for n in names], {"color": "lightgrey"}))
    width = 0.8 / len(columns)
    for i, (label, values, style) in enumerate(columns):
        ax.bar([x + (i - (len(columns) - 1) / 2) * width for x in range(len(names))], values, width, label=label,
               **style)
    ax.set_xticks(list(range(len(names))), names)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(MTEPS + ", log scale")
    ax.set_yscale("log")  # a small simulated system beside the paper's 4 x 9
    _save(figure, [ax], path)
