"""What a run's figures may be read as: the cycle breakdown with memory wait apart from work,
and the notes a report must carry so that no figure misleads (a run that did not finish has no
throughput; a root that reaches nothing traverses nothing).

Shared by the printed report, its JSON and the plot (``gravfm run``), one place for each rule.
"""

from ..architectures import architecture_info
from ..errors import GravfmError
from ..model.algorithm_params import model_params, params_for_algorithm
from ..model.balance import busiest_unit_items
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
    reference's messages and updates per superstep (never from the measurement), as a dict, or None.

    ``design``: the generated design's own per-superstep cost — one FPGA with edges on chip
    :func:`gravfm.model.supersteps.design_overhead_cycles` on top of each superstep's busiest PE
    (:mod:`gravfm.model.balance`, one item per PE per cycle); otherwise
    :func:`gravfm.model.predict_supersteps` with the design's latency (links, memory round trip)
    and its own item sizes, the partition's memory words and update fan-out.
    ``platform``: :func:`gravfm.model.predict_supersteps` with the platform's latency figures
    (the paper's system). ``cycles`` is the one printed beside the measurement (the design's
    where there is one).
    """
    prepared, plan = report.prepared, report.plan
    if prepared is None or plan is None or not prepared.reference_messages:
        return None
    reference = prepared.reference
    messages = [int(count) for count in reference.messages_per_superstep]
    updates = [int(count) for count in reference.updates_per_superstep]
    model = {}
    design = _design_model(report, platform, messages, updates)
    if design is not None:
        model["design"] = design
    steps = _predicted_supersteps(report, platform, messages, updates,
                                  model_params(prepared.algorithm, vertexid_bits=plan.config.vertexid_bits))
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


def _predicted_supersteps(report, platform, messages, updates, params, latency="platform"):
    """:func:`gravfm.model.predict_supersteps` for this run (its partition's memory words and
    update fan-out, as the run's own prediction took them), or None when the model refuses."""
    prediction = report.prediction
    fanout = prediction.details.get("update_fanout") if prediction is not None else None
    try:
        return predict_supersteps(platform, params, report.vertices, report.edges, messages, fpgas=report.fpgas,
                                  pes=report.pes_per_fpga, arch=report.arch, updates_per_superstep=updates,
                                  latency=latency, layout_words=report.plan.memory_words_per_pass,
                                  memory_model=_memory_model(report, latency), update_fanout=fanout,
                                  update_lanes=report.plan.config.pe.update_lanes,
                                  link_lanes=report.plan.config.network.link_lanes)
    except GravfmError:
        return None


def _memory_model(report, latency):
    """The design's memory time follows its layout's words (edges off chip); the platform's the
    run's own prediction (equation (2))."""
    return "layout" if latency == "design" and report.plan.memory_words_per_pass else "simple"


def _design_model(report, platform, messages, updates):
    """The ``design`` entry of :func:`superstep_model`: predicted cycles, the message bound
    (messages / PEs), the cycles above it, and the cycles the supersteps' latency alone takes."""
    from .reporting import _predicted_overhead  # deferred: a cycle inside flow (reporting reads this module)

    config = report.plan.config
    bound = sum(messages) / report.total_pes
    overhead = _predicted_overhead(report) if not config.pe.offchip else None
    if overhead is not None:
        busiest = sum(_busiest_unit_items(report, updates))
        return {"cycles": busiest + overhead, "message_bound_cycles": bound, "busiest_unit_cycles": busiest,
                "above_bound": busiest + overhead - bound, "latency_cycles_total": overhead}
    # The design's own item sizes (its vertex ids); the link check's frame, when on, is not counted.
    params = params_for_algorithm(report.prepared.algorithm, vertexid_bits=config.vertexid_bits)
    steps = _predicted_supersteps(report, platform, messages, updates, params, latency="design")
    if steps is None:
        return None
    cycles = steps.total_time_s * steps.f_clk_hz
    return {"cycles": cycles, "message_bound_cycles": bound, "above_bound": cycles - bound,
            "latency_cycles_total": steps.latency_cycles * len(messages), "mteps": steps.teps / 1e6,
            "latency_cycles": steps.latency_cycles, "latency_bound_supersteps": steps.latency_bound_supersteps}


def _busiest_unit_items(report, updates):
    """Each superstep's busiest PE's items on this run's partition (:mod:`gravfm.model.balance`)."""
    plan = report.plan
    return busiest_unit_items(architecture_info(report.arch), report.prepared.graph, plan.partition.pe_of_vertex,
                              report.total_pes, updates, report.prepared.reference.senders_per_superstep,
                              plan.config.pe.update_lanes, hubs=plan.partition.hubs)


#: The throughput model's limits by the bound each stands for.
LIMIT_BOUNDS = {"L_PE": "PE", "L_mem": "memory", "L_if": "link", "L_net": "link", "L_if_node": "link",
                "L_net_node": "link", "L_linkend": "link"}


def run_bounds(report, model):
    """``{bound: cycles}``: the fewest cycles the run could take for each cause alone — ``PE``
    (one item per PE per cycle: each superstep's busiest PE where the design model counts it, else
    the messages over the PEs), ``latency`` (each superstep's synchronization, the design's
    or else the platform's), ``memory`` and ``link`` (the throughput model's limits)."""
    bounds = {"PE": model.get("design", {}).get("busiest_unit_cycles", report.messages / report.total_pes)}
    supersteps = report.supersteps or 1
    if "design" in model:
        bounds["latency"] = model["design"]["latency_cycles_total"]
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
        if "busiest_unit_cycles" in design:
            parts = (f"each superstep's busiest PE {design['busiest_unit_cycles']:,} + "
                     f"{design['latency_cycles_total']:,.0f} for the first apply pass and each superstep's barrier; "
                     f"message bound {design['message_bound_cycles']:,.1f}")
        else:
            parts = (f"message bound {design['message_bound_cycles']:,.1f} + {design['above_bound']:,.0f} for "
                     f"{design['latency_cycles']:,.0f} cycles of latency per superstep and work beyond one message "
                     "per PE per cycle")
        lines.append(f"superstep-aware model of the generated design: {design['cycles']:,.0f} cycles ({parts})"
                     f"{measured}")
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
