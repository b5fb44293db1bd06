"""The whole pipeline for one :class:`~gravfm.flow.RunOptions`: prepare -> plan -> elaborate ->
load -> simulate -> verify -> report."""

from dataclasses import replace

from ..algorithms.loading import resolve_algorithm
from ..errors import GravfmError
from ..model import check_fit, model_params
from ..model.platform import load_platform
from .elaboration import elaborate
from .loading import load
from .memory import check_memory_fit, edge_memory_of, memory_channels, memory_hardware, memory_load, platform_for_run
from .planning import plan
from .preparation import prepare
from .reporting import report
from .simulation import check_backend, make_backend, simulate
from .verification import verify

__all__ = ["run"]


def run(options, *, log=None, on_progress=None, on_stage=None):
    """Generate, build, load, simulate and verify; return the :class:`~gravfm.flow.RunReport`.

    Parameters
    ----------
    options : RunOptions
    log : callable, optional
        Receives one-line messages (graph loaded, build time or cache use, ...).
    on_progress : callable, optional
        ``on_progress(cycle, superstep, messages, total_messages)`` while simulating
        (``total_messages`` is the reference's count).
    on_stage : callable, optional
        ``on_stage(name, detail)`` as each stage begins: ``preparing`` (graph, reference),
        ``generating`` (plan, kernel check, hardware, load), then the back-end's ``building``,
        ``loading`` and ``simulating``, and ``verifying``.
    """
    log = log or (lambda message: None)
    stage = on_stage or (lambda name, detail="": None)
    # Inputs first, each refused with one line before any work: the algorithm, its back-end,
    # the platform's size, the graph and parameters, the fit in the platform's memory.
    algorithm = resolve_algorithm(options.algorithm)
    check_backend(algorithm, options.backend)
    backend = options.backend if not isinstance(options.backend, str) else make_backend(
        options.backend, cache_dir=options.cache_dir, max_cycles=options.max_cycles,
        watchdog_cycles=options.watchdog_cycles, threads=options.threads, trace=options.trace)
    platform = load_platform(options.platform)
    platform.check_system(options.fpgas, options.pes)
    stage("preparing", "graph and software reference")
    prepared = prepare(algorithm, options.graph, params=options.algorithm_params,
                       graph_options=options.graph_options)
    graph = prepared.graph
    log(f"graph {prepared.graph_label}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges")
    edge_memory = edge_memory_of(options.edge_memory, platform)
    offchip = edge_memory == "offchip"
    platform = platform_for_run(platform, edge_memory, options.memory)
    stage("generating", f"{options.fpgas} FPGA x {options.pes} PE hardware")
    hardware = plan(prepared, fpgas=options.fpgas, pes=options.pes, partition=options.partition,
                    arch=options.arch, local_bits=options.local_bits, edges_per_pe=options.edges_per_pe,
                    update_lanes=options.update_lanes, gather_forwarding=options.gather_forwarding,
                    hub_degree=options.hub_degree,
                    edge_memory=memory_hardware(platform, options.memory) if offchip else None,
                    memory_channels=memory_channels(platform) if offchip else 1,
                    **options.hardware)
    check_fit(platform, model_params(algorithm, vertexid_bits=hardware.config.vertexid_bits),
              graph.num_vertices, hardware.config.fpgas)
    check_memory_fit(hardware, platform)
    top = elaborate(hardware, platform=platform, link=options.link, use_filter=options.use_filter,
                    kernel_check=options.check_kernels, log=log, link_options=options.link_options)
    writes = _load_or_discard(prepared, hardware, top)
    if offchip:
        writes = replace(writes, memory=memory_load(writes, platform, options.memory))
    readback = simulate(top, writes, backend, log=log, on_progress=on_progress,
                        total_messages=prepared.reference_messages, on_stage=on_stage)
    log(f"simulated {readback.cycles:,} cycles in {readback.run_s:.2f} s ({readback.status})")
    stage("verifying", "against the software reference")
    return report(prepared, hardware, top, readback, verify(prepared, readback), platform=platform,
                  backend=backend.name, partition=options.partition)


def _load_or_discard(prepared, hardware, top):
    """:func:`load`; on a refusal (a value wider than its field) the top built for the run is
    marked as not to be used, so that the one-line error is not followed by Amaranth's
    "created but never used" warning (as :mod:`gravfm.hw.kernels` marks its benched kernels)."""
    try:
        return load(prepared, hardware, top)
    except GravfmError:
        top._MustUse__silence = True
        raise
