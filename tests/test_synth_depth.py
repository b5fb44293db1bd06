"""Logic depth (LUT levels of the worst path after synthesis, no place-and-route) of the WCC top:
a change that deepens it fails here, on its own commit, instead of half an hour of nextpnr later."""

import pytest
from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gravfm.algorithms import get_algorithm
from gravfm.flow.planning import system_config
from gravfm.hw.fp import FPAdder, FPDivider, FPMultiplier
from gravfm.hw.fpga import FpgaTop
from gravfm.synth.depth import synthesised_depth

# LUT levels of the WCC tops' worst paths on 4e96e23, the limits: no change may deepen them.
# 4 PEs: 7 (pe2's ``touched_out.o.valid`` -> ``apply.barrier_issued``: apply's pass end, where
# nextpnr finds the 114.7 MHz path); 1 PE: 6 (``apply.q_valid`` -> ``apply.barrier_issued``, the
# same pass end). nextpnr's 4-PE path is 8.7 ns for those 7 levels, ~1.1 ns a level with its
# routing; issue 38 wants 150 MHz (6.7 ns), about 5 levels: no path may grow deeper while that
# goal stands; lower a limit as the timing plan removes levels. The 4-PE top takes ~85 s of CPU
# to synthesise (slow); the 1-PE top ~20 s, the default suite's check.
WCC_TOP_LUT_LEVELS = {1: 6, 4: 7}


def assert_no_deeper(depth, limit):
    assert depth.levels <= limit, (
        f"the worst path is {depth.levels} LUT levels, more than {limit}: {' -> '.join(depth.path)}")


class DeepChain(wiring.Component):
    """A planted deep path: ``stages`` of mixing logic between two registers."""

    a: In(32)
    y: Out(32)

    def __init__(self, stages):
        self._stages = stages
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        x = Signal(32)
        m.d.sync += x.eq(self.a)
        for stage in range(self._stages):
            # Every bit of a stage reads three bits of the one before: no two stages fit one LUT.
            mixed = Signal(32, name=f"stage{stage}")
            m.d.comb += mixed.eq(Cat((x[k] ^ (x[(k + 1) % 32] & x[(k + 3) % 32])) for k in range(32)))
            x = mixed
        m.d.sync += self.y.eq(x)
        return m


def test_a_planted_deep_path_fails_the_check(tmp_path):
    depth = synthesised_depth(DeepChain(stages=16), workdir=tmp_path)   # 13 levels after synthesis
    with pytest.raises(AssertionError, match="13 LUT levels, more than 6"):
        assert_no_deeper(depth, WCC_TOP_LUT_LEVELS[1])


@pytest.mark.parametrize("pes", [1, pytest.param(4, marks=pytest.mark.slow)])
def test_wcc_top_is_no_deeper_than_its_limit(tmp_path, pes):
    # The build of bench_synth's tops (gravfm synth's defaults).
    config = system_config(get_algorithm("wcc"), fpgas=1, pes=pes, local_bits=8, edges_per_pe=4096)
    assert_no_deeper(synthesised_depth(FpgaTop(config), workdir=tmp_path, name="fpga_top"), WCC_TOP_LUT_LEVELS[pes])


# LUT levels of the floating-point units' worst stages, each unit synthesised alone (ed942cb):
# PageRank's tops hold three per PE, and their stages were its deepest paths (adder 9, multiplier
# 11 before the timing plan's rule 6). In a whole top ABC maps other cones up to the top's worst
# depth, so the units are checked alone, where their own depth shows. Since 9b2ba09 (the adder's
# count and shift in two stages, the divider's subnormal shift decided a stage ahead) the adder is
# 6 and the divider 5.
FP_UNIT_LUT_LEVELS = {FPAdder: 6, FPMultiplier: 7, FPDivider: 5}


@pytest.mark.parametrize("unit", [FPAdder, FPMultiplier, pytest.param(FPDivider, marks=pytest.mark.slow)],
                         ids=lambda unit: unit.__name__)
def test_floating_point_unit_is_no_deeper_than_its_limit(tmp_path, unit):
    assert_no_deeper(synthesised_depth(unit(), workdir=tmp_path), FP_UNIT_LUT_LEVELS[unit])


# LUT levels of PageRank's gather unit alone at 4 PEs (a combiner and 4 parking slots): 11 until
# the parking logic's pair compares became registers and the combiner's operands a registered
# stage (2c8ef8f), 8 since; its worst path now runs from a slot's busy flag into those operands.
PAGERANK_GATHER_LUT_LEVELS = 8


def test_pagerank_gather_unit_is_no_deeper_than_its_limit(tmp_path):
    from gravfm.hw.arch import architecture
    from gravfm.hw.kernels import build_kernels
    from gravfm.hw.pe.gather_forward import build_gather_unit

    config = system_config(get_algorithm("pagerank"), fpgas=1, pes=4, local_bits=8, edges_per_pe=4096)
    layouts = architecture(config.arch).layouts(config.algorithm, config)
    unit = build_gather_unit(layouts=layouts, config=config, kernel=build_kernels(config.algorithm, layouts)["gather"],
                             write_latency=1)
    assert_no_deeper(synthesised_depth(unit, workdir=tmp_path), PAGERANK_GATHER_LUT_LEVELS)
