"""The compiled back-end: build (or reuse) a top's Verilator simulator, run it, read it back.

:class:`VerilatorBackend` turns a :class:`~gravfm.sim.loader.LoadPlan` into the harness's host
writes, asks for the vertex states, the round logs and (several FPGAs) the link counters after
the run, watches the PE counters while it runs (progress display, watchdog) and returns a
:class:`~gravfm.sim.readback.Readback`; a stalled run carries its diagnosis.
"""

import os
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..hw.protocol import COUNTER_NAMES, LINK_COUNTER_NAMES, ROUND_LOGS, HostReadMem
from ..hw.unused import silence_unused
from .readback import PROGRESS_COUNTERS, Readback, diagnose_stall, logged_rounds
from .verilator import HostWrites, ReadRegion, WatchItem, build_simulator, run_simulator

__all__ = ["VerilatorBackend"]


@dataclass(frozen=True)
class VerilatorBackend:
    """Verilator with the gravfm C++ harness (one thread).

    Parameters
    ----------
    cache_dir : str, optional
        Build cache folder (default ``$GRAVFM_CACHE`` or ``$XDG_CACHE_HOME/gravfm``).
    max_cycles : int, optional
        Stop the simulation after this many cycles (status ``max_cycles``).
    watchdog_cycles : int
        Stop a run that makes no progress for this many cycles (status ``stalled``).
    per_fpga : bool
        A system of several FPGAs as one compiled FPGA model instantiated per FPGA, joined by
        C++ link models (:mod:`gravfm.sim.system_file`): one build per FPGA design, whatever the
        number of FPGAs. False compiles the whole system as one model (the reference the
        per-FPGA simulation is checked against: the same cycles and counters).
    threads : int, optional
        Per-FPGA simulation: threads advancing the FPGA models (identical results for any
        number). Default: the machine's cores, at most the FPGAs. With links of latency L >= 4
        (FIFO depth >= 2, no faults, no link check) the threads meet every L - 2 cycles at most,
        else every cycle.
    trace : gravfm.sim.trace.TraceRequest, optional
        Dump the run's waveform (a traced build, a cache entry of its own); per-FPGA simulation
        writes one file per FPGA (:meth:`~gravfm.sim.trace.TraceRequest.paths`).
    extra_flags : tuple of str
        Further Verilator options for the build (part of its cache key), e.g. the C++
        optimisation level ``("-MAKEFLAGS", "OPT_FAST=-O1")`` (benchmarks/bench_build.py).
    parallel_load : bool
        The FPGA tops get a write port per PE (:class:`~gravfm.hw.FpgaTop`'s ``load``) and every
        PE loads in the same cycle; False loads one write a cycle over the host bus, as on a
        board (the same run, cycle for cycle: tests/test_sim_parallel_load.py).
    """

    cache_dir: str | None = None
    max_cycles: int | None = None
    watchdog_cycles: int = 1 << 20
    per_fpga: bool = True
    threads: int | None = None
    trace: object = None
    extra_flags: tuple = ()
    parallel_load: bool = True

    name = "verilator"

    def __post_init__(self):
        if self.threads is not None and (isinstance(self.threads, bool) or not isinstance(self.threads, int)
                                         or self.threads < 1):
            raise ConfigError(f"threads must be a positive integer, not {self.threads!r}")
        if isinstance(self.watchdog_cycles, bool) or not isinstance(self.watchdog_cycles, int) \
                or self.watchdog_cycles < 1:
            raise ConfigError(f"watchdog_cycles must be positive, not {self.watchdog_cycles!r}")

    def simulate(self, top, load, *, log=None, on_progress=None, total_messages=0, on_stage=None):
        """Build (or reuse) the simulator of ``top``, run ``load`` and read everything back.

        ``on_progress(cycle, superstep, messages, total_messages)`` is called at every progress
        scan; ``on_stage(name, detail)`` when the build (``building``) and the run (``loading``,
        then ``simulating`` with the first progress scan) begin.
        """
        from ..hw.fpga import FpgaTop  # deferred: Amaranth (heavy)
        from .system_file import system_file  # deferred: Amaranth (heavy)

        config = top.config
        pes, n = config.total_pes, config.fpgas
        separate = self.per_fpga and n > 1
        threads = 1
        if separate:
            silence_unused(top)   # its tops are simulated, the system around them is the harness
            threads = min(os.cpu_count() or 1, n) if self.threads is None else self.threads
            if threads > n:
                raise ConfigError(f"threads={threads}: more threads than the system's {n} FPGAs")
        elif self.threads not in (None, 1):
            raise ConfigError(f"threads={self.threads}: threads simulate the FPGAs of a system of several, "
                              f"here {n} FPGA(s) as one model")
        stage = on_stage or (lambda name, detail="": None)
        traced = " with waveform tracing" if self.trace is not None else ""
        stage("building", f"Verilator model of {f'the FPGA design ({n} models of it)' if separate else 'the system'}"
                          f"{traced}")
        built = top.tops[0] if separate else top
        if self.parallel_load and isinstance(built, FpgaTop):
            built = built.with_load_ports()  # every PE loads in the same cycle (FpgaTop's ``load``)
        build = build_simulator(built, cache_dir=self.cache_dir, log=log,
                                extra_flags=self.extra_flags, trace=None if self.trace is None else self.trace.kind)
        stage("loading", f"{len(load):,} host writes")
        writes = HostWrites.from_values(load.pe, load.mem, load.addr, load.data,
                                        data_bits=build.interface.data_bits)
        reads = [ReadRegion(f"state{g}", g, HostReadMem.VERTEX, 0, int(load.num_local[g])) for g in range(pes)]
        reads += [ReadRegion(f"log.{name}{g}", g, code, 0, config.pe.max_rounds)
                  for name, code in ROUND_LOGS.items() for g in range(pes)]
        # Link counters: one region per sending FPGA, through its first PE.
        reads += [ReadRegion(f"links{a}", a * config.pes_per_fpga, HostReadMem.LINK_COUNTERS, 0,
                             len(LINK_COUNTER_NAMES) * (n - 1)) for a in range(n) if n > 1]
        watch = [WatchItem(f"pe{g}.{name}", g, HostReadMem.COUNTERS, k, progress=name in PROGRESS_COUNTERS)
                 for g in range(pes) for k, name in enumerate(COUNTER_NAMES)]

        started = []

        def progress(cycle, superstep, values):
            if not started:
                started.append(True)
                stage("simulating", "")
            if on_progress is not None:
                sent = sum(values[f"pe{g}.messages"] for g in range(pes))
                on_progress(cycle, superstep, sent, total_messages)

        # Scan often enough that the watchdog fires soon after its window (and progress stays lively).
        progress_cycles = max(256, min(1 << 16, self.watchdog_cycles // 4))
        outcome = run_simulator(build, writes, reads=reads, watch=watch, max_cycles=self.max_cycles,
                                watchdog_cycles=self.watchdog_cycles, progress_cycles=progress_cycles,
                                on_progress=progress, system=system_file(top) if separate else None,
                                threads=threads, memory=getattr(load, "memory", None),
                                env=None if self.trace is None else self.trace.environment(n if separate else 1))
        vertex_mask = (1 << top.layouts.vertex.size) - 1
        words = [[int(w) & vertex_mask for w in outcome.reads[f"state{g}"]] for g in range(pes)]
        counters = {name: np.array([outcome.watch[f"pe{g}.{name}"] for g in range(pes)], dtype=np.int64)
                    for name in COUNTER_NAMES}
        rounds = logged_rounds(counters, config.pe.max_rounds)
        round_log = {name: np.array([outcome.reads[f"log.{name}{g}"][:rounds] for g in range(pes)],
                                    dtype=np.int64).reshape(pes, rounds) for name in ROUND_LOGS}
        links = {}
        if n > 1:
            table = np.array([outcome.reads[f"links{a}"] for a in range(n)], dtype=np.int64).reshape(n, n - 1, -1)
            links = {name: table[:, :, c] for c, name in enumerate(LINK_COUNTER_NAMES)}
        diagnosis = diagnose_stall(outcome, config, links) if outcome.status == "stalled" else ()
        return Readback(status=outcome.status, cycles=outcome.cycles, load_cycles=outcome.load_cycles,
                        state=load.decode_states(words), counters=counters, round_log=round_log, links=links,
                        diagnosis=diagnosis, build_s=build.build_s, build_cpu_s=build.build_cpu_s, build_cached=build.cached,
                        build_key=build.key, run_s=outcome.run_s, threads=threads,
                        load_clocked_cycles=outcome.load_clocked_cycles)
