"""The Amaranth-simulator back-end: drive a system top through its host interface, read it back.

:class:`AmaranthBackend` runs a top exactly as a board's host would: it applies the
:class:`~gravfm.sim.loader.LoadPlan` writes one per cycle, pulses ``start``, waits for ``done``,
then reads the counters, the per-round log of the supersteps run, the vertex states and (several
FPGAs) the link counters, and returns a :class:`~gravfm.sim.readback.Readback`. A top with
edge-memory ports (``mem``) has them served by Python memory models (:mod:`.memory_bench`) from
the load's :class:`~gravfm.sim.memory_params.MemoryLoad`.

Amaranth's simulator runs about a thousand cycles per second: keep graphs tiny (tens of vertices).
"""

import time
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..hw.protocol import COUNTER_NAMES, HOST_READ_LATENCY, ROUND_LOGS, HostReadMem
from .memory_bench import memory_testbench
from .readback import Readback, link_counter_reads, logged_rounds

__all__ = ["AmaranthBackend", "SimulationTimeout", "host_writes", "run_to_done", "host_read"]


class SimulationTimeout(RuntimeError):
    """The system did not raise ``done`` within the cycle budget (a hardware bug or a too-small budget)."""


@dataclass(frozen=True)
class AmaranthBackend:
    """Amaranth's own simulator (slow: tiny graphs only; no build, no watchdog).

    Parameters
    ----------
    max_cycles : int, optional
        Cycle budget after ``start`` (default 200 000); a run that exceeds it raises
        :class:`~gravfm.errors.ConfigError`.
    """

    max_cycles: int | None = None

    name = "amaranth"

    def __post_init__(self):
        if self.max_cycles is not None and (isinstance(self.max_cycles, bool) or
                                            not isinstance(self.max_cycles, int) or self.max_cycles < 1):
            raise ConfigError(f"max_cycles must be a positive integer, not {self.max_cycles!r}")

    def simulate(self, top, load, *, log=None, on_progress=None, total_messages=0, on_stage=None):
        """Load, run and read back ``top`` (``log`` and ``on_progress`` are not called;
        ``on_stage("simulating", ...)`` once, as load and run are one simulation)."""
        if on_stage is not None:
            on_stage("simulating", "Amaranth simulator (load and run)")
        budget = self.max_cycles or 200_000
        started = time.perf_counter()
        try:
            words = drive(top, load, max_cycles=budget)
        except SimulationTimeout as error:
            raise ConfigError(f"amaranth simulation: {error}; raise --max-cycles or use --backend verilator") \
                from None
        config = top.config
        links = {name: words["links"][name].reshape(config.fpgas, config.fpgas - 1)
                 for name in words["links"]}
        return Readback(status="done", cycles=words["cycles"], load_cycles=len(load),
                        state=load.decode_states(words["states"]), counters=words["counters"],
                        round_log=words["log"], links=links, run_s=time.perf_counter() - started)


async def host_writes(ctx, top, writes):
    """Testbench step: apply host writes ``(pe, mem, addr, data)`` to ``top``, one per cycle."""
    for pe, mem, addr, data in writes:
        ctx.set(top.host_wr_en, 1)
        ctx.set(top.host_wr_pe, int(pe))
        ctx.set(top.host_wr_mem, int(mem))
        ctx.set(top.host_wr_addr, int(addr))
        ctx.set(top.host_wr_data, int(data))
        await ctx.tick()
    ctx.set(top.host_wr_en, 0)


async def run_to_done(ctx, top, *, max_cycles):
    """Testbench step: pulse ``start``, wait for ``done``; the cycles from start to done (raises
    :class:`SimulationTimeout` after ``max_cycles``)."""
    ctx.set(top.start, 1)
    await ctx.tick()
    ctx.set(top.start, 0)
    cycles = 1
    while not ctx.get(top.done):
        if cycles >= max_cycles:
            raise SimulationTimeout(f"no done after {max_cycles} cycles (superstep {ctx.get(top.superstep)})")
        await ctx.tick()
        cycles += 1
    return cycles


async def host_read(ctx, top, pe, mem, addr):
    """Testbench step: one host read of ``top`` (its data comes ``HOST_READ_LATENCY`` cycles later)."""
    ctx.set(top.host_rd_pe, pe)
    ctx.set(top.host_rd_mem, mem)
    ctx.set(top.host_rd_addr, addr)
    await ctx.tick().repeat(HOST_READ_LATENCY)
    return ctx.get(top.host_rd_data)


def drive(top, load, *, max_cycles):
    """Apply ``load``'s host writes, start, wait for ``done`` and read everything back.

    Returns
    -------
    dict
        ``cycles`` (``start`` to ``done``), ``states`` (vertex-state words per PE), ``counters``
        and ``log`` (arrays as in :class:`~gravfm.sim.readback.Readback`), ``links`` (link
        counters by name, flat, FPGA by FPGA).
    """
    from amaranth.sim import Simulator  # deferred: Amaranth (heavy)

    config = top.config
    if load.data_bits > len(top.host_wr_data):
        raise ConfigError(f"load words are {load.data_bits} bits, host_wr_data is {len(top.host_wr_data)}")
    pes = config.total_pes
    words = {}

    async def bench(ctx):
        await host_writes(ctx, top, zip(load.pe, load.mem, load.addr, load.data))
        words["cycles"] = await run_to_done(ctx, top, max_cycles=max_cycles)

        async def read_all(where):
            return np.array([await host_read(ctx, top, *place) for place in where], dtype=np.int64)

        counters = {name: await read_all([(g, HostReadMem.COUNTERS, k) for g in range(pes)])
                    for k, name in enumerate(COUNTER_NAMES)}
        # Only the rounds run: the rest of the log is empty, and each read costs simulated cycles.
        rounds = logged_rounds(counters, config.pe.max_rounds)
        words["counters"] = counters
        words["log"] = {name: (await read_all([(g, code, r) for g in range(pes) for r in range(rounds)]))
                        .reshape(pes, rounds) for name, code in ROUND_LOGS.items()}
        vertex_mask = (1 << top.layouts.vertex.size) - 1
        words["states"] = [[(await host_read(ctx, top, g, HostReadMem.VERTEX, a)) & vertex_mask
                            for a in range(int(load.num_local[g]))] for g in range(pes)]
        words["links"] = {name: await read_all(where) for name, where in link_counter_reads(config).items()}

    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    memory = getattr(load, "memory", None)   # LoadPlan.memory: a MemoryLoad or None
    if "mem" in top.signature.members:
        if memory is None:
            raise ConfigError("the top has edge-memory ports, but the load has no memory (LoadPlan.memory)")
        serve, _ = memory_testbench(top, memory)
        sim.add_testbench(serve, background=True)
    elif memory is not None:
        raise ConfigError("the load has an edge memory, but the top has no memory ports")
    sim.run()
    return words
