"""The hybrid's two link lanes (``link_lanes=2``): each peer link carries two round-sorted update
streams side by side, lane ``l`` the updates of the PEs ``l`` mod 2, so a link end moves two
updates per cycle. Blocks under Amaranth's simulator, the configuration's rules, the model's
link-end limit, and whole systems checked against the reference (with one lane and two on every
kind of link, every algorithm on and off chip: ``tests/test_hw_hybrid.py``'s slow tests)."""

import random

import pytest
from amaranth.hdl import Module, unsigned
from amaranth.lib import data, wiring

from gravfm.algorithms import BFS, WCC
from gravfm.architectures import GRAVFM, HYBRID, TWO_LINK_LANES_PES
from gravfm.errors import ConfigError
from gravfm.hw import SystemConfig
from gravfm.hw.link import LinkConfig
from gravfm.hw.link.lanes import LanePacker, LaneSplitter
from gravfm.model import predict
from conftest import cli_error, random_graph, run_dut
from test_hw_hybrid import LINKS, hybrid, params_of
from test_link_check_runs import check_recovered

WORD = data.StructLayout({"item": unsigned(7), "parity": 1})


# --- blocks ------------------------------------------------------------------------------------

def _lanes_pair():
    """A packer straight into a splitter, as a link of no latency would join them."""
    m = Module()
    m.submodules.packer = packer = LanePacker(word_layout=WORD, lanes=2)
    m.submodules.splitter = splitter = LaneSplitter(word_layout=WORD, lanes=2)
    wiring.connect(m, packer.o, splitter.i)
    return m, packer, splitter


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_lanes_through_one_word_keep_each_lane_whole_and_in_order(seed):
    """Each lane offers now and then and takes now and then: every word of every lane arrives
    once, in its order, whatever the other lane does (a full slot waits only for its own taker)."""
    m, packer, splitter = _lanes_pair()
    rng = random.Random(seed)
    sent = [[{"item": rng.randrange(128), "parity": rng.randrange(2)} for _ in range(40)] for _ in range(2)]
    received = [[], []]

    def source(lane):
        async def bench(ctx):
            port = packer.i[lane]
            for word in sent[lane]:
                while rng.random() < 0.3:          # idle a while
                    ctx.set(port.valid, 0)
                    await ctx.tick()
                ctx.set(port.valid, 1)
                ctx.set(port.payload, word)
                await ctx.tick().until(port.ready)
            ctx.set(port.valid, 0)
        return bench

    def sink(lane):
        async def bench(ctx):
            port = splitter.o[lane]
            while len(received[lane]) < len(sent[lane]):
                ready = rng.random() < (0.8 if lane else 0.4)
                ctx.set(port.ready, ready)
                valid, payload = ctx.get(port.valid), ctx.get(port.payload)
                await ctx.tick()
                if ready and valid:
                    received[lane].append({"item": payload.item, "parity": payload.parity})
        return bench

    run_dut(m, source(0), source(1), sink(0), sink(1))
    assert received == sent


def test_an_empty_slot_carries_zeros():
    """The link and its counters see nothing of a lane that offers nothing (a stale barrier flag
    would be counted)."""
    m, packer, _ = _lanes_pair()

    async def bench(ctx):
        ctx.set(packer.i[1].valid, 1)
        ctx.set(packer.i[1].payload, {"item": 5, "parity": 1})
        ctx.set(packer.i[0].payload, {"item": 127, "parity": 1})   # not valid
        payload = ctx.get(packer.o.payload)
        assert ctx.get(packer.o.valid) == 1 and payload.valid == 0b10
        assert (payload.lanes[0].item, payload.lanes[0].parity) == (0, 0)
        assert (payload.lanes[1].item, payload.lanes[1].parity) == (5, 1)
        await ctx.tick()

    run_dut(m, bench)


# --- configuration and model -------------------------------------------------------------------

def test_two_link_lanes_by_default_from_the_stated_size_on():
    assert HYBRID.default_link_lanes(4, TWO_LINK_LANES_PES) == 2
    assert HYBRID.default_link_lanes(4, TWO_LINK_LANES_PES // 2) == 1
    assert HYBRID.default_link_lanes(1, 64) == 1
    assert GRAVFM.default_link_lanes(4, 64) == 1


@pytest.mark.parametrize("values, message", [
    (dict(arch="gravfm", fpgas=2, pes_per_fpga=2), "the gravfm architecture has one lane per link"),
    (dict(arch="hybrid", fpgas=1, pes_per_fpga=2), "needs several FPGAs and a multiple of 2 PEs per FPGA, not 1 x 2"),
    (dict(arch="hybrid", fpgas=2, pes_per_fpga=1), "not 2 x 1"),
])
def test_two_link_lanes_refused_where_they_cannot_be(values, message):
    with pytest.raises(ConfigError, match=message):
        SystemConfig.of(algorithm=WCC, link_lanes=2, **values)


def test_three_link_lanes_refused():
    with pytest.raises(ConfigError, match="NetworkConfig.link_lanes must be 1 or 2, not 3"):
        SystemConfig.of(algorithm=WCC, arch="hybrid", fpgas=2, pes_per_fpga=4, link_lanes=3)


def test_the_run_command_refuses_two_lanes_on_gravfm_in_one_line(capsys):
    line = cli_error(capsys, "run", "wcc", "--graph", "tiny:grid", "--backend", "amaranth", "--edge-memory", "onchip",
                     "--fpgas", "2", "--link-lanes", "2")
    assert line.endswith("link_lanes = 2: the gravfm architecture has one lane per link (its links carry every "
                         "update to every PE, or messages)")


def test_the_link_end_limit_doubles_with_two_lanes():
    one, two = (predict("u280x4", "wcc", vertices=1 << 18, edges=1 << 23, fpgas=4, pes=64, arch="hybrid",
                        link_lanes=lanes) for lanes in (1, 2))
    assert two.limits["L_linkend"] == pytest.approx(2 * one.limits["L_linkend"])
    assert (one.details["link_lanes"], two.details["link_lanes"]) == (1, 2)
    default = predict("u280x4", "wcc", vertices=1 << 18, edges=1 << 23, fpgas=4, pes=64, arch="hybrid")
    assert default.limits["L_linkend"] == two.limits["L_linkend"]


# --- whole systems -----------------------------------------------------------------------------

@pytest.mark.parametrize("link", ["ideal", "hostile"])
@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
def test_two_fpgas_of_two_pes_in_amaranth(algorithm, link):
    """One PE per lane: each lane's merger has a single source."""
    report = hybrid(algorithm, random_graph(16, 36, 2), fpgas=2, pes=2, link=LINKS[link], link_lanes=2,
                    params=params_of(algorithm.name), network_fifo_depth=1, link_fifo_depth=1, message_fifo_depth=1)
    assert report.plan.config.network.link_lanes == 2


def test_two_fpgas_of_four_pes_compiled_over_a_hostile_link(build_cache):
    hybrid(WCC, "uniform:n=96,deg=3,seed=5", fpgas=2, pes=4, link=LINKS["hostile"], link_lanes=2,
           build_cache=build_cache, network_fifo_depth=2, link_fifo_depth=2)


@pytest.mark.slow
def test_faulty_links_recovered_by_retransmission(build_cache):
    """The link check frames the two-lane word: dropped, repeated and corrupted words are replayed."""
    link = LinkConfig(check="retransmit", drop_rate=0.01, duplicate_rate=0.01, flip_rate=0.01, seed=7)
    check_recovered(hybrid(WCC, "rmat:scale=7,ef=8,seed=2", fpgas=3, pes=2, link=link, link_lanes=2,
                           build_cache=build_cache, check=lambda report: report))
