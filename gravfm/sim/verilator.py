"""Compiled simulation of a generated system with Verilator: running a build.

A build (:func:`build_simulator`, :mod:`gravfm.sim.verilator_build`) is an executable of the top
and the C++ harness. A run writes the host writes to a load file and a plan of what to read
back, starts the executable, follows its progress lines and reads its results.

Typical use::

    build = build_simulator(top)                       # compiles, or finds it in the cache
    outcome = run_simulator(build, writes, reads=[ReadRegion("state", pe=0, mem=0, addr=0, count=8)])
    outcome.status, outcome.cycles, outcome.reads["state"]
"""

import json
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..hw.protocol import join_words, split_words, write_load_file
from .harness_header import words
from .plan_file import ReadRegion, WatchItem, write_plan
from .verilator_build import (HostInterface, SimulatorError, SimulatorSources, VerilatorBuild, build_simulator,
                              end_process_group, export_verilog, harness_source, simulator_sources,
                              verilator_executable)

__all__ = [
    "HostInterface", "HostWrites", "ReadRegion", "WatchItem", "VerilatorBuild", "SimOutcome",
    "SimulatorError", "SimulatorSources", "export_verilog", "simulator_sources", "build_simulator",
    "run_simulator", "verilator_executable", "harness_source",
]

STATUSES = ("done", "stalled", "max_cycles", "interrupted")


@dataclass(frozen=True)
class HostWrites:
    """A sequence of host writes ``(pe, mem, addr, data)``, applied in order before ``start``.

    ``data`` is ``uint32[n, words]`` with the least significant 32-bit word first.
    """

    pe: np.ndarray
    mem: np.ndarray
    addr: np.ndarray
    data: np.ndarray

    @classmethod
    def from_values(cls, pe, mem, addr, data, *, data_bits):
        """Build from integer sequences; ``data`` may be any ints below ``2**data_bits``."""
        pe, mem, addr = (np.asarray(x, dtype=np.int64).reshape(-1) for x in (pe, mem, addr))
        if not (len(pe) == len(mem) == len(addr) == len(data)):
            raise ValueError("pe, mem, addr and data must have the same length")
        return cls(pe.astype(np.uint32), mem.astype(np.uint32), addr.astype(np.uint32),
                   split_words(data, data_bits))

    def __len__(self):
        return len(self.pe)

    @classmethod
    def concatenate(cls, parts):
        """One write sequence made of ``parts`` in order."""
        parts = list(parts)
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("pe", "mem", "addr", "data")))

    def write_load_file(self, path, data_words):
        """Write the binary load file read by the harness (:func:`gravfm.hw.protocol.write_load_file`)."""
        if self.data.shape[1] != data_words:
            raise SimulatorError(f"host writes carry {self.data.shape[1]} data words, build expects {data_words}")
        write_load_file(path, self.pe, self.mem, self.addr, self.data)


@dataclass(frozen=True)
class SimOutcome:
    """What a compiled simulation reports.

    Attributes
    ----------
    status : str
        ``done`` (the top raised ``done``), ``stalled`` (watchdog: no progress for the configured
        cycles), ``max_cycles`` or ``interrupted``.
    cycles : int
        Clock cycles from the ``start`` pulse to the stop.
    load_cycles, load_clocked_cycles : int
        The load's length on one host bus (one write a cycle), and the cycles the FPGAs were
        clocked for it (side by side; a top with a write port per PE loads them all at once).
    reads : dict
        Each :class:`ReadRegion`'s words by name (uint64 array, or object array of ints when wider).
    watch, watch_before : dict
        Watched words at the stop, and ``scan_gap_cycles`` cycles earlier (a stalled run shows
        which wait counters still grow).
    memory : list of dict or None
        A top with edge-memory ports: per memory, the model's ``requests``, ``beats`` and
        ``outstanding`` beats per port at the stop (diagnostics of the simulated memory).
    memory_errors : dict or None
        Beats answered SLVERR or DECERR: ``count`` and the first one's global ``first_port`` and
        byte ``first_address`` (None when the count is 0).
    quantum, quanta, quantum_cycles : int
        Several FPGAs in several threads: the most cycles the threads ran apart (0: they met
        every cycle; ``harness_system.h``), how many such quanta ran and their cycles in all
        (the rest ran cycle by cycle). The result does not depend on them.
    """

    status: str
    cycles: int
    load_cycles: int
    load_clocked_cycles: int
    superstep: int
    run_s: float
    total_s: float
    last_progress_cycle: int
    scan_gap_cycles: int
    reads: dict = field(repr=False)
    watch: dict = field(repr=False)
    watch_before: dict = field(repr=False)
    memory: list | None = field(default=None, repr=False)
    memory_errors: dict | None = None
    quantum: int = 0
    quanta: int = 0
    quantum_cycles: int = 0

    @property
    def cycles_per_s(self):
        """Simulated clock cycles per wall-clock second of the run phase."""
        return self.cycles / self.run_s if self.run_s > 0 else float("inf")


def run_simulator(build, writes, *, reads=(), watch=(), max_cycles=None, watchdog_cycles=1 << 20,
                  progress_cycles=1 << 16, on_progress=None, workdir=None, system=None, threads=1, memory=None,
                  env=None):
    """Run a compiled simulator: load ``writes``, start, run to ``done`` (or a stop), read back.

    Parameters
    ----------
    build : VerilatorBuild
    writes : HostWrites
        Host writes applied before ``start``.
    reads : sequence of ReadRegion
        Regions read after the run, returned by name in ``SimOutcome.reads``.
    watch : sequence of WatchItem
        Words (counters) read every ``progress_cycles`` cycles; the watchdog stops the run when
        no ``progress`` item and not ``superstep`` changed for ``watchdog_cycles`` cycles.
    max_cycles : int, optional
        Stop after this many cycles (status ``max_cycles``).
    on_progress : callable, optional
        ``on_progress(cycle, superstep, {name: value})`` at every progress scan.
    workdir : path-like, optional
        Folder for the run's files (default: a temporary folder, removed afterwards).
    system : str, optional
        The harness's SYSTEM file (:func:`gravfm.sim.system_file.system_file`) when ``build``
        is the top of one FPGA of several: the harness runs one instance per FPGA, joined by
        C++ link models.
    threads : int
        With ``system``: threads that advance the FPGA models (identical results for any number).
    memory : gravfm.sim.memory_params.MemoryLoad, optional
        The edge memories, needed exactly when the build's top has memory ports: the images are
        written into the run's folder and served by C++ memory models.
    env : dict, optional
        Further environment variables of the simulator: a traced build's
        (:meth:`gravfm.sim.trace.TraceRequest.environment`).

    Returns
    -------
    SimOutcome
    """
    reads, watch = list(reads), list(watch)
    names = [r.name for r in reads] + [w.name for w in watch]
    if len(set(r.name for r in reads)) != len(reads) or len(set(w.name for w in watch)) != len(watch):
        raise ValueError(f"read and watch names must be unique: {names}")
    check_memory(build.interface, memory)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="gravfm-run-") as folder:
            return _run_in(Path(folder), build, writes, reads, watch, max_cycles, watchdog_cycles,
                           progress_cycles, on_progress, system, threads, memory, env)
    folder = Path(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    return _run_in(folder, build, writes, reads, watch, max_cycles, watchdog_cycles, progress_cycles,
                   on_progress, system, threads, memory, env)


def check_memory(interface, memory):
    """Fail unless ``memory`` (a MemoryLoad or None) fits the memory ports of the build's top."""
    ports = interface.mem_ports
    if memory is None:
        if ports:
            raise SimulatorError(f"the top has {ports} AXI memory ports: run_simulator needs memory=MemoryLoad(...)")
        return
    if not ports:
        raise SimulatorError("memory given, but the top has no memory ports")
    per_memory = memory.ports_per_memory
    if ports % per_memory or memory.params.word_bits != interface.mem_word_bits:
        raise SimulatorError(f"memory of {per_memory} ports per memory and {memory.params.word_bits}-bit words "
                             f"does not fit the top's {ports} ports of {interface.mem_word_bits}-bit rdata")


def _run_in(folder, build, writes, reads, watch, max_cycles, watchdog_cycles, progress_cycles, on_progress,
            system, threads, memory, env):
    interface = build.interface
    load_path, plan_path = folder / "load.bin", folder / "plan.txt"
    out_path, result_path = folder / "out.bin", folder / "result.json"
    writes.write_load_file(load_path, words(interface.data_bits))
    write_plan(plan_path, reads, watch)
    command = [str(build.executable), str(load_path), str(plan_path), str(out_path), str(result_path),
               "--watchdog", str(int(watchdog_cycles)), "--progress", str(int(progress_cycles))]
    if max_cycles is not None:
        command += ["--max-cycles", str(int(max_cycles))]
    if system is not None:
        (folder / "system.txt").write_text(system)
        command += ["--system", str(folder / "system.txt"), "--threads", str(int(threads))]
    if memory is not None:
        command += ["--memory", str(memory.write(folder))]
    # stderr goes to a file so that a chatty simulator can never block on a full pipe. A session of
    # its own: a terminal's signals reach only gravfm, which stops the simulator (_stop).
    with open(folder / "stderr.txt", "w+") as stderr_file, \
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr_file, text=True,
                             start_new_session=True, env={**os.environ, **(env or {})}) as process:
        try:
            for line in process.stdout:
                if line.startswith("@progress ") and on_progress is not None:
                    fields = [int(x) for x in line.split()[1:]]
                    on_progress(fields[0], fields[1], dict(zip((w.name for w in watch), fields[2:])))
            process.wait()
        finally:
            if process.poll() is None:
                _stop(process)
        stderr_file.seek(0)
        stderr = stderr_file.read()
    if process.returncode != 0:
        raise SimulatorError(f"simulator exited with {process.returncode}: {stderr.strip()[-2000:]}")
    result = json.loads(result_path.read_text())
    raw = np.fromfile(out_path, dtype="<u4").reshape(-1, words(interface.rd_data_bits))
    values, offset = {}, 0
    for region in reads:
        values[region.name] = join_words(raw[offset:offset + region.count], interface.rd_data_bits)
        offset += region.count
    return SimOutcome(
        status=result["status"], cycles=result["cycles"], load_cycles=result["load_cycles"],
        load_clocked_cycles=result["load_clocked_cycles"],
        superstep=result["superstep"], run_s=result["run_s"], total_s=result["total_s"],
        last_progress_cycle=result["last_progress_cycle"], scan_gap_cycles=result["scan_gap_cycles"],
        reads=values, watch=dict(zip((w.name for w in watch), result["watch"])),
        watch_before=dict(zip((w.name for w in watch), result["watch_before"])),
        memory=result.get("memory"), memory_errors=result.get("memory_errors"), quantum=result["quantum"],
        quanta=result["quanta"], quantum_cycles=result["quantum_cycles"])


def _stop(process):
    """Ask the simulator to stop (SIGINT: it writes its results and exits), then make sure it is gone."""
    end_process_group(process, first=signal.SIGINT, grace=10)
