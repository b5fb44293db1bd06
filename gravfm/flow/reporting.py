"""Stage 7, report: the measured figures beside the analytical model's prediction.

:class:`RunReport` is everything ``gravfm run`` prints; :meth:`RunReport.to_dict` is its
``--json`` form (keys documented in docs/interfaces.md §7). The prediction is the model's for
the same configuration, printed beside the measurement, never mixed with it.
"""

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import GravfmError
from ..model.supersteps import design_overhead_cycles
from .elaboration import gather_latency
from .memory import channel_figures
from .readings import cycle_breakdown, run_notes, superstep_model

__all__ = ["RunReport", "report", "predict_run", "hazard_stall_note", "HAZARD_STALL_SHARE", "superstep_cycles",
           "SUPERSTEP_CYCLES_NOTE", "superstep_overhead"]

#: Hazard stalls above this share of the PEs' cycles get a warning line of their own.
HAZARD_STALL_SHARE = 0.03


@dataclass(frozen=True)
class RunReport:
    """Everything ``gravfm run`` prints; :meth:`to_dict` is its ``--json`` form.

    ``verified`` is the :func:`gravfm.flow.verify` rule. ``links`` (several FPGAs) holds the
    measured link figures of :func:`gravfm.hw.multi.link_report.link_figures`. ``edges`` counts
    the edges the algorithm runs on (after its ``prepare``, e.g. WCC's symmetrization),
    ``input_edges`` those of the graph as loaded and cleaned (what ``gravfm graph info`` reports
    with the same options). ``clock_basis`` is the platform clock's (``met`` or ``assumed``);
    ``clocks`` the clocks the caller reports MTEPS at (``gravfm run``: those of
    :func:`gravfm.synth.clocks.clock_rates`, dicts with ``mhz`` and ``label``), empty unless set.
    ``hub_senders`` counts the hybrid's hub senders (None without its hub path).
    ``params`` are the algorithm's parameters with vertex ids in the input's ids (a file's own ids,
    also when the reader relabelled them). ``prepared``,
    ``plan`` and ``readback`` are the stage results behind the figures, for callers that check
    more than them (tests); they are not part of the JSON.
    """

    algorithm: str
    graph_name: str
    vertices: int
    edges: int
    fpgas: int
    pes_per_fpga: int
    arch: str
    partition: str
    local_bits: int
    edges_per_pe: int
    update_lanes: int
    gather_forwarding: bool
    backend: str
    status: str
    verified: bool
    check_detail: str
    supersteps: int
    cycles: int
    messages: int
    reference_supersteps: int
    reference_messages: int
    f_clk_hz: float
    platform: str
    rounds: tuple = ()
    stalls: dict = field(default_factory=dict)
    per_pe: tuple = ()
    diagnosis: tuple = ()
    prediction: object = None
    prediction_note: str = ""
    build_s: float = 0.0
    build_cpu_s: float | None = None
    build_cached: bool = False
    build_key: str = ""
    run_s: float = 0.0
    threads: int = 1
    load_cycles: int = 0
    load_clocked_cycles: int | None = None
    links: dict = field(default_factory=dict)
    board_links: tuple = ()
    params: dict = field(default_factory=dict)
    input_edges: int = 0
    edge_memory: str = "onchip"
    memory: dict = field(default_factory=dict)
    superstep_model: dict | None = None
    clock_basis: str = "assumed"
    clocks: tuple = ()
    hub_senders: int | None = None
    prepared: object = field(default=None, repr=False, compare=False)
    plan: object = field(default=None, repr=False, compare=False)
    readback: object = field(default=None, repr=False, compare=False)

    @property
    def total_pes(self):
        """PEs of the whole system."""
        return self.fpgas * self.pes_per_fpga

    @property
    def finished(self):
        """The run terminated by itself (status ``done``): only then are MTEPS and CPE figures."""
        return self.status == "done"

    @property
    def cpe(self):
        """PE cycles per edge: cycles x total PEs / messages (inf without messages)."""
        return self.cycles * self.total_pes / self.messages if self.messages else math.inf

    @property
    def seconds(self):
        """Run time at the platform clock."""
        return self.cycles / self.f_clk_hz

    @property
    def mteps(self):
        """Measured million traversed edges per second at the platform clock."""
        return self.messages / self.seconds / 1e6 if self.cycles else 0.0

    def mteps_at(self, mhz):
        """MTEPS at a clock of ``mhz`` (the same cycles), None without a figure or a finished run."""
        return self.messages / self.cycles * mhz if self.finished and self.cycles and mhz else None

    @property
    def cycles_per_s(self):
        """Simulator speed: simulated cycles per wall-clock second."""
        return self.cycles / self.run_s if self.run_s > 0 else 0.0

    @property
    def edges_per_s(self):
        """Simulator speed: traversed edges per wall-clock second."""
        return self.messages / self.run_s if self.run_s > 0 else 0.0

    def to_dict(self):
        """Plain-data form for ``--json``; ``mteps`` and ``cpe`` are null for a run that did not
        finish (:attr:`finished`)."""
        prediction = self.prediction
        finished = self.finished
        return {
            "algorithm": self.algorithm,
            "graph": {"name": self.graph_name, "vertices": self.vertices, "edges": self.edges,
                      "input_edges": self.input_edges},
            "params": dict(self.params),
            "fpgas": self.fpgas,
            "pes_per_fpga": self.pes_per_fpga,
            "arch": self.arch,
            "partition": self.partition,
            "capacity": {"vertices_per_pe": 1 << self.local_bits, "edges_per_pe": self.edges_per_pe},
            "update_lanes": self.update_lanes,
            "gather_forwarding": self.gather_forwarding,
            "backend": self.backend,
            "status": self.status,
            "verified": self.verified,
            "check_detail": self.check_detail,
            "supersteps": self.supersteps,
            "cycles": self.cycles,
            "messages": self.messages,
            "reference": {"supersteps": self.reference_supersteps, "messages": self.reference_messages},
            "finished": finished,
            "cpe": None if math.isinf(self.cpe) or not finished else self.cpe,
            "f_clk_hz": self.f_clk_hz,
            "platform": self.platform,
            "mteps": self.mteps if finished else None,
            "clock_basis": self.clock_basis,
            "clocks": [{**clock, "mteps": self.mteps_at(clock["mhz"])} for clock in self.clocks],
            "notes": run_notes(self),
            "per_superstep": [row.__dict__ for row in self.rounds],
            "superstep_overhead": superstep_overhead(self),
            "stalls": dict(self.stalls),
            "cycle_breakdown": cycle_breakdown(self),
            "per_pe": [dict(pe) for pe in self.per_pe],
            "diagnosis": list(self.diagnosis),
            "links": dict(self.links),
            "board_links": [dict(row) for row in self.board_links],
            "edge_memory": self.edge_memory,
            "memory": dict(self.memory),
            "model": {
                "kind": "prediction",
                "mteps": prediction.t_sys_mteps if prediction is not None else None,
                "bottleneck": prediction.bottleneck if prediction is not None else None,
                "cpe": prediction.cpe if prediction is not None else None,
                "note": self.prediction_note,
                "detail": prediction.to_dict() if prediction is not None else None,
                "supersteps": self.superstep_model,
            },
            "sim": {
                "backend": self.backend,
                "build_s": self.build_s,
                "build_cpu_s": self.build_cpu_s,
                "build_cached": self.build_cached,
                "build_key": self.build_key,
                "run_s": self.run_s,
                "threads": self.threads,
                "cycles_per_s": self.cycles_per_s,
                "edges_per_s": self.edges_per_s,
                "load_cycles": self.load_cycles,
                "load_clocked_cycles": self.load_clocked_cycles,
            },
        }


def predict_run(prepared, config, platform, *, link_overhead_bits=0, layout_words=None, update_fanout=None):
    """The model's prediction for this configuration on ``platform``, or (None, the reason);
    ``link_overhead_bits`` (the link check's frame) count in m_update and m_message,
    ``layout_words`` (off-chip edges: words per FPGA per all-active pass, from the partition)
    replace the model's estimate in its layout L_mem, and ``update_fanout`` (the partition's
    mean number of other FPGAs an update goes to through the neighbour filter) the n - 1 of its
    link limits; the PEs' update lanes (``config``) set its update intake."""
    try:
        from ..model.algorithm_params import model_params, with_link_overhead
        from ..model.predict import predict
    except ImportError as error:  # the model is optional for a run
        return None, f"model unavailable: {error}"
    graph = prepared.graph
    params = with_link_overhead(model_params(prepared.algorithm, vertexid_bits=config.vertexid_bits),
                                link_overhead_bits)
    if graph.num_vertices == 0 or graph.num_edges == 0:
        return None, "no prediction for a graph without edges"
    try:
        prediction = predict(platform, params, graph.num_vertices, graph.num_edges,
                             fpgas=config.fpgas, pes=config.pes_per_fpga, arch=config.arch,
                             layout_words=layout_words, update_fanout=update_fanout,
                             update_lanes=config.pe.update_lanes, link_lanes=config.network.link_lanes)
    except GravfmError as error:  # e.g. more PEs than the platform holds: the run still stands
        return None, f"no prediction: {error}"
    return prediction, f"analytical model at the platform's CPE {prediction.cpe:g}, not a measurement"


def link_fanout(plan, top):
    """The plan's update fan-out when the built system filters its links, else None (every
    update to every other FPGA: the filter switched off, or GraVF)."""
    return plan.update_fanout if getattr(top, "use_filter", False) else None


def _link_figures(prepared, plan, top, readback):
    """Measured link figures beside the bytes per traversed edge the model expects."""
    # deferred: Amaranth (heavy)
    from ..hw.multi.link_report import bytes_per_edge_theory, crossing_fraction, link_figures

    config, graph = plan.config, prepared.graph
    theory = bytes_per_edge_theory(config.arch, fpgas=config.fpgas, vertices=graph.num_vertices,
                                   edges=graph.num_edges, item_bits=top.item_bits,
                                   crossing=crossing_fraction(graph, plan.partition.fpga_of_vertex))
    link = top.link_config
    return link_figures(readback.links, fpgas=config.fpgas, item_bits=top.item_bits, word_bits=link.word_bits,
                        messages=readback.messages, theory=theory, faults=link.faulty, check=link.check)


def memory_figures(readback, config, f_clk_hz, channels=1):
    """Off-chip edges: the PEs' memory counters summed, bytes and the bandwidth they achieved (and
    the busiest of ``channels`` pseudo-channels': :func:`~gravfm.flow.memory.channel_figures`)."""
    if not config.pe.offchip:
        return {}
    counters = readback.counters
    words = int(counters["mem_words"].sum())
    seconds = readback.cycles / f_clk_hz
    gib_s = words * config.pe.memory_word_bytes / seconds / 2 ** 30 if seconds else 0.0
    return {"requests": int(counters["mem_requests"].sum()), "words": words,
            "responses": int(counters["mem_responses"].sum()),
            "bytes": words * config.pe.memory_word_bytes, "wait_cycles": int(counters["mem_wait"].sum()),
            "gib_s": gib_s, "gib_s_per_fpga": gib_s / config.fpgas,
            "requests_in_flight": config.pe.requests_in_flight, "word_bits": config.pe.memory_word_bits,
            **channel_figures(counters["mem_words"], config, channels, seconds)}


def report(prepared, plan, top, readback, verdict, *, platform, backend, partition):
    """The :class:`RunReport` of a run.

    Parameters
    ----------
    prepared, plan, top, readback, verdict
        The results of the earlier stages.
    platform : gravfm.model.platform.Platform
        Its clock turns cycles into seconds; the model predicts for it.
    backend, partition : str
        Names of the back-end and the partitioning method, as reported.
    """
    config, graph = plan.config, prepared.graph
    overhead = top.link_check.overhead_bits if config.fpgas > 1 else 0
    prediction, note = predict_run(prepared, config, platform, link_overhead_bits=overhead,
                                   layout_words=plan.memory_words_per_pass, update_fanout=link_fanout(plan, top))
    run_report = RunReport(
        algorithm=prepared.algorithm.name, graph_name=prepared.graph_label, vertices=graph.num_vertices,
        edges=graph.num_edges, fpgas=config.fpgas, pes_per_fpga=config.pes_per_fpga, arch=config.arch,
        partition=partition, local_bits=config.pe.local_bits, edges_per_pe=config.pe.edges_per_pe,
        update_lanes=config.pe.update_lanes, gather_forwarding=top.gather_forwarding, backend=backend,
        hub_senders=int(plan.partition.hub_senders.sum()) if config.network.hub_path else None,
        status=readback.status, verified=verdict.ok, check_detail=verdict.detail,
        supersteps=readback.supersteps, cycles=readback.cycles, messages=readback.messages,
        reference_supersteps=prepared.reference_supersteps, reference_messages=prepared.reference_messages,
        f_clk_hz=platform.fpga.f_clk_hz, platform=platform.name, clock_basis=platform.clock.basis,
        rounds=readback.rounds,
        stalls=readback.stalls, per_pe=readback.per_pe, diagnosis=readback.diagnosis,
        prediction=prediction, prediction_note=note, build_s=readback.build_s,
        build_cpu_s=readback.build_cpu_s,
        build_cached=readback.build_cached, build_key=readback.build_key, run_s=readback.run_s,
        threads=readback.threads,
        load_cycles=readback.load_cycles, load_clocked_cycles=readback.load_clocked_cycles,
        links=_link_figures(prepared, plan, top, readback) if readback.links else {},
        board_links=readback.board_links,
        params=prepared.given_params,
        input_edges=(graph if prepared.loaded is None else prepared.loaded).num_edges,
        edge_memory=config.pe.edge_memory,
        memory=memory_figures(readback, config, platform.fpga.f_clk_hz, channels=plan.memory_channels),
        prepared=prepared, plan=plan, readback=readback)
    return replace(run_report, superstep_model=superstep_model(run_report, platform))


#: What :func:`superstep_cycles` counts, as the report's table and plot explain it.
SUPERSTEP_CYCLES_NOTE = ("cycles of round r: from the end of round r's apply to the end of round r+1's "
                         "(to the end of the run for the last round), the cycles in which round r's messages "
                         "were scattered and gathered")


def superstep_cycles(rounds, cycles):
    """The cycles each round's messages took: ``(first_apply, per_round)``.

    The round log holds the cycle at which each round's apply ended. Round r's updates are
    scattered into messages and gathered until round r+1's apply has run over them, so the
    cycles of round r are ``end[r+1] - end[r]`` (``cycles - end[r]`` for the last logged round),
    aligned with round r's messages; ``first_apply`` is round 0's apply before any message.
    Both are None (per round) when the log has no cycles.
    """
    if not rounds or any(row.cycles is None for row in rounds):
        return None, tuple(None for _ in rounds)
    ends, total = [], 0
    for row in rounds:
        total += row.cycles
        ends.append(total)
    return ends[0], tuple(max(0, after - end) for end, after in zip(ends, [*ends[1:], max(cycles, ends[-1])]))


def superstep_overhead(report):
    """The cycles of a run above its message bound (messages / PEs), measured, by superstep.

    ``above_bound`` = cycles - messages / PEs; ``first_apply``: round 0's apply before any
    message; ``per_superstep[r]``: the cycles of round r (:func:`superstep_cycles`) minus its
    messages / PEs (negative when work of the round overlapped the next); ``apply_per_pe`` and
    ``wait_barrier_per_pe``: the PEs' apply and barrier-wait counters over the PEs (the wait
    is the network drain: a PE idle until every barrier has arrived). None without cycles.
    """
    pes = report.total_pes
    if not report.cycles or not pes:
        return None
    bound = report.messages / pes
    first_apply, cycles = superstep_cycles(report.rounds, report.cycles)
    per_round = [None if row_cycles is None else row_cycles - row.messages / pes
                 for row, row_cycles in zip(report.rounds, cycles)]
    return {
        "message_bound_cycles": bound,
        "above_bound": report.cycles - bound,
        "per_superstep_mean": (report.cycles - bound) / max(1, report.supersteps),
        "first_apply": first_apply,
        "per_superstep": per_round,
        "apply_per_pe": report.stalls.get("apply_cycles", 0) / pes,
        "wait_barrier_per_pe": report.stalls.get("wait_barrier", 0) / pes,
        "predicted_above_bound": _predicted_overhead(report),
    }


def _predicted_overhead(report):
    """The model's cycles above the message bound for this run (one FPGA), or None."""
    if report.fpgas != 1 or report.prepared is None or report.plan is None:
        return None

    prepared, partition = report.prepared, report.plan.partition
    pe_of_vertex = partition.pe_of_vertex
    listed = getattr(prepared.algorithm, "initially_active", None)
    if getattr(prepared.algorithm, "sparse_apply", False) and listed is not None:
        first = np.bincount(pe_of_vertex[listed(prepared.graph, prepared.params)], minlength=report.total_pes)
    else:
        first = partition.vertices_per_pe
    return design_overhead_cycles(first_pass=int(max(first)), supersteps=prepared.reference.supersteps,
                                  pes=report.total_pes)


def hazard_stall_note(report):
    """A warning line when gather's hazard stalls exceed :data:`HAZARD_STALL_SHARE` of the PEs'
    cycles, naming the gather kernel's declared latency; None otherwise.

    A gather kernel that declares a lower latency than it has gets too small a hazard unit, and
    messages to distinct vertices then wait: the run verifies but is slower.
    """
    stalled = report.stalls.get("stall_hazard", 0)
    pe_cycles = sum(pe.get("cycles", 0) for pe in report.per_pe) or report.cycles * report.total_pes
    if not pe_cycles or stalled <= HAZARD_STALL_SHARE * pe_cycles:
        return None
    line = f"hazard stalls: gather waited {stalled:,} PE cycles ({100 * stalled / pe_cycles:.1f}% of them)"
    if report.plan is not None:
        declared, measured, slots = gather_latency(report.plan.config)
        line += (f"; the gather kernel declares {'no latency (0)' if declared is None else f'latency {declared}'}"
                 f"{'' if measured is None else f' (measured {measured})'}, so its hazard unit holds {slots} "
                 f"vertices in flight (latency + 3 keep one message per cycle)")
    return line + ("; messages to a vertex in flight wait for its write-back (a combinational kernel "
                   "lets gather forward instead)")
