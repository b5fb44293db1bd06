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
from .rack import Rack
from .serwb import link_item_bits, serwb_link_of
from .sim import WIRE_LATENCY_CYCLES, build_soc_simulator
from .sim_run import SocSimulation
from .window import GRAVFM_BASE, MAIN_RAM_BASE

__all__ = ["LitexBackend", "BoardBackend", "IMAGE_TRANSFERS", "drive", "drive_rack"]

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
    _check_image_fits(driver, image, dram_bytes)
    driver.check_design()
    started = time.perf_counter()
    image_report = None if image is None else driver.load_image(image, write=write_image)
    writes_s = driver.load_writes(load)
    stage("simulating", "")
    status, cycles, run_s = driver.run(**limits, pes=top.config.pes_per_fpga,
                                       on_progress=_progress(on_progress, total_messages))
    readback = driver.readback(load, status=status, cycles=cycles, run_s=run_s, vertex_bits=top.layouts.vertex.size,
                               max_rounds=top.config.pe.max_rounds, extra=extra)
    if log is not None:
        how = ("written over the bus in " + format(image_report["write_s"], ".1f") + " s" if write_image
               else "placed by backdoor") if image_report else ""
        image_text = "" if image_report is None else (
            f"; edge image {image_report['bytes']:,} bytes {how}, "
            f"{image_report['checked_words']} words checked over the bus")
        log(f"{driver.board}: host writes in {writes_s:.1f} s{image_text}; loaded and run in "
            f"{time.perf_counter() - started:.1f} s")
    return readback


def _check_image_fits(driver, image, dram_bytes):
    if image is not None and image.size > dram_bytes:
        raise ConfigError(f"{driver.board}: the edge image ({image.size:,} bytes) does not fit its DRAM "
                          f"({dram_bytes:,} bytes)")


def drive_rack(rack, top, load, *, write_images, dram_bytes, limits, on_progress, total_messages, stage, extra,
               links_up=None):
    """One run on the boards of ``rack`` (:class:`~gravfm.board.rack.Rack`): bring-up, load, arm,
    follow, read back. ``dram_bytes``: each board's DRAM; ``links_up()`` is called once every link
    is up. Returns the :class:`~gravfm.sim.readback.Readback` and ``{bring_up_s, load_s, run_s}``."""
    for driver, image in zip(rack.drivers, load.memory_images or ()):
        _check_image_fits(driver, image, dram_bytes)
    bring_up_s = rack.bring_up()
    if links_up is not None:
        links_up()
    load_s, _ = rack.load(load, write_images=write_images)
    stage("simulating", "")
    status, cycles, run_s = rack.run(**limits, on_progress=_progress(on_progress, total_messages))
    readback = rack.readback(load, status=status, cycles=cycles, run_s=run_s, vertex_bits=top.layouts.vertex.size,
                             max_rounds=top.config.pe.max_rounds, extra=extra)
    return readback, {"bring_up_s": bring_up_s, "load_s": load_s, "run_s": run_s}


def _progress(on_progress, total_messages):
    """The drivers' progress callback ``(cycles, superstep, messages)`` as the flow's, which also takes the total."""
    def progress(cycles, superstep, messages):
        if on_progress is not None:
            on_progress(cycles, superstep, messages, total_messages)
    return progress


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
    csr_streams : bool
        Drive the record and read streams through the core's CSRs, as over PCIe (one board).
    timeout_s : float
        Wall-clock limit of the run itself.
    link_ber : float
        Several FPGAs: the bit-error rate of every simulated wire once the links are up
        (``--link-ber``; resolution 2**-32).
    wire_latency : int
        Several FPGAs: cycles of each simulated wire (part of the build).
    cut_wires : tuple of (int, int)
        Several FPGAs: wires ``(sender, receiver)`` that deliver nothing (an absent peer).
    bring_up_s : float
        Several FPGAs: wall-clock limit of the link bring-up. SERWB's alignment search takes a few
        hundred thousand cycles per link, which a simulation of four SoCs on a busy machine runs
        in minutes (four boards on a loaded 2-core machine missed a 120 s limit), so the limit
        is generous; a link that never comes up is still named when it passes.
    """

    cache_dir: str | None = None
    max_cycles: int | None = None
    watchdog_cycles: int = 1 << 22
    image_transfer: str = "auto"
    csr_streams: bool = False
    timeout_s: float = 3600.0
    link_ber: float = 0.0
    wire_latency: int = WIRE_LATENCY_CYCLES
    cut_wires: tuple = ()
    bring_up_s: float = 900.0

    name = "litex"

    def __post_init__(self):
        require_board_extra("--backend litex")
        if self.image_transfer not in IMAGE_TRANSFERS:
            raise ConfigError(f"image_transfer must be one of {', '.join(IMAGE_TRANSFERS)}, "
                              f"not {self.image_transfer!r}")
        if not 0 <= self.link_ber < 0.5:
            raise ConfigError(f"--link-ber must be in [0, 0.5), not {self.link_ber!r}")

    def _over_bus(self, image):
        return image is not None and (self.image_transfer == "bus" or
                                      (self.image_transfer == "auto" and image.size <= BUS_IMAGE_BYTES))

    def simulate(self, top, load, *, log=None, on_progress=None, total_messages=0, on_stage=None):
        stage = on_stage or (lambda name, detail="": None)
        design = BoardDesign.of(top)
        if design.fpgas > 1:
            return self._simulate_rack(design, top, load, log=log, on_progress=on_progress,
                                       total_messages=total_messages, stage=stage)
        stage("building", "the whole SoC (LiteX, LiteDRAM, Verilator)")
        build = build_soc_simulator(design, cache_dir=self.cache_dir, log=log)
        image = load.memory_images[0] if load.memory_images else None
        over_bus = self._over_bus(image)
        stage("loading", f"{len(load):,} host writes over the simulated UART"
                         + ("" if image is None else f", edge image {'over the bus' if over_bus else 'by backdoor'}"))
        with SocSimulation(build, images=[None if over_bus else image]) as sim:
            # The simulated serial line drops bytes beyond its 2 KiB buffer: one burst at a time.
            driver = BoardDriver(sim.client, registers_from_csv(build.csr_csv, sim.client), build.design,
                                 window=GRAVFM_BASE, dram=MAIN_RAM_BASE, board="litex-sim", settle_bursts=True,
                                 csr_streams=self.csr_streams)
            return drive(driver, top, load, write_image=over_bus, dram_bytes=build.dram.size_bytes, stage=stage,
                         log=log, on_progress=on_progress, total_messages=total_messages,
                         limits={"max_cycles": self.max_cycles, "watchdog_cycles": self.watchdog_cycles,
                                 "timeout_s": self.timeout_s},
                         extra={"build_s": build.build_s, "build_cached": build.cached, "build_key": build.key})

    def _check_links(self, top):
        """The top's links must be the simulated boards': SERWB wires (faults: ``--link-ber``) whose
        speed the link check's timers were planned for."""
        link = top.link_config
        if link.faulty or link.stall_probability or link.reorder_window > 1:
            raise ConfigError("--backend litex: the boards' links are simulated SERWB wires; the harness's link "
                              "faults, stalls and reordering (--link-drop, --link-duplicate, --link-flip, --link-dead, "
                              "--link-stall, --link-reorder) do not apply to them: use --link-ber RATE")
        serwb = serwb_link_of(top.config, wire_latency=self.wire_latency)
        needed, planned = serwb.link_check(item_bits=link_item_bits(top.config)), top.link_check
        if (planned.silence_cycles < needed.silence_cycles or planned.nak_retry_cycles < needed.nak_retry_cycles
                or planned.heartbeat_cycles < needed.heartbeat_cycles):
            raise ConfigError(f"--backend litex: the link check's timers were planned for a faster link than the "
                              f"boards' SERWB wires ({planned.silence_cycles} cycles of silence allowed, "
                              f"{needed.silence_cycles} needed): run with --link-latency {serwb.latency_cycles} "
                              f"--link-bandwidth {serwb.bits_per_cycle:.4f}")

    def _simulate_rack(self, design, top, load, *, log, on_progress, total_messages, stage):
        n = design.fpgas
        self._check_links(top)
        stage("building", f"{n} board SoCs joined by SERWB links (LiteX, LiteDRAM, LiteICLink, Verilator)")
        build = build_soc_simulator(design, cache_dir=self.cache_dir, log=log, wire_latency=self.wire_latency)
        images = list(load.memory_images) if load.memory_images else [None] * n
        over_bus = all(self._over_bus(image) for image in images if image is not None)
        with SocSimulation(build, images=[None if over_bus else image for image in images]) as sim:
            drivers = [BoardDriver(client, registers_from_csv(build.csr_csv, client), build.design, window=GRAVFM_BASE,
                                   dram=MAIN_RAM_BASE, board=f"litex-sim board {f}", settle_bursts=True)
                       for f, client in enumerate(sim.clients)]
            rack = Rack(drivers, pes_per_fpga=top.config.pes_per_fpga, bring_up_s=self.bring_up_s)
            self._set_wires(rack, errors=False)
            stage("loading", f"links up, then {len(load):,} host writes over {n} simulated UARTs")
            readback, took = drive_rack(
                rack, top, load, write_images=over_bus, dram_bytes=build.dram.size_bytes, stage=stage,
                on_progress=on_progress,
                total_messages=total_messages,
                limits={"max_cycles": self.max_cycles, "watchdog_cycles": self.watchdog_cycles,
                        "timeout_s": self.timeout_s},
                extra={"build_s": build.build_s, "build_cached": build.cached, "build_key": build.key},
                # The links trained on clean wires, as a cable's would; the errors come after.
                links_up=lambda: self._set_wires(rack, errors=True))
        if log is not None:
            log(f"{n} boards: links up in {took['bring_up_s']:.1f} s, loaded in {took['load_s']:.1f} s, "
                f"run in {took['run_s']:.1f} s")
        return readback

    def _set_wires(self, rack, *, errors):
        """Every wire's error threshold (``errors``: the run's bit-error rate, else none) and cuts."""
        threshold = round(self.link_ber * (1 << 32)) if errors else 0
        for f, k, peer in rack.links():
            registers = rack.drivers[f].registers
            getattr(registers, f"wire{k}_error_threshold").write(threshold)
            getattr(registers, f"wire{k}_cut").write(int((peer, f) in self.cut_wires))


@dataclass(frozen=True)
class BoardBackend:
    """A real board behind ``litex_server`` (``--backend board``).

    Parameters
    ----------
    build_dir : str
        The ``--out`` folder of the board's ``gravfm board build`` (its ``csr.csv`` and ``build.json``).
    server : str
        ``HOST:PORT`` of the ``litex_server`` connected to the board (default ``127.0.0.1:1234``);
        several FPGAs: one per board, comma-separated, FPGA 0 first (the same bitstream on each).
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
                raise ConfigError(f"--board-build {self.build_dir}: no {needed} "
                                  f"(the --out folder of `gravfm board build`)")
        for server in self.servers:
            host, _, port = server.rpartition(":")
            if not host or not port.isdigit():
                raise ConfigError(f"--board-server must be HOST:PORT (several FPGAs: one per board, comma-separated), "
                                  f"not {server!r}")

    @property
    def servers(self):
        """One ``litex_server`` per board, FPGA 0 first."""
        return [server.strip() for server in self.server.split(",")]

    def simulate(self, top, load, *, log=None, on_progress=None, total_messages=0, on_stage=None):
        stage = on_stage or (lambda name, detail="": None)
        folder = Path(self.build_dir)
        built = json.loads((folder / "build.json").read_text())
        design = BoardDesign.of(top)
        if design.identity != built["design"]["design_id"]:
            raise ConfigError(f"--board-build {self.build_dir} was built for another design "
                              f"({built['design']['design_id']:#010x}, this run's is {design.identity:#010x}): "
                              f"build this one")
        if len(self.servers) != design.fpgas:
            raise ConfigError(f"--board-server: {design.fpgas} FPGA(s) need as many litex_servers (one per board, "
                              f"FPGA 0 first), {len(self.servers)} given")
        stage("loading", f"{len(load):,} host writes over {built['transport']}")
        clients = []
        try:
            drivers = [self._driver(server, built, clients) for server in self.servers]
            limits = {"max_cycles": self.max_cycles, "watchdog_cycles": self.watchdog_cycles,
                      "timeout_s": self.timeout_s}
            if design.fpgas == 1:
                return drive(drivers[0], top, load, write_image=True, dram_bytes=built["dram_bytes"], stage=stage,
                             log=log, on_progress=on_progress, total_messages=total_messages, limits=limits, extra={})
            readback, _ = drive_rack(Rack(drivers, pes_per_fpga=top.config.pes_per_fpga), top, load,
                                     write_images=True, dram_bytes=built["dram_bytes"], limits=limits,
                                     on_progress=on_progress,
                                     total_messages=total_messages, stage=stage, extra={})
            return readback
        finally:
            for client in clients:
                client.close()

    def _driver(self, server, built, clients):
        """A connected :class:`~gravfm.board.driver.BoardDriver` for the board behind ``server``."""
        from litex.tools.litex_client import RemoteClient  # deferred: the board extra (LiteX)

        host, _, port = server.rpartition(":")
        board = f"board {built['board']} at {server}"
        client = RemoteClient(host=host, port=int(port))
        try:
            client.open()
        except OSError as error:
            raise BoardError(f"{board}: connecting to litex_server: {error}") from None
        clients.append(client)
        # LitePCIe's BAR0 reaches the CSRs only: the streams go through the core's CSRs there.
        return BoardDriver(client, registers_from_csv(Path(self.build_dir) / "csr.csv", client), built["design"],
                           window=GRAVFM_BASE, dram=MAIN_RAM_BASE, board=board,
                           csr_streams=built["transport"] == "pcie")
