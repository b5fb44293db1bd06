"""The simulated inter-FPGA link: order, reordering bound, bandwidth, latency, stalls, counters."""

import pytest

from gravfm.errors import ConfigError
from gravfm.hw.link import LinkConfig, LinkModel
from gravfm.model import load_platform

from conftest import run_dut, stream_source


def drive(config, items, *, item_bits=8, budget=5000):
    """Push ``items`` through a LinkModel as fast as it takes them, always ready at the output.

    Returns ``(delivered, cycles, items_counter, link_bound_counter)`` with ``delivered`` a list
    of ``(cycle, value)`` (cycles counted from the first input cycle).
    """
    link = LinkModel(shape=16, config=config, item_bits=item_bits, seed=3)
    delivered, result = [], {}

    async def sink(ctx):
        ctx.set(link.o.ready, 1)
        cycle = 0
        while len(delivered) < len(items):
            assert cycle < budget, f"link delivered {len(delivered)} of {len(items)} items"
            if ctx.get(link.o.valid):
                delivered.append((cycle, ctx.get(link.o.payload)))
            await ctx.tick()
            cycle += 1
        result.update(cycles=cycle, items=ctx.get(link.items), bound=ctx.get(link.link_bound))

    run_dut(link, stream_source(link.i, items), sink)
    return delivered, result["cycles"], result["items"], result["bound"]


def test_default_link_keeps_order_and_counts():
    items = list(range(40))
    delivered, cycles, count, bound = drive(LinkConfig(), items)
    assert [value for _, value in delivered] == items
    assert count == len(items) and bound == 0
    assert cycles <= len(items) + 6            # one item per cycle after the latency


@pytest.mark.parametrize("window", [2, 3, 5])
def test_reordering_stays_within_the_window(window):
    items = list(range(60))
    delivered, *_ = drive(LinkConfig(reorder_window=window, seed=7), items)
    order = [value for _, value in delivered]
    assert sorted(order) == items              # nothing lost or duplicated
    assert order != items                      # it really reorders
    for position, value in enumerate(order):
        overtaken_by = sum(1 for later in order[:position] if later > value)
        assert overtaken_by <= window - 1, (value, overtaken_by)


def test_bandwidth_limits_the_rate_and_counts_link_bound_cycles():
    items = list(range(50))
    delivered, cycles, count, bound = drive(LinkConfig(bits_per_cycle=2.5), items, item_bits=10)
    assert [value for _, value in delivered] == items
    # 50 items of 10 bits at 2.5 bits per cycle: 4 cycles each.
    span = delivered[-1][0] - delivered[0][0]
    assert 49 * 4 - 2 <= span <= 49 * 4 + 2, span
    assert bound >= 49 * 3 - 2                 # the input waited for credit most of the time


def test_fractional_bandwidth():
    items = list(range(30))
    delivered, *_ = drive(LinkConfig(bits_per_cycle=3.2), items, item_bits=8)
    span = delivered[-1][0] - delivered[0][0]
    assert abs(span - 29 * 2.5) <= 2, span


def test_latency_delays_every_item():
    delivered, *_ = drive(LinkConfig(latency_cycles=25, fifo_depth=4), [1, 2, 3])
    assert delivered[0][0] >= 25
    assert [value for _, value in delivered] == [1, 2, 3]


def test_random_stalls_keep_order_and_slow_the_link():
    items = list(range(60))
    fast, fast_cycles, *_ = drive(LinkConfig(), items)
    slow, slow_cycles, *_ = drive(LinkConfig(stall_probability=0.5, seed=11), items)
    assert [value for _, value in slow] == items
    assert slow_cycles > fast_cycles + 15


def test_platform_link_of_the_paper():
    platform = load_platform("ac510x4")
    two = LinkConfig.from_platform(platform, 2)
    four = LinkConfig.from_platform(platform, 4)
    assert two.word_bits == 128
    # 2.79 GiB/s to one peer and 5.85 GiB/s shared by three, at 187.5 MHz.
    assert two.bits_per_cycle == pytest.approx(2.79 * 2**30 * 8 / 187.5e6)
    assert four.bits_per_cycle == pytest.approx(5.85 * 2**30 * 8 / 3 / 187.5e6)
    assert four.latency_cycles == platform.network.link.latency_cycles
    assert LinkConfig.from_platform("ac510x4", 1).bits_per_cycle is None


def test_platform_with_too_few_fpgas():
    with pytest.raises(ConfigError, match="platform 'ac510x4' has 4 FPGAs, 5 asked"):
        LinkConfig.from_platform("ac510x4", 5)


@pytest.mark.parametrize("field, value, message", [
    ("fifo_depth", 0, "LinkConfig.fifo_depth must be a positive integer, not 0"),
    ("reorder_window", 1.5, "LinkConfig.reorder_window must be a positive integer"),
    ("bits_per_cycle", 0.0, "LinkConfig.bits_per_cycle must be positive"),
    ("stall_probability", 1.0, r"LinkConfig.stall_probability must be in \[0, 1\)"),
    ("latency_cycles", -1, "LinkConfig.latency_cycles must be an integer"),
])
def test_bad_link_config(field, value, message):
    with pytest.raises(ConfigError, match=message):
        LinkConfig(**{field: value})


def test_receiver_delivers_round_by_round_whatever_the_arrival_order():
    """Round 1's items and both barriers arrive before round 0's updates: the receiver still
    delivers round 0's updates, its barrier (with its count), then round 1."""
    from amaranth.lib import data

    from gravfm.hw.link import LinkReceiver

    layout = data.StructLayout({"sender": 8, "update": 4, "barrier": 1, "count": 6, "sent_any": 1})
    receiver = LinkReceiver(layout=layout, depth=4)

    def word(parity, sender=0, barrier=0, count=0):
        return {"item": {"sender": sender, "update": 0, "barrier": barrier, "count": count,
                         "sent_any": int(bool(barrier and count))}, "parity": parity}

    arrivals = [word(0, barrier=1, count=2), word(1, sender=30), word(0, sender=10),
                word(1, barrier=1, count=1), word(0, sender=11), word(0, barrier=1, count=0)]
    delivered = []

    async def sink(ctx):
        ctx.set(receiver.o.ready, 1)
        for _ in range(60):
            if ctx.get(receiver.o.valid):
                payload = ctx.get(receiver.o.payload)
                delivered.append(("B", payload.count) if payload.barrier else ("U", payload.sender))
            await ctx.tick()

    run_dut(receiver, stream_source(receiver.i, arrivals), sink)
    assert delivered == [("U", 10), ("U", 11), ("B", 2), ("U", 30), ("B", 1), ("B", 0)]
