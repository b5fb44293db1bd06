"""LatencyQueue: the credit behind a free-running pipeline never lets its FIFO overflow, keeps
order, and sustains one item per cycle for a consumer that takes one per cycle."""

import random

import pytest
from amaranth.hdl import Elaboratable, Module, Signal

from gravfm.hw.latency_queue import LatencyQueue
from conftest import run_dut as run


class _Pipeline(Elaboratable):
    """``latency`` registers with no enable, then a :class:`LatencyQueue`; ``take`` is offered
    and enters when ``queue.room``."""

    def __init__(self, latency, declared=None):
        self.offer = Signal()
        self.item = Signal(8)
        self.queue = LatencyQueue(shape=8, latency=latency if declared is None else declared)
        self._latency = latency

    def elaborate(self, platform):
        m = Module()
        m.submodules.queue = queue = self.queue
        valid, item = self.offer & queue.room, self.item
        for _ in range(self._latency):
            next_valid, next_item = Signal(), Signal(8)
            m.d.sync += [next_valid.eq(valid), next_item.eq(item)]
            valid, item = next_valid, next_item
        m.d.comb += [queue.i.valid.eq(valid), queue.i.payload.eq(item)]
        return m


def _drive(dut, *, cycles, offer_rate, ready_rate, seed):
    """Offer counting items and take them at random rates; returns what the bench saw."""
    rng = random.Random(seed)
    seen = {"received": [], "sent": 0, "overflows": 0, "taken_cycles": 0}

    async def bench(ctx):
        for _ in range(cycles):
            offer = rng.random() < offer_rate
            ready = rng.random() < ready_rate
            ctx.set(dut.offer, offer)
            ctx.set(dut.item, seen["sent"] % 256)
            ctx.set(dut.queue.o.ready, ready)
            if ctx.get(dut.queue.i.valid) and not ctx.get(dut.queue.i.ready):
                seen["overflows"] += 1
            if ctx.get(dut.queue.o.valid) and ready:
                seen["received"].append(ctx.get(dut.queue.o.payload))
            if offer and ctx.get(dut.queue.room):
                seen["sent"] += 1
                seen["taken_cycles"] += 1
            await ctx.tick()

    run(dut, bench)
    return seen


@pytest.mark.parametrize("latency", [0, 3, 27])
@pytest.mark.parametrize("ready_rate", [0.1, 0.6, 1.0])
def test_the_queue_never_overflows_and_keeps_order(latency, ready_rate):
    dut = _Pipeline(latency)
    seen = _drive(dut, cycles=600, offer_rate=0.8, ready_rate=ready_rate, seed=latency)
    assert seen["overflows"] == 0
    assert seen["received"] == [n % 256 for n in range(len(seen["received"]))]
    assert len(seen["received"]) > 40


@pytest.mark.parametrize("latency", [3, 27])
def test_a_consumer_taking_every_cycle_never_holds_the_pipeline(latency):
    cycles = 300
    seen = _drive(_Pipeline(latency), cycles=cycles, offer_rate=1.0, ready_rate=1.0, seed=1)
    assert seen["taken_cycles"] == cycles - 1  # ``room`` is a register: low in the cycle after reset only


def test_a_pipeline_longer_than_declared_overflows():
    """The check above can fail: items on their way beyond the declared latency find the FIFO full."""
    seen = _drive(_Pipeline(14, declared=4), cycles=600, offer_rate=0.9, ready_rate=0.2, seed=3)
    assert seen["overflows"] > 0


def test_a_negative_latency_is_refused():
    with pytest.raises(TypeError, match="latency must be a non-negative integer"):
        LatencyQueue(shape=8, latency=-1)
