"""The whole pipeline for one :class:`~gravfm.flow.RunOptions`: prepare -> plan -> elaborate ->
load -> simulate -> verify -> report."""

from .elaboration import elaborate
from .loading import load
from .planning import plan
from .preparation import prepare
from .reporting import report
from .simulation import make_backend, simulate
from .verification import verify

__all__ = ["run"]


def run(options, *, log=None, on_progress=None):
    """Generate, build, load, simulate and verify; return the :class:`~gravfm.flow.RunReport`.

    Parameters
    ----------
    options : RunOptions
    log : callable, optional
        Receives one-line messages (graph loaded, build time or cache use, ...).
    on_progress : callable, optional
        ``on_progress(cycle, superstep, messages, total_messages)`` while simulating
        (``total_messages`` is the reference's count).
    """
    from ..model.platform import load_platform

    log = log or (lambda message: None)
    platform = load_platform(options.platform)
    prepared = prepare(options.algorithm, options.graph, params=options.algorithm_params)
    graph = prepared.graph
    log(f"graph {prepared.graph_label}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges")
    hardware = plan(prepared, fpgas=options.fpgas, pes=options.pes, partition=options.partition,
                    arch=options.arch, local_bits=options.local_bits, edges_per_pe=options.edges_per_pe,
                    update_lanes=options.update_lanes, gather_forwarding=options.gather_forwarding,
                    **options.hardware)
    top = elaborate(hardware, platform=platform, link=options.link, use_filter=options.use_filter)
    writes = load(prepared, hardware, top)
    backend = options.backend if not isinstance(options.backend, str) else make_backend(
        options.backend, cache_dir=options.cache_dir, max_cycles=options.max_cycles,
        watchdog_cycles=options.watchdog_cycles)
    readback = simulate(top, writes, backend, log=log, on_progress=on_progress,
                        total_messages=prepared.reference_messages)
    log(f"simulated {readback.cycles:,} cycles in {readback.run_s:.2f} s ({readback.status})")
    return report(prepared, hardware, top, readback, verify(prepared, readback), platform=platform,
                  backend=backend.name, partition=options.partition)
