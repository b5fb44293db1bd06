"""What a run's figures may be read as: the cycle breakdown with memory wait apart from work,
and the notes a report must carry so that no figure misleads (a run that did not finish has no
throughput; a root that reaches nothing traverses nothing).

Shared by the printed report, its JSON and the plot (``gravfm run``), one place for each rule.
"""

from ..errors import GravfmError
from ..model.algorithm_params import model_params
from ..model.supersteps import predict_supersteps

__all__ = ["BREAKDOWN_LABELS", "cycle_breakdown", "pe_cycles", "run_notes", "superstep_model", "run_bounds",
           "superstep_lines"]

#: The cycle breakdown's rows, in order, and what each counts. ``work`` and ``mem_wait`` split the
#: PEs' ``busy`` counter: scatter's memory wait is counted as busy by the hardware (it holds a list).
BREAKDOWN_LABELS = {
    "work": "busy, not waiting on memory",
    "mem_wait": "scatter waited on off-chip memory",
    "stall_hazard": "gather waited on a vertex in flight",
    "stall_backpressure": "scatter waited on a full pipeline",
    "wait_barrier": "idle, waiting for other PEs",
    "apply_cycles": "apply pass",
}


def pe_cycles(report):
    """The PEs' cycles summed (their own counters: after a watchdog stop they ran on past the
    run's cycles), the denominator of every share; at least 1."""
    counted = sum(pe.get("cycles", 0) for pe in report.per_pe)
    return max(1, counted or report.cycles * report.total_pes)


def cycle_breakdown(report):
    """``{row: PE cycles summed over PEs}`` in :data:`BREAKDOWN_LABELS` order; empty without
    counters. ``work`` + ``mem_wait`` = the hardware's ``busy``; the other rows overlap them."""
    stalls = report.stalls
    if not stalls:
        return {}
    waited = sum(pe.get("mem_wait", 0) for pe in report.per_pe)
    rows = {"work": max(0, stalls.get("busy", 0) - waited), "mem_wait": waited}
    rows.update({name: stalls[name] for name in BREAKDOWN_LABELS if name in stalls})
    return rows


def run_notes(report):
    """One line for each thing the figures do not say by themselves, in the order to print."""
    notes = []
    if not report.finished:
        notes.append(f"the run did not finish ({report.status}): no MTEPS or CPE, only the "
                     f"{report.cycles:,} cycles simulated")
    root = report.params.get("root")
    if report.finished and report.messages == 0 and report.reference_messages == 0 and root is not None:
        notes.append(f"root {root} reaches no other vertex (it has no out-edges): nothing was traversed, "
                     f"0 messages; choose a root with out-edges (--root V)")
    return notes


def superstep_model(report, platform):
    """The superstep-aware predictions for this run's configuration, from the software
    reference's messages per superstep (never from the measurement), as a dict, or None.

    ``design`` (one FPGA, edges on chip): the generated design's own per-superstep cost
    (:func:`gravfm.model.supersteps.design_overhead_cycles`) on top of one message per PE per
    cycle; ``platform``: :func:`gravfm.model.predict_supersteps` with the platform's latency
    figures (the paper's system). ``cycles`` is the one printed beside the measurement (the
    design's where there is one).
    """
    from .reporting import _predicted_overhead  # deferred: a cycle inside flow (reporting reads this module)

    prepared, plan = report.prepared, report.plan
    if prepared is None or plan is None or not prepared.reference_messages:
        return None
    reference, config = prepared.reference, plan.config
    messages = [int(count) for count in reference.messages_per_superstep]
    model = {}
    overhead = _predicted_overhead(report) if not config.pe.offchip else None
    if overhead is not None:
        bound = sum(messages) / report.total_pes
        model["design"] = {"cycles": bound + overhead, "message_bound_cycles": bound, "above_bound": overhead}
    try:
        steps = predict_supersteps(platform, model_params(prepared.algorithm, vertexid_bits=config.vertexid_bits),
                                   report.vertices, report.edges, messages, fpgas=report.fpgas,
                                   pes=report.pes_per_fpga, arch=report.arch,
                                   updates_per_superstep=[int(u) for u in reference.updates_per_superstep])
    except GravfmError:
        steps = None
    if steps is not None:
        model["platform"] = {"cycles": steps.total_time_s * steps.f_clk_hz, "mteps": steps.teps / 1e6,
                             "latency_cycles": steps.latency_cycles,
                             "latency_bound_supersteps": steps.latency_bound_supersteps,
                             "supersteps": len(messages)}
    if not model:
        return None
    model["cycles"] = (model.get("design") or model["platform"])["cycles"]
    model["source"] = "design" if "design" in model else "platform"
    model["bounds"] = run_bounds(report, model)
    model["nearest_bound"] = max(model["bounds"], key=model["bounds"].get)
    return model


#: The throughput model's limits by the bound each stands for.
LIMIT_BOUNDS = {"L_PE": "PE", "L_mem": "memory", "L_if": "link", "L_net": "link", "L_if_node": "link",
                "L_net_node": "link"}


def run_bounds(report, model):
    """``{bound: cycles}``: the fewest cycles the run could take for each cause alone — ``PE``
    (one message per PE per cycle), ``latency`` (each superstep's synchronization, the design's
    or else the platform's), ``memory`` and ``link`` (the throughput model's limits)."""
    bounds = {"PE": report.messages / report.total_pes}
    supersteps = report.supersteps or 1
    if "design" in model:
        bounds["latency"] = model["design"]["above_bound"]
    elif "platform" in model:
        bounds["latency"] = model["platform"]["latency_cycles"] * supersteps
    prediction = report.prediction
    if prediction is not None and report.messages:
        for name, limit in prediction.limits.items():
            bound = LIMIT_BOUNDS.get(name)
            if bound in ("memory", "link") and limit > 0:
                cycles = report.messages / limit * report.f_clk_hz
                bounds[bound] = max(bounds.get(bound, 0), cycles)
    return bounds


def superstep_lines(report):
    """The lines ``gravfm run`` prints for :func:`superstep_model`: the prediction beside the
    measured cycles, and the bound the run is nearest."""
    model = report.superstep_model
    if not model:
        return []
    lines = []
    measured = (f"; measured {report.cycles:,} cycles ({100 * (report.cycles / model['cycles'] - 1):+.1f}%)"
                if report.finished and model["cycles"] else "")
    if "design" in model:
        design = model["design"]
        lines.append(f"superstep-aware model of the generated design: {design['cycles']:,.0f} cycles (message bound "
                     f"{design['message_bound_cycles']:,.1f} + {design['above_bound']:,} for the first apply pass "
                     f"and each superstep's barrier){measured}")
    if "platform" in model:
        steps = model["platform"]
        lines.append(f"superstep-aware model of platform {report.platform}: {steps['mteps']:,.1f} MTEPS, "
                     f"{steps['cycles']:,.0f} cycles (latency {steps['latency_cycles']:,} cycles per superstep, "
                     f"{steps['latency_bound_supersteps']} of {steps['supersteps']} supersteps latency-bound)"
                     f"{measured if 'design' not in model else ''}")
    bounds = ", ".join(f"{name} {cycles:,.0f}" for name, cycles in model["bounds"].items())
    nearest = model["nearest_bound"]
    lines.append(f"cycles by cause alone (model): {bounds}; the run is nearest its {nearest} bound"
                 + (f" ({100 * model['bounds'][nearest] / report.cycles:.0f}% of the measured cycles)"
                    if report.finished and report.cycles else ""))
    return lines
