"""The forwarding gather stage: messages to a vertex still in flight take the newest result,
one message per cycle, with exact states and each changed vertex reported once."""

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import memory, wiring
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gravfm.algorithms import BFS, PAGERANK, WCC
from gravfm.errors import ConfigError
from gravfm.graph import Graph
from gravfm.hw import KernelLayouts, SystemConfig
from gravfm.hw.kernels import build_kernels
from gravfm.hw.pe import ForwardingGatherUnit, GatherUnit
from gravfm.hw.pe.gather_forward import build_gather_unit
from conftest import run_dut, run_flow
from test_hw_system import check_run  # the suite's run checks with the cycle bound (tests/ is on sys.path)
from gravfm.hw.unused import silence_unused

VERTICES = 4
INITIAL_LABEL = 60


class Harness(wiring.Component):
    """Gather beside a vertex memory, its write port registered when ``write_latency`` is 1 (as
    in the PE, whose read port is then not transparent: gather forwards the landing write)."""

    def __init__(self, gather, layouts, write_latency):
        self.gather = gather
        self._layouts = layouts
        self._write_latency = write_latency
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.gather = gather = self.gather
        initial = {"state": {"label": INITIAL_LABEL, "active": 0}}
        m.submodules.mem = mem = memory.Memory(shape=self._layouts.vertex_word, depth=VERTICES,
                                               init=[initial] * VERTICES)
        wr = mem.write_port()
        rd = mem.read_port(transparent_for=() if self._write_latency else (wr,))
        m.d.comb += [rd.addr.eq(gather.rd.addr), rd.en.eq(gather.rd.en), gather.rd.data.eq(rd.data),
                     gather.touch.ready.eq(1)]
        domain = m.d.sync if self._write_latency else m.d.comb
        domain += [wr.addr.eq(gather.wr.addr), wr.en.eq(gather.wr.en), wr.data.eq(gather.wr.data)]
        self.mem = mem
        return m


def software_gather(messages):
    """WCC gather over ``messages`` [(vertex, label)]: final labels and touched vertices in order."""
    labels = [INITIAL_LABEL] * VERTICES
    touched = []
    for vertex, label in messages:
        if label < labels[vertex]:
            labels[vertex] = label
            if vertex not in touched:
                touched.append(vertex)
    return labels, touched


def simulate(messages, gaps, write_latency):
    """Feed ``messages`` with ``gaps[i]`` idle cycles before message i; return the final labels,
    the touched vertices in report order and the cycles a valid message was refused."""
    config = SystemConfig.of(algorithm=WCC, pes_per_fpga=1, local_bits=6, edges_per_pe=8)  # 7-bit labels
    layouts = KernelLayouts(WCC, config)
    gather = ForwardingGatherUnit(layouts=layouts, config=config, kernel=WCC.gather(layouts),
                                  twins=(WCC.gather(layouts), WCC.gather(layouts)), write_latency=write_latency)
    harness = Harness(gather, layouts, write_latency)
    touched, refused, labels = [], [0], []

    async def bench(ctx):
        ctx.set(gather.apply_done, 1)  # leave the initial pause
        await ctx.tick()
        ctx.set(gather.apply_done, 0)
        for (vertex, label), gap in zip(messages, gaps):
            ctx.set(gather.messages.valid, 0)
            for _ in range(gap):
                touched.extend([ctx.get(gather.touch.payload)] if ctx.get(gather.touch.valid) else [])
                await ctx.tick()
            ctx.set(gather.messages.payload, {"neighbor": vertex, "message": {"label": label}})
            ctx.set(gather.messages.valid, 1)
            while not ctx.get(gather.messages.ready):
                refused[0] += 1
                touched.extend([ctx.get(gather.touch.payload)] if ctx.get(gather.touch.valid) else [])
                await ctx.tick()
            touched.extend([ctx.get(gather.touch.payload)] if ctx.get(gather.touch.valid) else [])
            await ctx.tick()
        ctx.set(gather.messages.valid, 0)
        for _ in range(6):
            touched.extend([ctx.get(gather.touch.payload)] if ctx.get(gather.touch.valid) else [])
            await ctx.tick()
        assert not ctx.get(gather.active)
        labels.extend(ctx.get(harness.mem.data[v]).state.label for v in range(VERTICES))

    run_dut(harness, bench)
    return labels, touched, refused[0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), write_latency=st.sampled_from([0, 1]))
def test_forwarding_matches_sequential_gather(data, write_latency):
    """Random messages to 4 vertices, back to back or with gaps of 1-4 cycles (every forwarding
    distance): the final states and touch reports equal one-at-a-time gathering, and no message
    ever waits."""
    count = data.draw(st.integers(1, 24))
    messages = data.draw(st.lists(st.tuples(st.integers(0, VERTICES - 1), st.integers(0, 63)),
                                  min_size=count, max_size=count))
    gaps = data.draw(st.lists(st.integers(0, 4), min_size=count, max_size=count))
    labels, touched, refused = simulate(messages, gaps, write_latency)
    expected_labels, expected_touched = software_gather(messages)
    assert labels == expected_labels
    assert sorted(touched) == sorted(expected_touched)
    assert refused == 0


@pytest.mark.parametrize("write_latency", [0, 1])
def test_a_run_of_messages_to_one_vertex_takes_one_cycle_each(write_latency):
    """Decreasing labels to vertex 1, back to back: each lowers it, and each must see the last."""
    messages = [(1, label) for label in range(50, 30, -1)] + [(1, 45)]
    labels, touched, refused = simulate(messages, [0] * len(messages), write_latency)
    assert labels[1] == 31 and touched == [1] and refused == 0


def chosen_unit(**arguments):
    """The gather stage build_gather_unit picks (never elaborated: silence Amaranth's warning)."""
    unit = build_gather_unit(**arguments)
    silence_unused(unit)
    return unit


def test_only_combinational_kernels_forward():
    config = SystemConfig.of(algorithm=PAGERANK, pes_per_fpga=1, local_bits=3, edges_per_pe=8)
    layouts = KernelLayouts(PAGERANK, config)
    kernel = build_kernels(PAGERANK, layouts)["gather"]
    assert isinstance(chosen_unit(layouts=layouts, config=config, kernel=kernel), GatherUnit)
    twins = (PAGERANK.gather(layouts), PAGERANK.gather(layouts))
    for twin in twins:
        silence_unused(twin)
    with pytest.raises(TypeError, match="not a combinational gather kernel"):
        ForwardingGatherUnit(layouts=layouts, config=config, kernel=kernel, twins=twins)


@pytest.mark.parametrize("forwarding, unit", [(True, ForwardingGatherUnit), (False, GatherUnit)])
def test_the_config_chooses_the_gather_stage(forwarding, unit):
    config = SystemConfig.of(algorithm=BFS, pes_per_fpga=1, local_bits=3, edges_per_pe=8,
                          gather_forwarding=forwarding)
    layouts = KernelLayouts(BFS, config)
    kernel = build_kernels(BFS, layouts)["gather"]
    assert type(chosen_unit(layouts=layouts, config=config, kernel=kernel)) is unit


def test_gather_forwarding_must_be_a_bool():
    with pytest.raises(ConfigError, match="gather_forwarding"):
        SystemConfig.of(algorithm=WCC, gather_forwarding=1)


def test_self_loops_stream_with_forwarding_and_wait_without():
    """25 self-loops on one vertex: forwarding takes one cycle per message; the hazard unit
    makes every message after the first wait for its predecessor's write-back."""
    graph = Graph.from_edges(np.zeros(25, dtype=np.int64), np.zeros(25, dtype=np.int64), num_vertices=1)
    cycles = {}
    for forwarding in (True, False):
        result = check_run(run_flow(BFS, graph, pes=1, gather_forwarding=forwarding), pes=1)
        cycles[forwarding] = result.cycles
        assert (result.readback.counters["stall_hazard"] > 0).all() != forwarding
    assert cycles[False] - cycles[True] >= 2 * 24, cycles
