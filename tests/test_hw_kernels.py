"""Kernels with latency and backpressure: the PE must stay correct whatever the kernel timing."""

import dataclasses

import pytest
from amaranth.hdl import Module, Signal, Value
from amaranth.lib import wiring

from gravfm.algorithms import BFS, WCC
from gravfm.graph.tiny import tiny_graph
from gravfm.sim.amaranth_backend import run_amaranth


class Delayed(wiring.Component):
    """Wrap a kernel: its output stream ``port`` goes through ``stages`` pipeline registers,
    and every ``stall_period``-th cycle the output refuses to move (backpressure, bubbles)."""

    def __init__(self, inner, *, port, stages, stall_period):
        self._inner = inner
        self._port = port
        self._stages = stages
        self._stall_period = stall_period
        super().__init__(inner.signature)

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


@pytest.mark.parametrize("algorithm", [WCC, BFS], ids=lambda a: a.name)
@pytest.mark.parametrize("name, pes", [("star", 1), ("grid", 2), ("duplicates", 3)])
def test_slow_kernels_give_the_same_answer(algorithm, name, pes):
    result = run_amaranth(slowed(algorithm), tiny_graph(name), pes=pes)
    assert result.ok, result.detail
    assert tuple(result.messages_per_superstep) == result.reference.messages_per_superstep
    assert tuple(result.updates_per_superstep) == result.reference.updates_per_superstep


def test_hazard_unit_stalls_only_conflicting_messages():
    """Star: every leaf's message goes to the centre, so a 3-cycle gather must stall on it."""
    graph = tiny_graph("star")
    fast = run_amaranth(WCC, graph, pes=1)
    slow = run_amaranth(slowed(WCC, gather=(3, 1000), apply=(0, 1000), scatter=(0, 1000)), graph, pes=1)
    assert fast.ok and slow.ok
    assert fast.sim.counters["stall_hazard"][0] == 0
    assert slow.sim.counters["stall_hazard"][0] > 0
    # Messages to distinct vertices are not held up: the leaves' messages are gathered while
    # the centre's are stalled, so the slowdown is bounded by the hazard stalls themselves.
    extra = slow.sim.cycles - fast.sim.cycles
    assert extra <= slow.sim.counters["stall_hazard"][0] + 8 * slow.supersteps


def test_a_wide_gather_latency_needs_enough_hazard_slots():
    """With fewer slots than the latency the PE is slower but still right."""
    graph = tiny_graph("grid")
    algorithm = slowed(WCC, gather=(4, 1000), apply=(0, 1000), scatter=(0, 1000))
    narrow = run_amaranth(algorithm, graph, pes=1, hazard_slots=1)
    wide = run_amaranth(algorithm, graph, pes=1, hazard_slots=6)
    assert narrow.ok and wide.ok
    assert wide.sim.cycles < narrow.sim.cycles
