"""Run a multi-FPGA system in Amaranth's simulator and check it against the software reference.

:func:`run_multi_amaranth` mirrors :func:`gravfm.sim.amaranth_backend.run_amaranth` (same
:class:`~gravfm.sim.amaranth_backend.RunResult`), with the FPGA count, the FPGA-level partition
and the link model as extra knobs; the host interface is driven by the same ``simulate``.
The link counters (host reads, ``host_rd_mem = 4``) land in ``sim.counters``.
"""

from ...errors import ConfigError

__all__ = ["run_multi_amaranth"]


def run_multi_amaranth(algorithm, graph, *, fpgas, pes=1, params=None, partition_method="greedy",
                       link=None, use_filter=True, local_bits=None, edges_per_pe=None,
                       max_cycles=200_000, **config_options):
    """Run ``algorithm`` on ``graph`` with ``fpgas`` FPGAs of ``pes`` PEs each.

    Parameters
    ----------
    fpgas, pes : int
    partition_method : {"greedy", "sortedgreedy", "roundrobin", "metis"}
    link : gravfm.hw.multi.LinkConfig, optional
    use_filter : bool
    local_bits, edges_per_pe : int, optional
        Capacities (default: just enough for the graph).
    max_cycles : int
    **config_options
        Further :class:`~gravfm.hw.SystemConfig` fields (``arch="gravf"``: the GraVF baseline).

    Returns
    -------
    gravfm.sim.amaranth_backend.RunResult
        With ``sim.counters`` extended by ``link_<name>`` for every name of
        :data:`~gravfm.hw.protocol.LINK_COUNTER_NAMES` (and ``link_words``): arrays of shape
        (fpgas, fpgas - 1), row = sending FPGA, column ``k`` = link to ``peers_of(row)[k]``.
    """
    from ...partition import edge_stores, partition
    from ...sim.amaranth_backend import RunResult
    from ...sim.loader import build_load
    from ..config import SystemConfig
    from .system import MultiFpgaSystem

    params = algorithm.params(params)
    prepared = algorithm.prepare(graph, params)
    if fpgas * pes > max(prepared.num_vertices, 1):
        raise ConfigError(f"{fpgas} FPGAs x {pes} PEs is more PEs than the {prepared.num_vertices} vertices")
    parts = partition(prepared, fpgas, pes, method=partition_method)
    if local_bits is None:
        local_bits = parts.min_local_bits
    if edges_per_pe is None:
        stores = edge_stores(prepared, parts, local_bits, layout=config_options.get("arch", "gravfm"))
        edges_per_pe = max(1, int(stores.edges_per_pe.max()))
    reference = algorithm.reference(prepared, params)
    config_options.setdefault("max_rounds", max(4, getattr(reference, "supersteps", 4)))
    config = SystemConfig.of(algorithm=algorithm, fpgas=fpgas, pes_per_fpga=pes, local_bits=local_bits,
                          edges_per_pe=edges_per_pe, **config_options)
    system = MultiFpgaSystem(config, link=link, use_filter=use_filter)
    plan = build_load(algorithm, prepared, parts, config, params, data_bits=len(system.host_wr_data))
    sim = simulate_with_links(system, plan, max_cycles=max_cycles)
    state = plan.decode_states(sim.state_words)
    ok, detail = algorithm.check(prepared, params, state, reference)
    supersteps = int(sim.counters["supersteps"].max())
    rounds = min(supersteps, config.pe.max_rounds)
    return RunResult(
        ok=ok, detail=detail, state=state, reference=reference, sim=sim,
        messages_per_superstep=[int(v) for v in sim.round_log["messages"][:, :rounds].sum(axis=0)],
        updates_per_superstep=[int(v) for v in sim.round_log["updates"][:, :rounds].sum(axis=0)],
        supersteps=supersteps, config=config, graph=prepared)


def link_counter_reads(config):
    """Host reads ``{name: [(pe, mem, addr), ...]}`` of every link counter, FPGA by FPGA, link by link."""
    from ..protocol import LINK_COUNTER_NAMES, HostReadMem, link_counter_address

    n, p = config.fpgas, config.pes_per_fpga
    return {f"link_{name}": [(a * p, HostReadMem.LINK_COUNTERS, link_counter_address(k, c)) for a in range(n) for k in range(n - 1)]
            for c, name in enumerate(LINK_COUNTER_NAMES)}


def simulate_with_links(system, plan, *, max_cycles):
    """:func:`gravfm.sim.amaranth_backend.simulate`, plus the link counters in ``counters``
    (``link_items``, ``link_bits``, ... and ``link_words`` = bits packed into ``word_bits``-wide
    words: shape (fpgas, fpgas - 1))."""
    from ...sim import amaranth_backend

    n = system.config.fpgas
    result = amaranth_backend.simulate(system, plan, max_cycles=max_cycles,
                                       extra_reads=link_counter_reads(system.config))
    for name in link_counter_reads(system.config):
        result.counters[name] = result.counters[name].reshape(n, n - 1)
    # Items are packed into the link's words back to back.
    word_bits = system.link_config.word_bits
    result.counters["link_words"] = -(-result.counters["link_bits"] // word_bits)
    return result
