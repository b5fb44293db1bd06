"""The outputs of ``gravfm reproduce``: one PNG per experiment, ``results.json`` and ``REPORT.md``.

REPORT.md puts, for each experiment, the paper's claim beside our measured value and whether it
holds (with the reason), then every point: its configuration, the measured MTEPS (simulation of
the generated RTL, answer verified against the software reference) and the model's prediction
(labelled so). Points that failed are listed with their error; an experiment without a verified
point is marked "not yet" with the reason.
"""

import datetime

from ..model import algorithm_params
from ..provenance import json_safe, provenance, write_results
from .claims import check
from .plots import plot

__all__ = ["write_outputs"]


def write_outputs(out, experiments, points_by_experiment, results, *, sizes, command):
    """Write the PNGs, results.json and REPORT.md into ``out``; return the claims by experiment.

    Everything written follows from the stored points and the code: the same points give the same
    bytes apart from the two timestamps (results.json's ``provenance.time_utc``, REPORT.md's "written"),
    whether the points were computed by this run or an earlier one (``--report-only``).
    """
    keys = list(dict.fromkeys(p.key() for points in points_by_experiment.values() for p in points))
    results = {key: results[key] for key in keys if key in results}
    claims, pngs = {}, {}
    for experiment in experiments:
        mine = [results[p.key()] for p in points_by_experiment[experiment.name] if p.key() in results]
        claims[experiment.name] = check(experiment, mine)
        if any(r["status"] == "ok" and r["verified"] for r in mine):
            pngs[experiment.name] = f"{experiment.name}.png"
            plot(experiment, mine, out / pngs[experiment.name])
    summary = _summary(keys, results)
    document = {
        "command": command, "mode": sizes.mode, "sizes": sizes.describe(),
        "measured": "figures under 'measured' come from simulating the generated RTL (Verilator); answers "
                    "verified against the software reference",
        "model": "figures under 'model' are predictions of the analytical model for the same configuration",
        "summary": summary,
        "experiments": {e.name: {"title": e.title, "claim": claims[e.name].to_dict(), "png": pngs.get(e.name),
                                 "points": [p.key() for p in points_by_experiment[e.name]]} for e in experiments},
        "points": [json_safe(r) for r in results.values()],
    }
    code = provenance(command=command)
    code.pop("machine")  # the report is not a measurement: each point records its own
    write_results({**document, "provenance": code}, out / "results.json", stream=None)
    (out / "REPORT.md").write_text(_markdown(experiments, points_by_experiment, results, claims, pngs, summary,
                                             sizes=sizes, command=command, code=code))
    return claims


def _summary(keys, results):
    """The points as stored: how many, verified, failed, not measured, and their wall time."""
    good = [r for r in results.values() if r["status"] == "ok" and r.get("verified")]
    return {"points": len(keys), "verified": len(good), "failed": len(results) - len(good),
            "missing": len(keys) - len(results), "point_wall_s": round(sum(r["wall_s"] for r in results.values()), 1),
            "git_revisions": sorted({r.get("git_revision") or "unknown" for r in results.values()})}


def _revision_note(results, code):
    """A sentence on the points measured with other code than this report's (reused ones)."""
    other = [r for r in results.values() if r.get("git_revision") != code["git_revision"] or r.get("git_dirty")]
    if not other:
        return ""
    return (f"  \n{len(other)} of {len(results)} points were measured with another git revision or uncommitted "
            "changes (each point's git_revision and git_dirty are in results.json).")


def _holds(claim):
    return {True: "yes", False: "no", None: "not yet"}[claim.holds]


def _markdown(experiments, points_by_experiment, results, claims, pngs, summary, *, sizes, command, code):
    missing = f", {summary['missing']} not measured yet" if summary["missing"] else ""
    lines = [
        "# GraVF-M reproduction report", "",
        f"Command: `{command}`  ",
        f"Mode: **{sizes.mode}** ({sizes.describe()}).  ",
        f"Code: git {code['git_revision'] or 'unknown'}{' (uncommitted changes)' if code['git_dirty'] else ''}; "
        f"written {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.  ",
        f"Points: {summary['points']} ({summary['verified']} verified, {summary['failed']} failed or unverified"
        f"{missing}), "
        f"{summary['point_wall_s'] / 3600:.2f} h of wall time in all (each point's own, its build key and git "
        f"revision in results.json)." + _revision_note(results, code), "",
        "**measured** = cycles of the Verilator simulation of the generated RTL at the platform clock, the "
        "answer verified against the software reference; **predicted** = the analytical model "
        "(gravfm.model) for the same configuration: its steady-state T_sys, and the superstep-aware figure "
        "that adds each superstep's synchronization latency (gravfm.model.supersteps). The paper's figures "
        "come from 4 FPGAs x 9 PEs with HMC edge memory on larger graphs, with 32-bit vertex ids; where our sizes are "
        "smaller (each experiment's **Sizes** line says where) the absolute MTEPS are not comparable, the claims' "
        "shapes and ratios are, and the model's prediction with the paper's item sizes stands beside each point.", "",
        "| experiment | claim (paper) | measured | holds |", "|---|---|---|---|",
    ]
    for e in experiments:
        claim = claims[e.name]
        lines.append(f"| {e.name} | {claim.claim} | {claim.measured} | {_holds(claim)} |")
    for e in experiments:
        claim = claims[e.name]
        mine = [results[p.key()] for p in points_by_experiment[e.name] if p.key() in results]
        lines += ["", f"## {e.name}: {e.title}", ""]
        if e.name in pngs:
            lines += [f"![{e.name}]({pngs[e.name]})", "",
                      "(each series is labelled measured, predicted or the paper's in its legend)", ""]
        lines += [f"- **Paper's claim:** {claim.claim}", f"- **Measured:** {claim.measured}",
                  f"- **Holds:** {_holds(claim)} — {claim.reason}"]
        sizes = _sizes(mine)
        lines += [f"- **Differs from the paper:** {e.note}"] if e.note else []
        lines += [f"- **Sizes:** {sizes}"] if sizes else []
        lines += [""]
        missing = len(points_by_experiment[e.name]) - len(mine)
        if not any(r["status"] == "ok" and r["verified"] for r in mine):
            lines += ["**Not yet:** no verified point in this run" +
                      (" (see the errors below)." if mine else " (no point was run)."), ""]
        if missing:
            lines += [f"{missing} of {len(points_by_experiment[e.name])} points not measured yet "
                      f"(the claim is checked on those measured).", ""]
        lines += ["| algorithm | graph | FPGAs x PEs | arch | partition | edge memory | links | measured MTEPS | "
                  "predicted MTEPS, the paper's item sizes (bottleneck) | predicted, the simulated item sizes | "
                  "predicted, superstep-aware | verified | wall s |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in mine:
            p = r["point"]
            if r["status"] == "ok":
                model = r["model"]
                figures = " | ".join([f"{r['measured']['mteps']:.1f}", _predicted(model),
                                      _predicted(model.get("hardware_sizes")), _predicted(model.get("supersteps"))])
                verified = "yes" if r["verified"] else f"NO: {r['measured']['detail']}"
            else:
                figures, verified = "failed | - | - | -", f"error: {r.get('error')}"
            lines.append(f"| {p['algorithm']} | `{p['graph']}` | {p['fpgas']} x {p['pes']} | {p['arch']} | "
                         f"{p['partition']} | {p['edge_memory']} | x{p.get('link_scale', 1.0):.3g} | {figures} | "
                         f"{verified} | {r['wall_s']:.0f} |")
    return "\n".join(lines) + "\n"


def _predicted(model):
    """A prediction's cell: its MTEPS (and bottleneck, if it names one), or "none"."""
    if not model or not model.get("mteps"):
        return "none"
    return f"{model['mteps']:.1f}" + (f" ({model['bottleneck']})" if model.get("bottleneck") else "")


def _sizes(results):
    """Where the measured points are smaller than the paper's: their graphs' sizes, and the items
    their vertex ids make on the links against the paper's 32-bit ids (the model with the paper's
    item sizes stands beside each point); "" without a measured point."""
    graphs, items = {}, {}
    for r in results:
        if r["status"] != "ok":
            continue
        graphs.setdefault(r["point"]["graph"], r["measured"]["vertices"])
        sized = r["model"].get("hardware_sizes")
        if sized:
            items[r["point"]["algorithm"], r["point"]["arch"]] = (sized["m_update"], sized["m_message"])
    if not graphs:
        return ""
    text = "graphs " + ", ".join(f"`{g.split('/')[-1]}` ({v:,} vertices)" for g, v in graphs.items())
    if items:
        text += ("; updates / messages on the links " +
                 ", ".join(f"{a} {arch} {u} / {m} bits (the paper's {algorithm_params(a).m_update} / "
                           f"{algorithm_params(a).m_message})" for (a, arch), (u, m) in sorted(items.items())) +
                 ": the simulated vertex ids are narrower than the paper's 32 bits, so each point's prediction "
                 "with the paper's item sizes stands beside the one with its own")
    return text
