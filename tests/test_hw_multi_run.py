"""``gravfm run --fpgas N``: the multi-FPGA top behind the one-call run (the flow, with the
platform's links), and its errors."""

import pytest
from amaranth.hdl import Fragment

from gravfm.algorithms import WCC
from gravfm.errors import ConfigError
from gravfm.hw import FpgaTop, SystemConfig
from gravfm.hw.link import LinkConfig
from gravfm.hw.multi import MultiFpgaSystem, build_system
from gravfm.flow import RunOptions, run
from gravfm.hw.unused import silence_unused


def test_run_on_two_fpgas_with_the_amaranth_backend():
    report = run(RunOptions(edge_memory="onchip", algorithm="bfs", graph="tiny:binary_tree", fpgas=2, pes=1, backend="amaranth"))
    assert report.verified, report.check_detail
    assert report.fpgas == 2 and report.messages == report.reference_messages
    # Each superstep pays at least the platform's link latency once (300 cycles on ac510x4).
    assert report.cycles >= 300 * (report.supersteps - 1)


def test_platform_with_fewer_fpgas_than_asked():
    with pytest.raises(ConfigError, match="platform 'ac510x4' has 4 FPGAs, 5 asked"):
        run(RunOptions(edge_memory="onchip", algorithm="wcc", graph="tiny:grid", fpgas=5, pes=1, backend="amaranth"))


def test_build_system_picks_the_top():
    single = build_system(SystemConfig.of(algorithm=WCC))
    multi = build_system(SystemConfig.of(algorithm=WCC, fpgas=3, local_bits=2, edges_per_pe=8),
                         platform="ac510x4")
    assert isinstance(single, FpgaTop) and isinstance(multi, MultiFpgaSystem)
    assert multi.link_config == LinkConfig.from_platform("ac510x4", 3)
    for top in (single, multi):     # both elaborate (and are thereby used)
        Fragment.get(top, None)
    assert sorted(multi.links) == [(a, b) for a in range(3) for b in range(3) if a != b]


def test_fpga_top_has_one_link_port_pair_per_peer():
    single = FpgaTop(SystemConfig.of(algorithm=WCC))
    assert "link_out" not in single.signature.members
    Fragment.get(single, None)
    top = FpgaTop(SystemConfig.of(algorithm=WCC, fpgas=3))
    assert len(top.link_out) == len(top.link_in) == 2
    Fragment.get(top, None)   # elaborates alone (what one board holds)


@pytest.mark.parametrize("arch", ["gravfm", "gravf"])
def test_every_fpga_of_a_system_has_the_same_top(arch):
    """One design serves every FPGA (issue 19): the FPGA index is a host-loaded register."""
    from amaranth.back import verilog

    config = SystemConfig.of(algorithm=WCC, fpgas=3, pes_per_fpga=2, local_bits=2, edges_per_pe=8, arch=arch)
    system = MultiFpgaSystem(config)
    silence_unused(system)   # only its tops are exported
    texts = {verilog.convert(top, name="fpga_top", emit_src=False) for top in (*system.tops, FpgaTop(config))}
    assert len(texts) == 1


def test_graph_too_large_for_the_memories():
    with pytest.raises(ConfigError, match=r"--vertices-per-pe 2 \(local_bits=1\) is too small: a PE holds up to 8 vertices; "
                                          r"use at least --vertices-per-pe 8"):
        run(RunOptions(edge_memory="onchip", algorithm="wcc", graph="tiny:grid", fpgas=2, pes=1, local_bits=1, backend="amaranth"))


@pytest.mark.slow
def test_run_on_three_fpgas_with_verilator(tmp_path):
    report = run(RunOptions(edge_memory="onchip", algorithm="wcc", graph="uniform:n=60,deg=4,seed=2", fpgas=3, pes=2,
                            cache_dir=str(tmp_path)))
    assert report.status == "done" and report.verified, report.check_detail
