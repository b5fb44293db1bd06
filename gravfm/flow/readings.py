"""What a run's figures may be read as: the cycle breakdown with memory wait apart from work,
and the notes a report must carry so that no figure misleads (a run that did not finish has no
throughput; a root that reaches nothing traverses nothing).

Shared by the printed report, its JSON and the plot (``gravfm run``), one place for each rule.
"""

__all__ = ["BREAKDOWN_LABELS", "cycle_breakdown", "pe_cycles", "run_notes"]

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
