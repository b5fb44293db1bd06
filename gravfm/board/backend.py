"""Back-ends that run on a board SoC: ``--backend litex`` (the SoC simulated) and ``--backend board``.

Both drive the SoC with the same :class:`~gravfm.board.driver.BoardDriver` (:func:`drive`):
design check, edge image, host writes, start, progress, read-back, as a
:class:`~gravfm.sim.readback.Readback` the flow verifies and reports like any other.

- :class:`LitexBackend` builds (or reuses) the :class:`~gravfm.board.soc.SimSoC` of the top and
  runs it with ``litex_server`` in front of its simulated UART. The edges come from the real
  LiteDRAM controller and a DDR3 model instead of the harness's memory model, so off chip the
  cycles differ from ``--backend verilator``; large images may be placed in the DDR3 model before
  the start (then checked over the bus; the log line says which).
- :class:`BoardBackend` talks to a real board through a ``litex_server`` the user started
  (UART, Etherbone or PCIe), with the ``csr.csv`` and JSON of its ``gravfm board build``; the
  board must carry the run's design (its ``design_id``); LiteX's client is imported when it connects.
"""

import json
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from . import require_board_extra
from .design import BoardDesign
from .driver import BoardDriver, BoardError, registers_from_csv
from .sim import SocSimulation, build_soc_simulator
from .window import GRAVFM_BASE, MAIN_RAM_BASE

__all__ = ["LitexBackend", "BoardBackend", "IMAGE_TRANSFERS", "drive"]

#: How the edge image reaches the simulated DRAM: over the driver's bus path, through the
#: backdoor, or over the bus when it is at most ``BUS_IMAGE_BYTES``.
IMAGE_TRANSFERS = ("auto", "bus", "backdoor")
BUS_IMAGE_BYTES = 64 * 1024


def drive(driver, top, load, *, write_image, dram_bytes, limits, on_progress, total_messages, stage, log, extra):
    """One run through ``driver``: returns the :class:`~gravfm.sim.readback.Readback`.

    ``write_image``: write the edge image over the bus (else it is in the DRAM already and only
    checked); ``dram_bytes``: the board's DRAM; ``limits``: ``{max_cycles, watchdog_cycles, timeout_s}``.
    """
    image = load.memory_images[0] if load.memory_images else None
    if image is not None and image.size > dram_bytes:
        raise ConfigError(f"{driver.board}: the edge image ({image.size:,} bytes) does not fit its DRAM "
                          f"({dram_bytes:,} bytes)")
    driver.check_design()
    started = time.perf_counter()
    image_report = None if image is None else driver.load_image(image, write=write_image)
    writes_s = driver.load_writes(load)
    stage("simulating", "")

    def progress(cycles, superstep, messages):
        if on_progress is not None and messages is not None:
            on_progress(cycles, superstep, messages, total_messages)

    status, cycles, run_s = driver.run(**limits, pes=top.config.pes_per_fpga, on_progress=progress)
    readback = driver.readback(load, status=status, cycles=cycles, run_s=run_s, vertex_bits=top.layouts.vertex.size,
                               max_rounds=top.config.pe.max_rounds, extra=extra)
    if log is not None:
        how = ("written over the bus in " + format(image_report["write_s"], ".1f") + " s" if write_image
               else "placed by backdoor") if image_report else ""
        image_text = "" if image_report is None else (
            f"; edge image {image_report['bytes']:,} bytes {how}, {image_report['checked_words']} words checked over the bus")
        log(f"{driver.board}: host writes in {writes_s:.1f} s{image_text}; loaded and run in "
            f"{time.perf_counter() - started:.1f} s")
    return readback


@dataclass(frozen=True)
class LitexBackend:
    """The whole SoC in simulation (LiteX + Verilator), driven over a simulated UART.

    Parameters
    ----------
    cache_dir : str, optional
        Build cache folder (as for the other back-ends).
    max_cycles : int, optional
        Stop following the run after this many design cycles (status ``max_cycles``).
    watchdog_cycles : int
        Status ``stalled`` when no superstep or message count moved for this many cycles.
    image_transfer : {"auto", "bus", "backdoor"}
        How the edge image reaches the DRAM (module docstring).
    timeout_s : float
        Wall-clock limit of the run itself.
    """

    cache_dir: str | None = None
    max_cycles: int | None = None
    watchdog_cycles: int = 1 << 22
    image_transfer: str = "auto"
    timeout_s: float = 3600.0

    name = "litex"

    def __post_init__(self):
        require_board_extra("--backend litex")
        if self.image_transfer not in IMAGE_TRANSFERS:
            raise ConfigError(f"image_transfer must be one of {', '.join(IMAGE_TRANSFERS)}, not {self.image_transfer!r}")

    def simulate(self, top, load, *, log=None, on_progress=None, total_messages=0, on_stage=None):
        stage = on_stage or (lambda name, detail="": None)
        stage("building", "the whole SoC (LiteX, LiteDRAM, Verilator)")
        build = build_soc_simulator(BoardDesign.of(top), cache_dir=self.cache_dir, log=log)
        image = load.memory_images[0] if load.memory_images else None
        over_bus = image is not None and (self.image_transfer == "bus" or
                                          (self.image_transfer == "auto" and image.size <= BUS_IMAGE_BYTES))
        stage("loading", f"{len(load):,} host writes over the simulated UART"
                         + ("" if image is None else f", edge image {'over the bus' if over_bus else 'by backdoor'}"))
        with SocSimulation(build, image=None if over_bus else image) as sim:
            # The simulated serial line drops bytes beyond its 2 KiB buffer: one burst at a time.
            driver = BoardDriver(sim.client, registers_from_csv(build.csr_csv, sim.client), build.design,
                                 window=GRAVFM_BASE, dram=MAIN_RAM_BASE, board="litex-sim", settle_bursts=True)
            return drive(driver, top, load, write_image=over_bus, dram_bytes=build.dram.size_bytes, stage=stage,
                         log=log, on_progress=on_progress, total_messages=total_messages,
                         limits={"max_cycles": self.max_cycles, "watchdog_cycles": self.watchdog_cycles,
                                 "timeout_s": self.timeout_s},
                         extra={"build_s": build.build_s, "build_cached": build.cached, "build_key": build.key})


@dataclass(frozen=True)
class BoardBackend:
    """A real board behind ``litex_server`` (``--backend board``).

    Parameters
    ----------
    build_dir : str
        The ``--out`` folder of the board's ``gravfm board build`` (its ``csr.csv`` and ``build.json``).
    server : str
        ``HOST:PORT`` of the ``litex_server`` connected to the board (default ``127.0.0.1:1234``).
    max_cycles, watchdog_cycles, timeout_s
        As :class:`LitexBackend`.
    """

    build_dir: str = ""
    server: str = "127.0.0.1:1234"
    max_cycles: int | None = None
    watchdog_cycles: int = 1 << 26
    timeout_s: float = 3600.0

    name = "board"

    def __post_init__(self):
        require_board_extra("--backend board")
        folder = Path(self.build_dir)
        for needed in ("csr.csv", "build.json"):
            if not (folder / needed).is_file():
                raise ConfigError(f"--board-build {self.build_dir}: no {needed} (the --out folder of `gravfm board build`)")
        host, _, port = self.server.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--board-server must be HOST:PORT, not {self.server!r}")

    def simulate(self, top, load, *, log=None, on_progress=None, total_messages=0, on_stage=None):
        from litex.tools.litex_client import RemoteClient  # deferred: the board extra (LiteX)

        stage = on_stage or (lambda name, detail="": None)
        folder = Path(self.build_dir)
        built = json.loads((folder / "build.json").read_text())
        design = BoardDesign.of(top)
        if design.identity != built["design"]["design_id"]:
            raise ConfigError(f"--board-build {self.build_dir} was built for another design "
                              f"({built['design']['design_id']:#010x}, this run's is {design.identity:#010x}): build this one")
        host, _, port = self.server.rpartition(":")
        board = f"board {built['board']} at {self.server}"
        stage("loading", f"{len(load):,} host writes over {built['transport']}")
        client = RemoteClient(host=host, port=int(port))
        try:
            client.open()
        except OSError as error:
            raise BoardError(f"{board}: connecting to litex_server: {error}") from None
        try:
            driver = BoardDriver(client, registers_from_csv(folder / "csr.csv", client), built["design"],
                                 window=GRAVFM_BASE, dram=MAIN_RAM_BASE, board=board)
            return drive(driver, top, load, write_image=True, dram_bytes=built["dram_bytes"], stage=stage, log=log,
                         on_progress=on_progress, total_messages=total_messages,
                         limits={"max_cycles": self.max_cycles, "watchdog_cycles": self.watchdog_cycles,
                                 "timeout_s": self.timeout_s}, extra={})
        finally:
            client.close()
