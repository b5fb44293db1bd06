"""What every simulation back-end reads back from a run, in one form (:class:`Readback`).

A back-end (:class:`gravfm.sim.amaranth_backend.AmaranthBackend`,
:class:`gravfm.sim.verilator_backend.VerilatorBackend`) drives the host interface, reads the
vertex states, the per-PE counters, the per-round logs and (several FPGAs) the link counters,
and hands them over as a :class:`Readback`; the figures derived from them (supersteps, messages,
per-superstep rows, stall breakdown) are defined here once, whatever the back-end.
"""

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..hw.protocol import COUNTER_NAMES, LINK_COUNTER_NAMES, HostReadMem, link_counter_address

__all__ = ["memory_waits", "Readback", "SuperstepRow", "BREAKDOWN_COUNTERS", "PROGRESS_COUNTERS",
           "link_counter_reads", "logged_rounds", "diagnose_stall", "with_link_faults"]

#: Counters that say where PE cycles went (the rest are totals: cycles, messages, ...).
BREAKDOWN_COUNTERS = ("busy", "stall_hazard", "stall_backpressure", "wait_barrier", "apply_cycles")
#: Counters whose change is forward progress for the watchdog.
PROGRESS_COUNTERS = ("messages", "updates", "supersteps")


@dataclass(frozen=True)
class SuperstepRow:
    """One superstep as the hardware logged it (``cycles`` None when not logged)."""

    round: int
    active: int
    messages: int
    cycles: int | None


@dataclass(frozen=True)
class Readback:
    """One run as the host read it back.

    Attributes
    ----------
    status : str
        ``done`` (the top raised ``done``), ``stalled`` (watchdog), ``max_cycles``,
        ``interrupted``, or ``link_error`` (:func:`with_link_faults`: a link receiver latched an
        error, or a link delivered more than it took).
    cycles, load_cycles : int
        Cycles from ``start`` to the stop; host writes before ``start``.
    state : dict of str to np.ndarray
        Final vertex state per field, original vertex order.
    counters : dict of str to np.ndarray
        Per-PE counters by name (:data:`gravfm.hw.protocol.COUNTER_NAMES`), shape (PEs,).
    round_log : dict of str to np.ndarray
        ``messages``, ``updates``, ``cycle`` per PE and logged round: shape (PEs, rounds), the
        rounds being the run's supersteps (at most the build's ``max_rounds``).
    links : dict of str to np.ndarray
        Several FPGAs: the link counters by name (:data:`~gravfm.hw.protocol.LINK_COUNTER_NAMES`),
        shape (fpgas, fpgas - 1), row = sending FPGA, column ``k`` = link to ``peers_of(row)[k]``.
    board_links : tuple of dict
        Several boards (``--backend litex``/``board``): per FPGA and link, the link port's and
        link ends' counters (:meth:`gravfm.board.rack.Rack.link_rows`).
    diagnosis : tuple of str
        A stalled run: what each PE (and link) waits on; a link error: what went wrong where.
    build_s, build_cached, build_key, run_s
        The back-end's build (compiled back-ends) and run wall times.
    build_cpu_s : float or None
        CPU seconds of a new build's processes (None: cached, or no build).
    load_clocked_cycles : int or None
        The compiled simulator: the cycles its FPGAs were clocked for the load (side by side,
        every PE's port at once: docs/host-interface.md), fewer than ``load_cycles``.
    threads : int
        Threads that simulated the FPGAs (the result does not depend on it).
    """

    status: str
    cycles: int
    load_cycles: int
    state: dict = field(repr=False)
    counters: dict = field(repr=False)
    round_log: dict = field(repr=False)
    links: dict = field(default_factory=dict, repr=False)
    board_links: tuple = field(default=(), repr=False)
    diagnosis: tuple = ()
    build_s: float = 0.0
    build_cached: bool = False
    build_key: str = ""
    run_s: float = 0.0
    threads: int = 1
    build_cpu_s: float | None = None
    load_clocked_cycles: int | None = None

    @property
    def supersteps(self):
        """Apply passes of the run (the slowest PE's count)."""
        return int(self.counters["supersteps"].max())

    @property
    def messages(self):
        """Messages (traversed edges) of all PEs."""
        return int(self.counters["messages"].sum())

    @property
    def messages_per_superstep(self):
        """Messages of each logged superstep, summed over PEs."""
        return tuple(int(v) for v in self.round_log["messages"].sum(axis=0))

    @property
    def updates_per_superstep(self):
        """Updates of each logged superstep, summed over PEs."""
        return tuple(int(v) for v in self.round_log["updates"].sum(axis=0))

    @property
    def rounds(self):
        """:class:`SuperstepRow` per logged superstep (``cycles``: from the previous apply's end)."""
        ends = [int(v) for v in self.round_log["cycle"].max(axis=0)]
        return tuple(SuperstepRow(round=r, active=active, messages=messages, cycles=end - start)
                     for r, (active, messages, end, start) in enumerate(
                         zip(self.updates_per_superstep, self.messages_per_superstep, ends, [0, *ends])))

    @property
    def stalls(self):
        """The breakdown counters summed over PEs."""
        return {name: int(self.counters[name].sum()) for name in BREAKDOWN_COUNTERS if name in self.counters}

    @property
    def per_pe(self):
        """Every counter of every PE: a tuple of ``{name: value}``."""
        pes = len(self.counters["messages"])
        return tuple({name: int(self.counters[name][g]) for name in COUNTER_NAMES} for g in range(pes))


def link_counter_reads(config):
    """Host reads ``{name: [(pe, mem, addr), ...]}`` of every link counter, FPGA by FPGA, link by
    link (none for one FPGA): through the first PE of the sending FPGA."""
    n, p = config.fpgas, config.pes_per_fpga
    if n == 1:
        return {}
    return {name: [(a * p, HostReadMem.LINK_COUNTERS, link_counter_address(k, c))
                   for a in range(n) for k in range(n - 1)]
            for c, name in enumerate(LINK_COUNTER_NAMES)}


def _pe_lines(watch, before, gap, total_pes, superstep):
    """Which counters still grow on each PE of a stalled system: what it waits on."""
    lines = [f"no progress; PE 0 is in superstep {superstep}; counters over the last {gap} cycles:"]
    for g in range(total_pes):
        grown = {name: watch[f"pe{g}.{name}"] - before[f"pe{g}.{name}"] for name in COUNTER_NAMES
                 if name in BREAKDOWN_COUNTERS}
        waiting = [f"{name} +{delta}" for name, delta in grown.items() if delta and name != "busy"]
        busy = "busy" if grown.get("busy") else "idle"
        lines.append(f"PE {g} ({busy}): " + (", ".join(waiting) if waiting else "no wait counter moves"))
    return lines


def diagnose_stall(outcome, config, links):
    """PE counters, then (several FPGAs) the links that hold the run.

    ``outcome`` carries the watched counters at the stop (``watch``) and ``scan_gap_cycles``
    earlier (``watch_before``), and PE 0's ``superstep`` (:class:`gravfm.sim.verilator.SimOutcome`).
    """
    # deferred: Amaranth (heavy)
    from ..hw.multi.link_report import diagnose_links

    lines = _pe_lines(outcome.watch, outcome.watch_before, outcome.scan_gap_cycles, config.total_pes,
                      outcome.superstep)
    lines += memory_waits(outcome.watch, config)
    if links:
        p = config.pes_per_fpga
        rounds = [min(outcome.watch[f"pe{g}.supersteps"] for g in range(f * p, (f + 1) * p))
                  for f in range(config.fpgas)]
        stuck = diagnose_links(links, fpgas=config.fpgas, supersteps=rounds)
        lines += stuck or ("every link is drained and has delivered every barrier sent",)
    return tuple(lines)


def memory_waits(watch, config):
    """Off-chip edges: the PEs whose memory requests were not all answered, e.g. a memory that
    stopped responding."""
    if not config.pe.offchip:
        return []
    lines = []
    for g in range(config.total_pes):
        asked, answered = watch[f"pe{g}.mem_requests"], watch[f"pe{g}.mem_responses"]
        if asked > answered:
            lines.append(f"PE {g} waits for {asked - answered} off-chip memory request(s) "
                         f"({answered:,} of {asked:,} answered)")
    return lines


def logged_rounds(counters, max_rounds):
    """Rounds of the round log worth reading: the run's supersteps, at most the log's depth."""
    return min(int(np.max(counters["supersteps"], initial=0)), max_rounds)


def with_link_faults(readback, *, fpgas, check):
    """``readback``, with status ``link_error`` and the diagnosis first when the link counters show
    a fault (:func:`gravfm.hw.multi.link_report.link_faults`; ``check`` is the links'
    :class:`~gravfm.hw.link_check.LinkCheck`).

    A link error ends a run like ``done`` does (the back-ends need not know), so a run that
    finished or stalled is judged here, whatever the back-end.
    """
    # deferred: Amaranth (heavy)
    from ..hw.multi.link_report import link_faults

    if not readback.links or readback.status not in ("done", "stalled"):
        return readback
    lines = link_faults(readback.links, fpgas=fpgas, check=check)
    if not lines:
        return readback
    return dataclasses.replace(readback, status="link_error", diagnosis=lines + tuple(readback.diagnosis))
