"""Kernels with latency and backpressure: the PE must stay correct whatever the kernel timing."""

import dataclasses

import pytest
from amaranth.hdl import Module, Signal, Value
from amaranth.lib import wiring
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gravfm.algorithms import BFS, WCC
from gravfm.graph.tiny import tiny_graph
from conftest import check_run, run_dut, run_flow
from test_hw_system import random_graphs  # the suite's random graph strategy (tests/ is on sys.path)
from gravfm.hw.unused import silence_unused


class Delayed(wiring.Component):
    """Wrap a kernel: its output stream ``port`` goes through ``stages`` pipeline registers,
    and every ``stall_period``-th cycle the output refuses to move (backpressure, bubbles)."""

    def __init__(self, inner, *, port, stages, stall_period):
        self._inner = inner
        # Elaborated by this wrapper's elaborate: a wrapper that is only inspected must not
        # leave its inner kernel reported as unused.
        silence_unused(inner)
        self._port = port
        self._stages = stages
        self._stall_period = stall_period
        super().__init__(wiring.Signature(dict(inner.signature.members)))   # no traits: it adds delay

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self._inner
        for name in self.signature.members:
            if name != self._port:
                if self.signature.members[name].flow == wiring.In:
                    wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(inner, name))
                else:
                    wiring.connect(m, getattr(inner, name), wiring.flipped(getattr(self, name)))
        source = getattr(inner, self._port)
        counter = Signal(range(self._stall_period))
        m.d.sync += counter.eq((counter + 1) % self._stall_period)
        open_ = counter != 0
        valid, payload = source.valid & open_, source.payload
        ready_back = Signal()
        m.d.comb += source.ready.eq(ready_back & open_)
        upstream_ready = ready_back
        for k in range(self._stages):
            stage_valid = Signal(name=f"stage{k}_valid")
            stage_payload = Signal(len(Value.cast(payload)), name=f"stage{k}_payload")
            stage_ready = Signal(name=f"stage{k}_ready")
            m.d.comb += upstream_ready.eq(~stage_valid | stage_ready)
            with m.If(upstream_ready):
                m.d.sync += [stage_valid.eq(valid), stage_payload.eq(Value.cast(payload))]
            valid, payload, upstream_ready = stage_valid, stage_payload, stage_ready
        out = getattr(self, self._port)
        m.d.comb += [out.valid.eq(valid), out.payload.as_value().eq(Value.cast(payload)), upstream_ready.eq(out.ready)]
        return m


def slowed(algorithm, *, gather=(3, 3), apply=(2, 4), scatter=(2, 5)):
    def wrap(factory, port, stages, period):
        return lambda layouts: Delayed(factory(layouts), port=port, stages=stages, stall_period=period)
    return dataclasses.replace(
        algorithm,
        gather=wrap(algorithm.gather, "o", *gather),
        apply=wrap(algorithm.apply, "update_o", *apply),
        scatter=wrap(algorithm.scatter, "o", *scatter))


def run_unchecked(algorithm, graph, **options):
    """:func:`run_flow` without the kernel contract check: the slowed gathers leave their
    latency undeclared on purpose (the PE must stay right whatever the kernel timing), which
    the check refuses (tests/test_kernel_checks.py)."""
    return run_flow(algorithm, graph, check_kernels=False, **options)


@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
@pytest.mark.parametrize("name, pes", [("star", 1), ("grid", 2), ("duplicates", 3)])
def test_slow_kernels_give_the_same_answer(algorithm, name, pes):
    check_run(run_unchecked(slowed(algorithm), tiny_graph(name), pes=pes))


def test_hazard_unit_stalls_only_conflicting_messages():
    """Star: every leaf's message goes to the centre, so a 3-cycle gather must stall on it."""
    graph = tiny_graph("star")
    fast = check_run(run_flow(WCC, graph, pes=1))
    slow = check_run(run_unchecked(slowed(WCC, gather=(3, 1000), apply=(0, 1000), scatter=(0, 1000)), graph, pes=1))
    # The fast pipeline keeps a vertex in flight for 3 cycles too (state read, read-data
    # register, write-back), so it waits on the centre now and then; the slow kernel far more.
    assert slow.stalls["stall_hazard"] > 2 * fast.stalls["stall_hazard"]
    # Messages to distinct vertices are not held up: the leaves' messages are gathered while
    # the centre's are stalled, so the slowdown is bounded by the hazard stalls themselves.
    extra = slow.cycles - fast.cycles
    assert extra <= slow.stalls["stall_hazard"] + 8 * slow.supersteps


def test_parking_slot_lets_other_vertices_pass():
    """Two messages to one vertex, then messages to others: the second is parked, not blocking."""
    from gravfm.graph import Graph
    # Vertices 1 and 2 both send to 0 (conflict), and to 3..8 (no conflict), in round 0 of BFS
    # from a root that reaches 1 and 2 first.
    src = [9, 9] + [1, 1, 1, 2, 2, 2] + [1, 2]
    dst = [1, 2] + [3, 4, 5, 6, 7, 8] + [0, 0]
    graph = Graph.from_edges(src, dst, num_vertices=10)
    algorithm = slowed(BFS, gather=(4, 1000), apply=(0, 1000), scatter=(0, 1000))
    check_run(run_unchecked(algorithm, graph, pes=1, params={"root": 9}, hazard_slots=6))


def test_a_wide_gather_latency_needs_enough_hazard_slots():
    """With fewer slots than the latency the PE is slower but still right."""
    graph = tiny_graph("grid")
    algorithm = slowed(WCC, gather=(4, 1000), apply=(0, 1000), scatter=(0, 1000))
    narrow = check_run(run_unchecked(algorithm, graph, pes=1, hazard_slots=1))
    wide = check_run(run_unchecked(algorithm, graph, pes=1, hazard_slots=6))
    assert wide.cycles < narrow.cycles


def test_gather_parks_a_conflicting_message_and_serves_the_next():
    """Messages to vertices 0, 0, 1, 2: the second 0 waits aside while 1 and 2 go first."""
    from amaranth.lib import memory
    from gravfm.hw import KernelLayouts, SystemConfig
    from gravfm.hw.pe import GatherUnit

    config = SystemConfig.of(algorithm=WCC, pes_per_fpga=1, local_bits=3, edges_per_pe=8, hazard_slots=6)
    layouts = KernelLayouts(WCC, config)
    kernel = Delayed(WCC.gather(layouts), port="o", stages=4, stall_period=1000)
    gather = GatherUnit(layouts=layouts, config=config, kernel=kernel)

    class Harness(wiring.Component):
        def __init__(self):
            super().__init__({})

        def elaborate(self, platform):
            m = Module()
            m.submodules.gather = gather
            m.submodules.mem = mem = memory.Memory(shape=layouts.vertex_word, depth=8,
                                                   init=[{"state": {"label": 7, "active": 0}}] * 8)
            wr = mem.write_port()
            rd = mem.read_port(transparent_for=(wr,))
            m.d.comb += [rd.addr.eq(gather.rd.addr), rd.en.eq(gather.rd.en), gather.rd.data.eq(rd.data),
                         wr.addr.eq(gather.wr.addr), wr.en.eq(gather.wr.en), wr.data.eq(gather.wr.data),
                         gather.touch.ready.eq(1)]
            return m

    harness = Harness()
    order = []

    async def bench(ctx):
        ctx.set(gather.apply_done, 1)  # leave the initial pause
        await ctx.tick()
        ctx.set(gather.apply_done, 0)
        messages = [(0, 3), (0, 2), (1, 5), (2, 6)]
        sent = 0
        for _ in range(40):
            if sent < len(messages):
                vertex, label = messages[sent]
                ctx.set(gather.messages.payload, {"neighbor": vertex, "message": {"label": label}})
                ctx.set(gather.messages.valid, 1)
            else:
                ctx.set(gather.messages.valid, 0)
            if ctx.get(kernel.i.valid) and ctx.get(kernel.i.ready):
                order.append(ctx.get(kernel.i.payload.nodeid))
            taken = sent < len(messages) and ctx.get(gather.messages.ready)
            await ctx.tick()
            sent += taken

    run_dut(harness, bench)
    assert order == [0, 1, 2, 0]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=random_graphs(), pes=st.integers(1, 4), algorithm=st.sampled_from([WCC, BFS]),
       gather=st.tuples(st.integers(0, 4), st.integers(2, 7)),
       scatter=st.tuples(st.integers(0, 3), st.integers(2, 7)),
       apply=st.tuples(st.integers(0, 3), st.integers(2, 7)),
       slots=st.integers(1, 5))
def test_random_graphs_with_slow_kernels(graph, pes, algorithm, gather, scatter, apply, slots):
    pes = min(pes, graph.num_vertices)
    check_run(run_unchecked(slowed(algorithm, gather=gather, apply=apply, scatter=scatter), graph, pes=pes,
                            hazard_slots=slots, network_fifo_depth=1, message_fifo_depth=1))
