"""Run a generated system in Amaranth's own simulator, through the host interface.

:func:`simulate` drives a :class:`~gravfm.hw.System` exactly as a board's host would: it applies
the :class:`~gravfm.sim.loader.LoadPlan` writes one per cycle, pulses ``start``, waits for
``done``, then reads states, counters and the per-round log. :func:`run_amaranth` does the whole
job for an algorithm and a graph: prepare, partition, size the build, load, simulate, decode
and check against the software reference.

Amaranth's simulator runs about a thousand cycles per second: keep graphs tiny (tens of vertices).
"""

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..hw.protocol import COUNTER_NAMES, HOST_READ_LATENCY, ROUND_LOGS, HostReadMem
from .loader import build_load

__all__ = ["SimResult", "RunResult", "simulate", "run_amaranth", "SimulationTimeout"]


class SimulationTimeout(RuntimeError):
    """The system did not raise ``done`` within the cycle budget (a hardware bug or a too-small budget)."""


@dataclass(frozen=True)
class SimResult:
    """What the host reads after a run.

    Attributes
    ----------
    cycles : int
        Cycles from ``start`` to ``done``.
    state_words : list of list of int
        Vertex-state words per PE (local indices ``0 .. num_local-1``).
    counters : dict of str to np.ndarray
        Per-PE counter values, by name (``gravfm.hw.protocol.COUNTER_NAMES``).
    round_log : dict of str to np.ndarray
        ``messages``, ``updates``, ``cycle``: arrays of shape (PEs, rounds read).
    """

    cycles: int
    state_words: list
    counters: dict
    round_log: dict


@dataclass(frozen=True)
class RunResult:
    """Outcome of :func:`run_amaranth`.

    Attributes
    ----------
    ok : bool
        The answer passed the algorithm's check against the reference.
    detail : str
        Why not, when not ok.
    state : dict of str to np.ndarray
        Final vertex state per field, original vertex order.
    reference : object
        The software reference's result.
    sim : SimResult
    messages_per_superstep, updates_per_superstep : list of int
        Summed over PEs from the round log, ``supersteps`` entries.
    supersteps : int
    """

    ok: bool
    detail: str
    state: dict
    reference: object
    sim: SimResult
    messages_per_superstep: list
    updates_per_superstep: list
    supersteps: int
    config: object
    graph: object


def simulate(system, plan, *, max_cycles=200_000, log_rounds=None, extra_reads=None):
    """Load, start and read back one run of ``system`` in Amaranth's simulator.

    Parameters
    ----------
    system : gravfm.hw.System
    plan : gravfm.sim.loader.LoadPlan
    max_cycles : int
        Cycle budget after ``start``; exceeding it raises :class:`SimulationTimeout`.
    log_rounds : int, optional
        Rounds of the round log to read (default: all ``max_rounds`` entries).
    extra_reads : dict of str to list of (pe, mem, addr), optional
        Further host reads after the run (e.g. a multi-FPGA system's link counters); each
        name becomes an entry of ``counters`` holding the values read, in order.

    Returns
    -------
    SimResult
    """
    from amaranth.sim import Simulator


    config = system.config
    if plan.data_bits > len(system.host_wr_data):
        raise ConfigError(f"load words are {plan.data_bits} bits, host_wr_data is {len(system.host_wr_data)}")
    log_rounds = config.pe.max_rounds if log_rounds is None else min(log_rounds, config.pe.max_rounds)
    pes = config.total_pes
    outcome = {}

    async def bench(ctx):
        for pe, mem, addr, data in zip(plan.pe, plan.mem, plan.addr, plan.data):
            ctx.set(system.host_wr_en, 1)
            ctx.set(system.host_wr_pe, int(pe))
            ctx.set(system.host_wr_mem, int(mem))
            ctx.set(system.host_wr_addr, int(addr))
            ctx.set(system.host_wr_data, int(data))
            await ctx.tick()
        ctx.set(system.host_wr_en, 0)
        ctx.set(system.start, 1)
        await ctx.tick()
        ctx.set(system.start, 0)
        cycles = 1
        while not ctx.get(system.done):
            if cycles >= max_cycles:
                raise SimulationTimeout(f"no done after {max_cycles} cycles (superstep {ctx.get(system.superstep)})")
            await ctx.tick()
            cycles += 1
        outcome["cycles"] = cycles

        async def read(pe, mem, addr):
            ctx.set(system.host_rd_pe, pe)
            ctx.set(system.host_rd_mem, mem)
            ctx.set(system.host_rd_addr, addr)
            await ctx.tick().repeat(HOST_READ_LATENCY)
            return ctx.get(system.host_rd_data)

        vertex_mask = (1 << system.layouts.vertex.size) - 1
        outcome["states"] = [[(await read(g, HostReadMem.VERTEX, a)) & vertex_mask
                              for a in range(int(plan.num_local[g]))] for g in range(pes)]
        outcome["counters"] = {name: np.array([await read(g, HostReadMem.COUNTERS, k) for g in range(pes)],
                                              dtype=np.int64)
                               for k, name in enumerate(COUNTER_NAMES)}
        outcome["log"] = {name: np.array([[await read(g, code, r) for r in range(log_rounds)]
                                          for g in range(pes)], dtype=np.int64)
                          for name, code in ROUND_LOGS.items()}
        for name, reads in (extra_reads or {}).items():
            outcome["counters"][name] = np.array([await read(*where) for where in reads], dtype=np.int64)

    sim = Simulator(system)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return SimResult(cycles=outcome["cycles"], state_words=outcome["states"],
                     counters=outcome["counters"], round_log=outcome["log"])


def run_amaranth(algorithm, graph, *, params=None, pes=1, partition_method="greedy", local_bits=None,
                 edges_per_pe=None, max_cycles=200_000, **config_options):
    """Run ``algorithm`` on ``graph`` in a system of ``pes`` PEs and check it against the reference.

    The build is sized to fit the graph unless ``local_bits``/``edges_per_pe`` are given.
    Extra keyword arguments go to :class:`~gravfm.hw.SystemConfig` (queue depths, ...).

    Returns
    -------
    RunResult
    """
    from ..hw import FpgaTop, SystemConfig
    from ..partition import gravfm_edge_stores, partition

    params = algorithm.params(params)
    prepared = algorithm.prepare(graph, params)
    parts = partition(prepared, 1, pes, method=partition_method)
    if local_bits is None:
        local_bits = parts.min_local_bits
    if edges_per_pe is None:
        stores = gravfm_edge_stores(prepared, parts, local_bits)
        edges_per_pe = max(1, int(stores.edges_per_pe.max()))
    rounds_needed = None
    reference = algorithm.reference(prepared, params)
    if hasattr(reference, "supersteps"):
        rounds_needed = reference.supersteps
    config_options.setdefault("max_rounds", max(4, rounds_needed or 4))
    config = SystemConfig.of(algorithm=algorithm, pes_per_fpga=pes, local_bits=local_bits,
                          edges_per_pe=edges_per_pe, **config_options)
    system = FpgaTop(config)
    plan = build_load(algorithm, prepared, parts, config, params, data_bits=len(system.host_wr_data))
    sim = simulate(system, plan, max_cycles=max_cycles)
    state = plan.decode_states(sim.state_words)
    ok, detail = algorithm.check(prepared, params, state, reference)
    supersteps = int(sim.counters["supersteps"].max()) if pes else 0
    rounds = min(supersteps, config.pe.max_rounds)
    return RunResult(
        ok=ok, detail=detail, state=state, reference=reference, sim=sim,
        messages_per_superstep=[int(v) for v in sim.round_log["messages"][:, :rounds].sum(axis=0)],
        updates_per_superstep=[int(v) for v in sim.round_log["updates"][:, :rounds].sum(axis=0)],
        supersteps=supersteps, config=config, graph=prepared)
