"""``gravfm run``: generate, build, load, simulate, verify and report, in one call.

:func:`run` takes a :class:`RunOptions` and returns a :class:`RunReport`: the graph and the
configuration, the simulator's status, the measured figures (supersteps, cycles, messages, CPE,
MTEPS at the platform clock), the per-superstep table and stall breakdown read from the hardware,
whether the answer matches the software reference, and the analytical model's prediction for the
same configuration (a prediction, printed beside the measurement, never mixed with it).

The system top comes from :class:`gravfm.hw.System`, the host writes and the decoding of the
states from :mod:`gravfm.sim.loader`; the compiled back-end is :mod:`gravfm.sim.verilator`.
"""

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .errors import ConfigError, GravfmError

__all__ = ["RunOptions", "SuperstepRow", "RunReport", "SimulationOutcome", "run", "plan_hardware",
           "simulate_verilator", "simulate_amaranth", "choose_capacities", "next_power_of_two"]

BACKENDS = ("verilator", "amaranth")
DEFAULT_PLATFORM = "ac510x4"


@dataclass(frozen=True)
class RunOptions:
    """What to run.

    Parameters
    ----------
    algorithm : str or gravfm.algorithms.Algorithm
        A registered algorithm's name, or an algorithm object.
    graph : str or gravfm.graph.Graph
        A graph file, a generator spec (``rmat:scale=12,ef=16,seed=1``) or a graph.
    fpgas, pes : int
        FPGAs and PEs per FPGA.
    platform : str
        Platform name or file: its clock converts cycles to seconds, and the model predicts for it.
    partition : str
        Partitioning method (``greedy``, ``round_robin``, ``metis``).
    root : int, optional
        Root vertex (algorithms with a ``root`` parameter, e.g. BFS).
    backend : {"verilator", "amaranth"}
    local_bits, edges_per_pe : int, optional
        Capacities of a PE; by default the graph's needs rounded up to powers of two, so similar
        graphs share a build.
    max_cycles : int, optional
        Stop the simulation after this many cycles.
    watchdog_cycles : int
        Stop a run that makes no progress for this many cycles (it is reported as a deadlock).
    cache_dir : str, optional
        Build cache folder (default ``$GRAVFM_CACHE`` or ``./.gravfm-cache``).
    arch : {"gravfm", "gravf"}
        GraVF-M (broadcast updates) or the GraVF baseline (unicast messages, one per edge).
    update_lanes : int, optional
        Updates a GraVF-M PE takes per cycle (1 or 2); by default :func:`default_update_lanes`.
    gather_forwarding : bool
        Forward in-flight gather results to later messages for the same vertex (combinational
        gather kernels only; :mod:`gravfm.hw.pe.gather_forward`). False: messages wait in the
        hazard unit, as in the paper.
    """

    algorithm: object
    graph: object
    fpgas: int = 1
    pes: int = 1
    platform: str = DEFAULT_PLATFORM
    partition: str = "greedy"
    root: int | None = None
    backend: str = "verilator"
    local_bits: int | None = None
    edges_per_pe: int | None = None
    max_cycles: int | None = None
    watchdog_cycles: int = 1 << 20
    cache_dir: str | None = None
    arch: str = "gravfm"
    update_lanes: int | None = None
    gather_forwarding: bool = True

    def __post_init__(self):
        for name in ("fpgas", "pes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer, not {value!r}")
        if self.arch not in ("gravfm", "gravf"):   # gravfm.hw.config.ARCHITECTURES (no Amaranth import)
            raise ConfigError(f"unknown architecture {self.arch!r} (known: gravfm, gravf)")
        if self.update_lanes is not None and (self.update_lanes not in (1, 2) or
                                              (self.update_lanes > 1 and self.arch != "gravfm")):
            raise ConfigError(f"update_lanes must be 1 or 2 (2 only with the gravfm architecture), "
                              f"not {self.update_lanes!r}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown backend {self.backend!r} (known: {', '.join(BACKENDS)})")
        if self.edges_per_pe is not None and (self.edges_per_pe < 1 or not isinstance(self.edges_per_pe, int)):
            raise ConfigError(f"edges_per_pe must be a positive integer, not {self.edges_per_pe!r}")
        if self.local_bits is not None and (self.local_bits < 0 or not isinstance(self.local_bits, int)):
            raise ConfigError(f"local_bits must be a non-negative integer, not {self.local_bits!r}")
        if self.watchdog_cycles < 1:
            raise ConfigError(f"watchdog_cycles must be positive, not {self.watchdog_cycles!r}")


@dataclass(frozen=True)
class SuperstepRow:
    """One superstep as the hardware logged it (``cycles`` None when not logged)."""

    round: int
    active: int
    messages: int
    cycles: int | None


@dataclass(frozen=True)
class RunReport:
    """Everything ``gravfm run`` prints; :meth:`to_dict` is its ``--json`` form.

    ``verified`` is True only when the simulation terminated, the answer matches the software
    reference, and the hardware's message count equals the reference's. ``links`` (several
    FPGAs) holds the measured link figures of :func:`gravfm.hw.multi.link_report.link_figures`.
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
    build_cached: bool = False
    build_key: str = ""
    run_s: float = 0.0
    load_cycles: int = 0
    links: dict = field(default_factory=dict)

    @property
    def total_pes(self):
        """PEs of the whole system."""
        return self.fpgas * self.pes_per_fpga

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

    @property
    def cycles_per_s(self):
        """Simulator speed: simulated cycles per wall-clock second."""
        return self.cycles / self.run_s if self.run_s > 0 else 0.0

    @property
    def edges_per_s(self):
        """Simulator speed: traversed edges per wall-clock second."""
        return self.messages / self.run_s if self.run_s > 0 else 0.0

    def to_dict(self):
        """Plain-data form for ``--json``."""
        prediction = self.prediction
        return {
            "algorithm": self.algorithm,
            "graph": {"name": self.graph_name, "vertices": self.vertices, "edges": self.edges},
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
            "cpe": None if math.isinf(self.cpe) else self.cpe,
            "f_clk_hz": self.f_clk_hz,
            "platform": self.platform,
            "mteps": self.mteps,
            "per_superstep": [row.__dict__ for row in self.rounds],
            "stalls": dict(self.stalls),
            "per_pe": [dict(pe) for pe in self.per_pe],
            "diagnosis": list(self.diagnosis),
            "links": dict(self.links),
            "model": {
                "kind": "prediction",
                "mteps": prediction.t_sys_mteps if prediction is not None else None,
                "bottleneck": prediction.bottleneck if prediction is not None else None,
                "cpe": prediction.cpe if prediction is not None else None,
                "note": self.prediction_note,
                "detail": prediction.to_dict() if prediction is not None else None,
            },
            "sim": {
                "backend": self.backend,
                "build_s": self.build_s,
                "build_cached": self.build_cached,
                "build_key": self.build_key,
                "run_s": self.run_s,
                "cycles_per_s": self.cycles_per_s,
                "edges_per_s": self.edges_per_s,
                "load_cycles": self.load_cycles,
            },
        }


def next_power_of_two(value):
    """Smallest power of two >= ``value`` (1 for values below 1)."""
    return 1 << max(0, int(value) - 1).bit_length()


def choose_capacities(partition, edges_needed, *, local_bits=None, edges_per_pe=None):
    """PE capacities ``(local_bits, edges_per_pe)``: given ones checked, others from the graph.

    The graph's needs (most vertices on a PE, most edges in a PE's edge array) are rounded up to
    powers of two so that similar graphs map to the same hardware and share a build.
    """
    needed_bits = partition.min_local_bits
    if local_bits is None:
        local_bits = needed_bits
    elif local_bits < needed_bits:
        raise ConfigError(f"local_bits={local_bits} holds {1 << local_bits} vertices per PE, but a PE "
                          f"needs {int(partition.vertices_per_pe.max())}; use at least {needed_bits}")
    if edges_per_pe is None:
        edges_per_pe = next_power_of_two(max(1, edges_needed))
    elif edges_per_pe < edges_needed:
        raise ConfigError(f"edges_per_pe={edges_per_pe} is too small: a PE needs {edges_needed} edges")
    return int(local_bits), int(edges_per_pe)


def _load_graph(spec):
    from .graph import Graph
    if isinstance(spec, Graph):
        return spec
    from .graph import load_graph
    return load_graph(str(spec))


def _algorithm(spec):
    if isinstance(spec, str):
        from .algorithms import get_algorithm
        return get_algorithm(spec)
    return spec


def _predict(algorithm, graph, options, vertexid_bits):
    """The model's prediction for this configuration, or (None, reason)."""
    try:
        from .model.algorithm_params import algorithm_params, builtin_algorithm_params, params_from_layouts
        from .model.predict import predict
    except ImportError as error:  # the model is optional for a run
        return None, f"model unavailable: {error}"
    if algorithm.name in builtin_algorithm_params():
        params = algorithm_params(algorithm.name)
    else:
        params = params_from_layouts(algorithm.name, vertex=algorithm.vertex, update=algorithm.update,
                                     message=algorithm.message, edge=algorithm.edge,
                                     vertexid_bits=vertexid_bits)
    if graph.num_vertices == 0 or graph.num_edges == 0:
        return None, "no prediction for a graph without edges"
    try:
        prediction = predict(options.platform, params, graph.num_vertices, graph.num_edges,
                             fpgas=options.fpgas, pes=options.pes, arch=options.arch)
    except GravfmError as error:  # e.g. more PEs than the platform holds: the run still stands
        return None, f"no prediction: {error}"
    return prediction, f"analytical model at the platform's CPE {prediction.cpe:g}, not a measurement"


@dataclass(frozen=True)
class SimulationOutcome:
    """What a back-end read from the hardware, in back-end-independent form."""

    status: str
    cycles: int
    load_cycles: int
    state: dict
    supersteps: int
    messages: int
    rounds: tuple
    stalls: dict
    per_pe: tuple
    diagnosis: tuple
    build_s: float
    build_cached: bool
    build_key: str
    run_s: float
    links: dict = field(default_factory=dict)


#: From this many PEs in the system on, the defaults add a second update lane and deep FIFOs.
LARGE_SYSTEM_PES = 8

#: Counters that say where PE cycles went (the rest are totals: cycles, messages, ...).
BREAKDOWN_COUNTERS = ("busy", "stall_hazard", "stall_backpressure", "wait_barrier", "apply_cycles")
#: Counters whose change is forward progress for the watchdog.
PROGRESS_COUNTERS = ("messages", "updates", "supersteps")


def default_update_lanes(arch, fpgas, pes_per_fpga):
    """Two update lanes for a GraVF-M system of :data:`LARGE_SYSTEM_PES` PEs or more, else one.

    Every PE sees every update that reaches its FPGA but holds only the edges to its own
    vertices, about ``|E| / (|V| n p)`` per update: once ``n p`` nears the average degree a PE
    taking one update per cycle idles its edge pipeline. (A structural rule, so that the build
    does not depend on the graph.)
    """
    return 2 if arch == "gravfm" and fpgas * pes_per_fpga >= LARGE_SYSTEM_PES else 1


def default_network_fifo_depth(fpgas, pes_per_fpga):
    """Per-(source, destination) network FIFO depth: 64 from :data:`LARGE_SYSTEM_PES` PEs on, else 4.

    A broadcast moves on when every destination took it, so shallow FIFOs lock the PEs into
    step and each waits for whichever is busiest at the moment. On a 2 x 9-PE system (WCC,
    uniform graph, 0.9 edges per PE per update) depth 4 -> 32 -> 128 gave CPE 1.25 -> 1.15 ->
    1.12 (128 with an 8-deep list queue); 64 is the compromise in LUT RAM.
    """
    return 64 if fpgas * pes_per_fpga >= LARGE_SYSTEM_PES else 4


def default_link_fifo_depth(fpgas, pes_per_fpga):
    """Per-(local PE, link) FIFO depth: 1024 (one block RAM) from :data:`LARGE_SYSTEM_PES` PEs on.

    A link takes one update per cycle from all the FPGA's PEs, which in an update-heavy superstep
    emit several per cycle; with shallow FIFOs each local update then waits for the link before
    the local PEs see it. On 2 x 9 PEs (BFS, RMAT scale 16, edge factor 32) the update-heavy
    superstep (35k updates, 396k edges) took 35.6k cycles with 64-deep link FIFOs, 32.0k with
    2048-deep ones, and 28.8k with 1024-deep ones and the neighbor filter moved in front of the
    link's merger (1 FPGA x 18 PEs: 27.6k).
    """
    return 1024 if fpgas > 1 and fpgas * pes_per_fpga >= LARGE_SYSTEM_PES else default_network_fifo_depth(
        fpgas, pes_per_fpga)


def plan_hardware(algorithm, graph, partition, reference_supersteps, *, local_bits=None, edges_per_pe=None,
                  arch="gravfm", update_lanes=None, gather_forwarding=True):
    """The :class:`gravfm.hw.SystemConfig` for this graph: capacities rounded up to powers of two.

    The round log holds a power of two of rounds (at least 64) so that graphs of similar depth
    share a build too.
    """
    from .hw import SystemConfig
    from .partition import edge_stores

    bits = partition.min_local_bits if local_bits is None else local_bits
    # Edges per PE depend on the layout: GraVF-M stores edges at their destination's PE, the
    # GraVF baseline at their source's.
    stores = edge_stores(graph, partition, max(bits, partition.min_local_bits), layout=arch)
    edges_needed = int(stores.edges_per_pe.max()) if len(stores) else 1
    bits, edges = choose_capacities(partition, edges_needed, local_bits=local_bits, edges_per_pe=edges_per_pe)
    rounds = max(64, next_power_of_two(reference_supersteps))
    fpgas, pes = partition.fpgas, partition.pes_per_fpga
    if update_lanes is None:
        update_lanes = default_update_lanes(arch, fpgas, pes)
    return SystemConfig.of(algorithm=algorithm, pes_per_fpga=pes, fpgas=fpgas, local_bits=bits, edges_per_pe=edges,
                        max_rounds=rounds, arch=arch, update_lanes=update_lanes,
                        gather_forwarding=gather_forwarding, network_fifo_depth=default_network_fifo_depth(fpgas, pes),
                        link_fifo_depth=default_link_fifo_depth(fpgas, pes))


def _round_rows(log, supersteps, max_rounds):
    """Per-superstep rows from the per-PE round log (``cycle`` = when the round's apply ended)."""
    rows, previous_end = [], 0
    for r in range(min(supersteps, max_rounds)):
        end = int(log["cycle"][:, r].max())
        rows.append(SuperstepRow(round=r, active=int(log["updates"][:, r].sum()),
                                 messages=int(log["messages"][:, r].sum()),
                                 cycles=end - previous_end))
        previous_end = end
    return tuple(rows)


def _diagnose(watch, before, gap, total_pes, superstep):
    """Which counters still grow on each PE of a stalled system: what it waits on."""
    from .hw.protocol import COUNTER_NAMES

    lines = [f"no progress; PE 0 is in superstep {superstep}; counters over the last {gap} cycles:"]
    for g in range(total_pes):
        grown = {name: watch[f"pe{g}.{name}"] - before[f"pe{g}.{name}"] for name in COUNTER_NAMES
                 if name in BREAKDOWN_COUNTERS}
        waiting = [f"{name} +{delta}" for name, delta in grown.items() if delta and name != "busy"]
        busy = "busy" if grown.get("busy") else "idle"
        lines.append(f"PE {g} ({busy}): " + (", ".join(waiting) if waiting else "no wait counter moves"))
    return tuple(lines)


def _link_regions(config):
    """Read regions of the link counters (one per sending FPGA), or none for one FPGA."""
    from .hw.protocol import LINK_COUNTER_NAMES, HostReadMem
    from .sim.verilator import ReadRegion

    n, p = config.fpgas, config.pes_per_fpga
    if n == 1:
        return []
    return [ReadRegion(f"links{a}", a * p, HostReadMem.LINK_COUNTERS, 0, len(LINK_COUNTER_NAMES) * (n - 1))
            for a in range(n)]


def _link_counters(config, reads):
    """``{name: array (fpgas, fpgas - 1)}`` from the regions of :func:`_link_regions`."""
    from .hw.protocol import LINK_COUNTER_NAMES

    n = config.fpgas
    if n == 1:
        return {}
    table = np.array([reads[f"links{a}"] for a in range(n)], dtype=np.int64).reshape(n, n - 1, -1)
    return {name: table[:, :, c] for c, name in enumerate(LINK_COUNTER_NAMES)}


def _diagnose_stall(outcome, config, links):
    """PE counters, then (several FPGAs) the links that hold the run."""
    from .hw.multi.link_report import diagnose_links

    pes = config.total_pes
    lines = _diagnose(outcome.watch, outcome.watch_before, outcome.scan_gap_cycles, pes, outcome.superstep)
    if links:
        p = config.pes_per_fpga
        rounds = [min(outcome.watch[f"pe{g}.supersteps"] for g in range(f * p, (f + 1) * p))
                  for f in range(config.fpgas)]
        stuck = diagnose_links(links, fpgas=config.fpgas, supersteps=rounds)
        lines += stuck or ("every link is drained and has delivered every barrier sent",)
    return lines


def simulate_verilator(system, plan, *, cache_dir=None, max_cycles=None, watchdog_cycles=1 << 20,
                       log=None, on_progress=None, total_messages=0):
    """Build (or reuse) the compiled simulator of ``system``, run ``plan`` and read everything back
    (with several FPGAs also the link counters, and a stalled run's diagnosis names the link)."""
    from .hw.protocol import COUNTER_NAMES, ROUND_LOGS, HostReadMem
    from .sim.verilator import HostWrites, ReadRegion, WatchItem, build_simulator, run_simulator

    config = system.config
    pes = config.total_pes
    build = build_simulator(system, cache_dir=cache_dir, log=log)
    writes = HostWrites.from_values(plan.pe, plan.mem, plan.addr, plan.data, data_bits=build.interface.data_bits)
    reads = [ReadRegion(f"state{g}", g, HostReadMem.VERTEX, 0, int(plan.num_local[g])) for g in range(pes)]
    reads += [ReadRegion(f"log.{name}{g}", g, code, 0, config.pe.max_rounds)
              for name, code in ROUND_LOGS.items() for g in range(pes)]
    reads += _link_regions(config)
    watch = [WatchItem(f"pe{g}.{name}", g, HostReadMem.COUNTERS, k, progress=name in PROGRESS_COUNTERS)
             for g in range(pes) for k, name in enumerate(COUNTER_NAMES)]

    def progress(cycle, superstep, values):
        if on_progress is not None:
            sent = sum(values[f"pe{g}.messages"] for g in range(pes))
            on_progress(cycle, superstep, sent, total_messages)

    # Scan often enough that the watchdog fires soon after its window (and progress stays lively).
    progress_cycles = max(256, min(1 << 16, watchdog_cycles // 4))
    outcome = run_simulator(build, writes, reads=reads, watch=watch, max_cycles=max_cycles,
                            watchdog_cycles=watchdog_cycles, progress_cycles=progress_cycles,
                            on_progress=progress)
    vertex_mask = (1 << system.layouts.vertex.size) - 1
    words = [[int(w) & vertex_mask for w in outcome.reads[f"state{g}"]] for g in range(pes)]
    state = plan.decode_states(words)
    counters = {name: np.array([outcome.watch[f"pe{g}.{name}"] for g in range(pes)], dtype=np.int64)
                for name in COUNTER_NAMES}
    round_log = {name: np.array([outcome.reads[f"log.{name}{g}"] for g in range(pes)], dtype=np.int64)
                 for name in ROUND_LOGS}
    supersteps = int(counters["supersteps"].max())
    links = _link_counters(config, outcome.reads)
    diagnosis = ()
    if outcome.status == "stalled":
        diagnosis = _diagnose_stall(outcome, config, links)
    return SimulationOutcome(
        status=outcome.status, cycles=outcome.cycles, load_cycles=outcome.load_cycles, state=state,
        supersteps=supersteps, messages=int(counters["messages"].sum()),
        rounds=_round_rows(round_log, supersteps, config.pe.max_rounds),
        stalls={name: int(counters[name].sum()) for name in BREAKDOWN_COUNTERS if name in counters},
        per_pe=tuple({name: int(counters[name][g]) for name in COUNTER_NAMES} for g in range(pes)),
        diagnosis=diagnosis, build_s=build.build_s, build_cached=build.cached, build_key=build.key,
        run_s=outcome.run_s, links=links)


def simulate_amaranth(system, plan, *, max_cycles=None, log=None):
    """Run ``plan`` in Amaranth's simulator (slow: tiny graphs only)."""
    from .hw.protocol import COUNTER_NAMES
    from .hw.multi.simulate import link_counter_reads
    from .sim.amaranth_backend import SimulationTimeout, simulate

    config = system.config
    extra = link_counter_reads(config) if config.fpgas > 1 else {}
    started = time.perf_counter()
    try:
        result = simulate(system, plan, max_cycles=max_cycles or 200_000, extra_reads=extra)
    except SimulationTimeout as error:
        raise ConfigError(f"amaranth simulation: {error}; raise --max-cycles or use --backend verilator") from None
    run_s = time.perf_counter() - started
    counters = result.counters
    supersteps = int(counters["supersteps"].max())
    pes = config.total_pes
    return SimulationOutcome(
        status="done", cycles=result.cycles, load_cycles=len(plan), state=plan.decode_states(result.state_words),
        supersteps=supersteps, messages=int(counters["messages"].sum()),
        rounds=_round_rows(result.round_log, supersteps, config.pe.max_rounds),
        stalls={name: int(counters[name].sum()) for name in BREAKDOWN_COUNTERS if name in counters},
        per_pe=tuple({name: int(counters[name][g]) for name in COUNTER_NAMES} for g in range(pes)),
        diagnosis=(), build_s=0.0, build_cached=False, build_key="", run_s=run_s,
        links={name[len("link_"):]: np.asarray(counters[name]).reshape(config.fpgas, config.fpgas - 1)
               for name in extra})


def run(options, *, log=None, on_progress=None):
    """Generate, build, load, simulate and verify; return the :class:`RunReport`.

    Parameters
    ----------
    options : RunOptions
    log : callable, optional
        Receives one-line messages (graph loaded, build time or cache use, ...).
    on_progress : callable, optional
        ``on_progress(cycle, superstep, messages, total_messages)`` while simulating
        (``total_messages`` is the reference's count).
    """
    from .hw.multi import build_system
    from .hw.pe.gather_forward import system_forwards
    from .model.platform import load_platform
    from .partition import partition as make_partition
    from .sim.loader import build_load

    log = log or (lambda message: None)
    algorithm = _algorithm(options.algorithm)
    given = {} if options.root is None else {"root": options.root}
    params = algorithm.params(given)
    platform = load_platform(options.platform)
    graph = algorithm.prepare(_load_graph(options.graph), params)
    log(f"graph {graph.name or options.graph}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges")
    partition = make_partition(graph, options.fpgas, options.pes, options.partition)
    reference = algorithm.reference(graph, params)
    reference_messages = int(sum(reference.messages_per_superstep))
    reference_supersteps = len(reference.messages_per_superstep)

    config = plan_hardware(algorithm, graph, partition, reference_supersteps,
                           local_bits=options.local_bits, edges_per_pe=options.edges_per_pe,
                           arch=options.arch, update_lanes=options.update_lanes,
                           gather_forwarding=options.gather_forwarding)
    system = build_system(config, platform=platform)  # several FPGAs: links as the platform's
    plan = build_load(algorithm, graph, partition, config, params, data_bits=len(system.host_wr_data))
    if options.backend == "verilator":
        outcome = simulate_verilator(system, plan, cache_dir=options.cache_dir, max_cycles=options.max_cycles,
                                     watchdog_cycles=options.watchdog_cycles, log=log,
                                     on_progress=on_progress, total_messages=reference_messages)
    else:
        outcome = simulate_amaranth(system, plan, max_cycles=options.max_cycles, log=log)
    log(f"simulated {outcome.cycles:,} cycles in {outcome.run_s:.2f} s ({outcome.status})")

    if outcome.status == "done":
        ok, detail = algorithm.check(graph, params, outcome.state, reference)
    else:
        ok, detail = False, f"simulation did not terminate: {outcome.status}"
    if ok and outcome.messages != reference_messages:
        ok, detail = False, (f"answer matches, but the hardware sent {outcome.messages} messages where the "
                             f"reference sends {reference_messages}")
    prediction, note = _predict(algorithm, graph, options, config.vertexid_bits)
    links = _link_report(system, graph, partition, outcome) if outcome.links else {}
    return RunReport(
        algorithm=algorithm.name, graph_name=graph.name or str(options.graph),
        vertices=graph.num_vertices, edges=graph.num_edges, fpgas=options.fpgas,
        pes_per_fpga=options.pes, arch=options.arch, partition=options.partition,
        local_bits=config.pe.local_bits, edges_per_pe=config.pe.edges_per_pe, update_lanes=config.pe.update_lanes,
        gather_forwarding=system_forwards(config), backend=options.backend,
        status=outcome.status, verified=bool(ok), check_detail=detail, supersteps=outcome.supersteps,
        cycles=outcome.cycles, messages=outcome.messages, reference_supersteps=reference_supersteps,
        reference_messages=reference_messages, f_clk_hz=platform.fpga.f_clk_hz, platform=platform.name,
        rounds=outcome.rounds, stalls=outcome.stalls, per_pe=outcome.per_pe,
        diagnosis=outcome.diagnosis, prediction=prediction, prediction_note=note,
        build_s=outcome.build_s, build_cached=outcome.build_cached, build_key=outcome.build_key,
        run_s=outcome.run_s, load_cycles=outcome.load_cycles, links=links,
    )


def _link_report(system, graph, partition, outcome):
    """Measured link figures beside the bytes per traversed edge the model expects."""
    from .hw.multi.link_report import bytes_per_edge_theory, crossing_fraction, link_figures

    config = system.config
    theory = bytes_per_edge_theory(config.arch, fpgas=config.fpgas, vertices=graph.num_vertices,
                                   edges=graph.num_edges, item_bits=system.item_bits,
                                   crossing=crossing_fraction(graph, partition.fpga_of_vertex))
    return link_figures(outcome.links, fpgas=config.fpgas, item_bits=system.item_bits,
                        word_bits=system.link_config.word_bits, messages=outcome.messages, theory=theory)
