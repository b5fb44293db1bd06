"""The paper's claims checked against measured points.

Each ``check_<name>(experiment, results)`` returns a :class:`Claim`: the paper's claim, the
measured value (from simulation; model figures named as predictions), whether it holds and why.
``holds`` is None when the points needed are missing or failed: nothing is claimed then.
Only verified points count.
"""

import statistics
from dataclasses import dataclass

from ..architectures import GRAVF, GRAVFM
from ..flow.planning import default_update_lanes
from ..graph.spec import parse_spec
from ..model import algorithm_params, load_platform, predict
from .diagnosis import memory_wait, sparse_supersteps

__all__ = ["Claim", "check"]


@dataclass(frozen=True)
class Claim:
    claim: str
    measured: str
    holds: bool | None
    reason: str

    def to_dict(self):
        return {"claim": self.claim, "measured": self.measured, "holds": self.holds, "reason": self.reason}


def check(experiment, results):
    """The :class:`Claim` of ``experiment`` for its ``results``."""
    return globals()[f"check_{experiment.check}"](experiment, results)


def good(results, **fields):
    """Verified points whose configuration has ``fields``."""
    return [r for r in results if r["status"] == "ok" and r["verified"]
            and all(r["point"][k] == v for k, v in fields.items())]


def mteps(results, **fields):
    """Measured MTEPS of the one verified point with ``fields``, or None."""
    found = good(results, **fields)
    return found[0]["measured"]["mteps"] if found else None


def _missing(experiment, what):
    return Claim(experiment.claim, "not measured", None, f"no verified point for {what}")


def _ratios(experiment, results, field, top, bottom, **fixed):
    """{algorithm: measured(top) / measured(bottom)} where both were measured."""
    ratios = {}
    for algorithm in ("wcc", "bfs", "pagerank"):
        a = mteps(results, algorithm=algorithm, **{field: top}, **fixed)
        b = mteps(results, algorithm=algorithm, **{field: bottom}, **fixed)
        if a and b:
            ratios[algorithm] = a / b
    return ratios


def _fmt(ratios, suffix="x"):
    return ", ".join(f"{k} {v:.2f}{suffix}" for k, v in ratios.items())


def check_fig7(experiment, results):
    n = max((r["point"]["fpgas"] for r in good(results)), default=None)
    if n is None or n == 1:
        return _missing(experiment, "several FPGAs")
    ratios = _ratios(experiment, results, "arch", GRAVFM.name, GRAVF.name, fpgas=n)
    if not ratios:
        return _missing(experiment, f"both architectures on {n} FPGAs")
    predicted, sized = {}, set()
    for algorithm in ratios:
        pair = [good(results, algorithm=algorithm, fpgas=n, arch=arch)[0]["model"] for arch in (GRAVFM.name, GRAVF.name)]
        if all(model.get("hardware_sizes") for model in pair):  # the simulated machine's own item sizes
            pair = [model["hardware_sizes"] for model in pair]
            sized.add(algorithm)
        m, f = (model["mteps"] for model in pair)
        predicted[algorithm] = m / f if m and f else float("nan")
    holds = all(2.0 <= v < 4.0 for v in ratios.values()) and n == 4
    reason = (f"GraVF-M / GraVF measured on {n} FPGAs: {_fmt(ratios)}; the model predicts {_fmt(predicted)}"
              + (" (with the simulated hardware's item sizes)" if sized else ""))
    if n != 4:
        reason += f"; the claim is about 4 FPGAs, the most measured here is {n}"
    elif not holds and min(ratios.values()) < 2:
        below = [a for a, v in ratios.items() if v < 2]
        reason += (f"; below 2x ({', '.join(below)})" + _gravf_links(results, n, below)
                   + "; the model itself predicts " + _fmt({a: _paper_ratio(results, a, n) for a in below})
                   + " for the paper's 4 x 9 system with its 32-bit ids"
                   + (" (BFS messages carry ids only: small)" if "bfs" in below else ""))
    if not holds:
        reason += _memory_bound(results, arch=GRAVFM.name, fpgas=n)
    return Claim(experiment.claim, f"{_fmt(ratios)} faster on {n} FPGAs (measured)", holds, reason)


def _memory_bound(results, **fields):
    """Why the off-chip points with ``fields`` stayed below the model, from their memory counters
    (measured): the ones whose PEs waited for memory 5% of their cycles or more; "" if none."""
    parts = []
    for r in good(results, edge_memory="offchip", **fields):
        wait, model = memory_wait(r), r["model"].get("mteps")
        if wait and wait.wait_share >= 0.05:
            share = f", {100 * r['measured']['mteps'] / model:.0f}% of the model's limit" if model else ""
            parts.append(f"{r['point']['algorithm']} {r['point']['arch']} {r['point']['fpgas']} x {r['point']['pes']}"
                         f" {r['measured']['mteps']:.0f} MTEPS{share}: {wait.describe()}; the model's L_in_flight "
                         f"{_in_flight_mteps(r):.0f} MTEPS")
    if not parts:
        return ""
    return ("; the off-chip edge reads bind (measured counters: a vertex's list split over more PEs gives each a "
            "shorter one, so more requests per edge; the model's T_sys leaves the requests in flight out, its "
            "L_in_flight is Little's law with one word a request, a lower bound): " + "; ".join(parts))


def _sparse(results):
    """The GraVF-M points' supersteps that ran far below their best rate, from the per-superstep
    rows (measured); "" if none."""
    parts = []
    for r in good(results, arch=GRAVFM.name):
        lanes = default_update_lanes(GRAVFM.name, r["point"]["fpgas"], r["point"]["pes"])
        steps = sparse_supersteps(r, lanes)
        if steps:
            parts.append(f"{r['point']['algorithm']} " + "; ".join(step.describe() for step in steps))
    if not parts:
        return ""
    return ("; supersteps with few edges per update run far below the others (per-superstep rows, measured): "
            + "; ".join(parts))


def _in_flight_mteps(result):
    """The model's L_in_flight for a point's configuration (a prediction)."""
    point, measured = result["point"], result["measured"]
    prediction = predict(load_platform(point["platform"]), algorithm_params(point["algorithm"]), measured["vertices"],
                         measured["edges"], fpgas=point["fpgas"], pes=point["pes"], arch=point["arch"])
    return prediction.details.get("L_in_flight_mteps", float("nan"))


def _gravf_links(results, n, algorithms):
    """What GraVF's links did on ``n`` FPGAs (measured): items per link-cycle (a simulated link
    moves at most one), the share of link-cycles its bandwidth gate stopped, bytes per edge."""
    parts = []
    for r in good(results, arch=GRAVF.name, fpgas=n):
        link, cycles = r["measured"].get("link"), r["measured"].get("cycles")
        if link and cycles and r["point"]["algorithm"] in algorithms:
            link_cycles = n * (n - 1) * cycles
            parts.append(f"{r['point']['algorithm']} {link['items'] / link_cycles:.2f} items per link-cycle, "
                         f"bandwidth gate {100 * link['link_bound_cycles'] / link_cycles:.0f}% of link-cycles, "
                         f"{link['bytes_per_edge']:.2f} B per edge")
    if not parts:
        return ""
    return (" measured GraVF's links carry " + "; ".join(parts) + ": GraVF is bound by its links' item rate (one "
            "item a cycle; the model counts their bytes) as the paper's is by their bandwidth")


def _paper_ratio(results, algorithm, n):
    """The model's GraVF-M / GraVF for the paper's system (9 PEs per FPGA, the platform's links,
    the paper's sizes) on the measured graph: a prediction."""
    r = good(results, algorithm=algorithm, fpgas=n)[0]
    platform, params = load_platform(r["point"]["platform"]), algorithm_params(algorithm)
    vertices, edges = r["measured"]["vertices"], r["measured"]["edges"]
    m, f = (predict(platform, params, vertices, edges, fpgas=n, pes=9, arch=arch).t_sys for arch in (GRAVFM.name, GRAVF.name))
    return m / f


def check_fig8(experiment, results):
    p = max((r["point"]["pes"] for r in good(results, fpgas=1)), default=None)
    if p is None:
        return _missing(experiment, "one FPGA")
    bram = _ratios(experiment, results, "arch", GRAVFM.name, GRAVF.name, fpgas=1, pes=p, edge_memory="onchip")
    hmc = _ratios(experiment, results, "arch", GRAVFM.name, GRAVF.name, fpgas=1, pes=p, edge_memory="offchip")
    if not bram or not hmc:
        return _missing(experiment, f"both architectures with both edge memories at {p} PEs")
    slower = all(v < 1.0 for v in bram.values())
    regains = all(hmc[a] >= bram[a] for a in bram if a in hmc)
    measured = f"GraVF-M / GraVF at {p} PEs: BRAM {_fmt(bram)}; HMC {_fmt(hmc)} (measured)"
    reason = ("GraVF-M slower with BRAM" if slower else "GraVF-M is not slower than GraVF with BRAM here") + \
             ("; the HMC ratio is at least the BRAM ratio" if regains else
              "; HMC does not regain the gap here" + _memory_bound(results, fpgas=1, pes=p, arch=GRAVFM.name))
    if not slower:
        # The paper's cost: every GraVF-M PE looks at every update for the few edges it holds.
        m = good(results, fpgas=1, pes=p, arch=GRAVFM.name, edge_memory="onchip")[0]["measured"]
        f = good(results, fpgas=1, pes=p, arch=GRAVF.name, edge_memory="onchip")[0]["measured"]
        per_pe = [r["messages"] / r["cycles"] / p for r in (m, f)]
        lanes = default_update_lanes(GRAVFM.name, 1, p)
        reason += (f" (the paper's cost is a GraVF-M PE taking every update of the system for its share of the "
                   f"edges, here {m['edges'] / m['vertices'] / p:.1f} per update and PE (the paper's: 32 / 8 = 4); "
                   f"measured on chip, a GraVF-M PE traverses {per_pe[0]:.2f} edges a cycle, a GraVF PE "
                   f"{per_pe[1]:.2f}: the simulated PE takes {lanes} updates a cycle and drops empty lists "
                   "without a cycle, so it does not pay that cost)")
    return Claim(experiment.claim, measured, slower and regains, reason)


def check_fig9(experiment, results):
    verdicts, parts = [], []
    for algorithm in ("wcc", "bfs", "pagerank"):
        rows = sorted(((degree(r), r) for r in good(results, algorithm=algorithm)), key=lambda row: row[0])
        if len(rows) < 2:
            continue
        values = [r["measured"]["mteps"] for _, r in rows]
        # 5% tolerance: the paper itself sees variation at low degree (BFS is shape-sensitive).
        grows = all(b >= 0.95 * a for a, b in zip(values, values[1:]))
        top = rows[-1][1]["model"]
        compute_first = top.get("bottleneck") in ("L_PE", "L_mem")
        verdicts.append(grows and compute_first)
        parts.append(f"{algorithm}: " + ", ".join(f"deg {d:.0f}: {v:.0f}" for (d, _), v in zip(rows, values)) +
                     f" MTEPS; model bottleneck at the top degree {top.get('bottleneck')}")
    if not verdicts:
        return _missing(experiment, "two or more degrees")
    return Claim(experiment.claim, "; ".join(parts) + " (measured; bottleneck predicted)", all(verdicts),
                 "holds when MTEPS never falls (5% tolerance) as the degree grows and the model names the "
                 "computation (or memory) limit at the highest degree")


def degree(result):
    """The graph's nominal average degree (its spec's ``deg``), else |E|/|V| as run (WCC runs on
    the symmetrized graph, twice the edges)."""
    return spec_fields(result["point"]["graph"]).get("deg") or result["measured"]["edges"] / result["measured"]["vertices"]


def check_road(experiment, results):
    values = {a: mteps(results, algorithm=a) for a in ("wcc", "bfs", "pagerank")}
    if None in values.values():
        return _missing(experiment, "every algorithm on the road graph")
    paper = experiment.paper
    measured = ", ".join(f"{a} {v:.0f} MTEPS (paper {paper[a]})" for a, v in values.items())
    size = good(results)[0]["point"]
    lowest = min(values, key=values.get) == "bfs"
    return Claim(experiment.claim, f"{measured}, on {size['fpgas']} x {size['pes']} PEs (measured)", lowest,
                 "BFS is the lowest of the three, as in the paper" if lowest else
                 "BFS is not the lowest here; the absolute figures depend on the system size "
                 f"({size['fpgas']} x {size['pes']} PEs vs the paper's 4 x 9) and graph")


def check_fig11(experiment, results):
    rows = sorted(((_wd(r["point"]["graph"]), r) for r in good(results)), key=lambda row: row[0], reverse=True)
    if len(rows) < 2:
        return _missing(experiment, "two or more w x d graphs")
    values = [r["measured"]["mteps"] for _, r in rows]
    best = max(values)
    knee = next((w for ((w, _), _), v in zip(rows, values) if v < 0.9 * best), None)
    falls = values[-1] < 0.9 * values[0]
    model = [r["model"]["supersteps"]["mteps"] for _, r in rows if r["model"].get("supersteps")]
    measured = ", ".join(f"w={w}: {v:.0f}" for ((w, _), _), v in zip(rows, values)) + " MTEPS (measured)"
    reason = (f"throughput falls below 90% of the best from w = {knee} active vertices per superstep down"
              if knee else "throughput never falls below 90% of the best")
    if model:
        reason += "; superstep-aware model (prediction): " + ", ".join(f"{v:.0f}" for v in model) + " MTEPS"
    reason += ("; the knee moves with the system size and latency, so ~2k is the paper's 4 x 9 figure"
               if rows[0][1]["point"]["pes"] != 9 else "")
    return Claim(experiment.claim, measured, falls, reason)


def spec_fields(spec):
    """Integer fields of a generator spec (``uniform:n=1024,deg=16`` -> n, deg), {} for a file."""
    parsed = parse_spec(spec)
    return {k: int(v) for k, v in parsed[1].items() if v.isdigit()} if parsed else {}


def _wd(spec):
    fields = spec_fields(spec)
    return fields["w"], fields["d"]


def versus(results, field, top, bottom):
    """``(point, MTEPS ratio)`` for each verified point with ``field = top`` whose twin (the same
    point with ``field = bottom``) was verified too."""
    pairs = []
    for r in good(results, **{field: top}):
        twin = {**r["point"], field: bottom}
        found = [o for o in good(results) if o["point"] == twin]
        if found:
            pairs.append((r["point"], r["measured"]["mteps"] / found[0]["measured"]["mteps"]))
    return pairs


def _partition_ratios(experiment, results, other, axis, unit):
    pairs = versus(results, "partition", "greedy", other)
    measured = ", ".join(f"{p['algorithm']} {p[axis]} {unit} {v:.3f}x" for p, v in pairs)
    return [v for _, v in pairs], measured


def check_fig12(experiment, results):
    ratios, measured = _partition_ratios(experiment, results, "round_robin", "pes", "PEs")
    if not ratios:
        return _missing(experiment, "both partitionings")
    mean, worst = statistics.fmean(ratios), min(ratios)
    return Claim(experiment.claim, measured + " greedy / round-robin (measured)", mean >= 1.0 and worst >= 0.95,
                 f"mean greedy / round-robin {mean:.3f}, worst {worst:.3f}: holds when the mean is >= 1 and no point "
                 "is more than 5% behind")


def check_fig13(experiment, results):
    ratios, measured = _partition_ratios(experiment, results, "metis", "fpgas", "FPGAs")
    if not ratios:
        return _missing(experiment, "both partitionings")
    worst = min(ratios)
    return Claim(experiment.claim, measured + " greedy / METIS (measured)", worst >= 0.95,
                 f"worst greedy / METIS {worst:.3f} (within 5%: >= 0.95)")


def check_table2(experiment, results):
    rows = []   # (result, link figures, the link's limit: the smaller of its setting and one item per cycle)
    for r in sorted(good(results), key=lambda r: (-r["point"]["link_scale"], r["point"]["fpgas"])):
        link = r["measured"]["link"]
        if link and "setting_gib_s" in link:
            rows.append((r, link, min(link["setting_gib_s"], link["item_rate_gib_s"])))
    if not rows:
        return _missing(experiment, "several FPGAs")
    paper, parts = experiment.paper, []
    for r, link, _ in rows:
        point, n = r["point"], r["point"]["fpgas"]
        binds = "bandwidth" if link["setting_gib_s"] <= link["item_rate_gib_s"] else "one item per cycle"
        parts.append(f"{n} FPGAs, links x{point['link_scale']:g}: send {min(link['send_gib_s']):.2f}-"
                     f"{max(link['send_gib_s']):.2f}, receive {min(link['receive_gib_s']):.2f}-"
                     f"{max(link['receive_gib_s']):.2f} GiB/s per FPGA (setting {link['setting_gib_s']:.2f}"
                     + (f" = paper {paper[n]}" if point["link_scale"] == 1.0 else "")
                     + f", {link['item_bits']}-bit items at one per cycle {link['item_rate_gib_s']:.2f}: {binds} binds)")
    measured = "; ".join(parts) + " (measured: link bits over the whole run at the platform clock)"
    if any(max(link["send_gib_s"] + link["receive_gib_s"]) > link["setting_gib_s"] * 1.001 for _, link, _ in rows):
        return Claim(experiment.claim, measured, False, "a simulated link carried more than its bandwidth setting")
    fill, emptiest = min(((min(link["send_gib_s"] + link["receive_gib_s"]) / limit, r) for r, link, limit in rows),
                         key=lambda row: row[0])
    idle = (1 - fill) * emptiest["measured"]["cycles"] / max(1, emptiest["measured"].get("supersteps") or 1)
    gate = [min(link["send_gib_s"]) / link["setting_gib_s"] for _, link, _ in rows
            if link["setting_gib_s"] <= link["item_rate_gib_s"]]
    reason = (f"every FPGA sends and receives at least {100 * fill:.0f}% of its links' limit (the smaller of the "
              "bandwidth setting and one item per cycle) and never more than the setting"
              + (f"; where the bandwidth binds, at least {100 * min(gate):.0f}% of the setting" if gate else "")
              + f". The rest of the run (at the least filled point ~{idle:.0f} cycles per superstep) is the "
                "supersteps' synchronisation, when the links idle (PageRank's floating-point pipelines are hundreds "
                "of cycles deep). This checks the simulated link model, whose bandwidth is the platform file's "
                "Table 2 figure (an input), not PCIe hardware: at that setting the simulated items are narrower "
                "than a cycle's bandwidth and one item per cycle binds first, so they cannot carry the paper's "
                "GiB/s; the points at a fraction of the setting show the bandwidth gate delivering it")
    # Over the whole run, including every superstep's synchronisation: 80%.
    return Claim(experiment.claim, measured, fill >= 0.8, reason)


def check_table3(experiment, results):
    parts, fractions, steps = [], [], []
    for algorithm, (gravfm, foregraph) in experiment.paper.items():
        found = good(results, algorithm=algorithm)
        if not found:
            continue
        r = found[0]
        value, model = r["measured"]["mteps"], r["model"]["mteps"]
        fractions.append(value / model if model else 0.0)
        parts.append(f"{algorithm} {value:.0f} MTEPS (model {model:.0f}, {100 * fractions[-1]:.0f}%; paper {gravfm}, "
                     f"ForeGraph {foregraph})")
        superstep = r["model"].get("supersteps") or {}
        if superstep.get("mteps"):
            steps.append(f"{algorithm} {superstep['mteps']:.0f}")
    if not parts:
        return _missing(experiment, "the peak configuration")
    size = good(results)[0]["point"]
    holds = min(fractions) >= 0.94
    reason = (f"measured / model limit is {', '.join(f'{100 * f:.0f}%' for f in fractions)}: "
              + ("at least 94%, as in the paper" if holds else "below the paper's 94%"))
    if steps and not holds:
        reason += (f"; with each superstep's synchronization latency the model predicts {', '.join(steps)} MTEPS "
                   "(superstep-aware, gravfm.model.supersteps): a small graph has too little work per superstep "
                   "to reach the steady-state limit")
    if not holds:
        reason += _sparse(results) + _memory_bound(results)
    if size["pes"] != 9:
        reason += "; absolute MTEPS scale with the PEs"
    return Claim(experiment.claim, "; ".join(parts) + f" on {size['fpgas']} x {size['pes']} PEs (measured; model "
                 "figures predicted)", holds, reason)
