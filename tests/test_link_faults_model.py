"""The link model's faults (drop, duplicate, bit flip, dead link) and their configuration.

The C++ twin is proven cycle-identical in tests/test_link_model_cpp.py; here the faults do what
they say, under Amaranth's simulator.
"""

import pytest
from amaranth.sim import Simulator

from gravfm.errors import ConfigError
from gravfm.hw.link import LinkConfig, LinkModel

from conftest import stream_source


def drive(config, items, *, dead_after=None, budget=4000):
    """Push ``items`` (16-bit) through a LinkModel, always ready at the output, until it has been
    quiet for 100 cycles; return ``(delivered values, {counter: value})``."""
    link = LinkModel(shape=16, config=config, item_bits=16, seed=5, dead_after=dead_after)
    delivered, counters = [], {}

    async def sink(ctx):
        ctx.set(link.o.ready, 1)
        quiet = 0
        for _ in range(budget):
            if ctx.get(link.o.valid):
                delivered.append(ctx.get(link.o.payload))
                quiet = 0
            else:
                quiet += 1
            if quiet > 100 and ctx.get(link.items) == len(items):
                break
            await ctx.tick()
        await ctx.tick().repeat(10)   # the last items leave (or are lost) after the latency
        counters.update({name: ctx.get(getattr(link, name)) for name in
                         ("items", "dropped", "duplicated", "flipped", "first_fault")})

    sim = Simulator(link)
    sim.add_clock(1e-6)
    sim.add_testbench(stream_source(link.i, items))
    sim.add_testbench(sink)
    sim.run()
    return delivered, counters


ITEMS = [0x5A00 | k for k in range(200)]


def test_drops_lose_items_and_count_them():
    delivered, counters = drive(LinkConfig(drop_rate=0.1), ITEMS)
    assert counters["dropped"] > 5
    assert len(delivered) == len(ITEMS) - counters["dropped"]
    remaining = iter(ITEMS)
    assert all(value in remaining for value in delivered)   # in order, a subsequence
    assert counters["first_fault"] > 0


def test_duplicates_deliver_an_item_again_right_after_itself():
    delivered, counters = drive(LinkConfig(duplicate_rate=0.1), ITEMS)
    assert counters["duplicated"] > 5
    assert len(delivered) == len(ITEMS) + counters["duplicated"]
    assert list(dict.fromkeys(delivered)) == ITEMS
    repeats = sum(1 for a, b in zip(delivered, delivered[1:]) if a == b)
    assert repeats == counters["duplicated"]


def test_flips_change_exactly_one_bit():
    delivered, counters = drive(LinkConfig(flip_rate=0.1), ITEMS)
    assert counters["flipped"] > 5
    assert len(delivered) == len(ITEMS)
    differences = [(a ^ b).bit_count() for a, b in zip(delivered, ITEMS)]
    assert set(differences) == {0, 1}
    assert differences.count(1) == counters["flipped"]


def test_dead_link_takes_everything_and_delivers_nothing_after_its_time():
    delivered, counters = drive(LinkConfig(), ITEMS, dead_after=0)
    assert delivered == [] and counters["items"] == len(ITEMS) == counters["dropped"]
    later, counters = drive(LinkConfig(), ITEMS, dead_after=50)
    assert 30 < len(later) < 60 and later == ITEMS[:len(later)]
    assert counters["dropped"] == len(ITEMS) - len(later)


def test_same_seed_same_faults():
    config = LinkConfig(drop_rate=0.05, duplicate_rate=0.05, flip_rate=0.05, stall_probability=0.3)
    assert drive(config, ITEMS) == drive(config, ITEMS)


def test_fault_thresholds_and_dead_links():
    config = LinkConfig(drop_rate=1e-3, duplicate_rate=0.5, flip_rate=1 / 65536, dead=((0, 2, 0), (0, 2, 7), (1, 0, 9)))
    assert config.fault_thresholds == (66, 32768, 1)
    assert config.faulty and not LinkConfig().faulty
    assert (config.dead_after(0, 2), config.dead_after(1, 0), config.dead_after(2, 0)) == (0, 9, None)
    with pytest.raises(ConfigError, match="dead link 1-3: the system has FPGAs 0..2"):
        LinkConfig(dead=((1, 3, 0),)).check_fpgas(3)


@pytest.mark.parametrize("options, message", [
    ({"drop_rate": 1.0}, r"LinkConfig.drop_rate must be 0 or in \[1/65536, 1\)"),
    ({"flip_rate": 1e-6}, r"LinkConfig.flip_rate must be 0 or in \[1/65536, 1\)"),
    ({"drop_rate": 0.5, "duplicate_rate": 0.5}, "the link's fault rates add up to 1: they must stay below 1"),
    ({"dead": ((0, 0, 5),)}, "a dead link is .* with two different FPGAs"),
    ({"dead": [(0, 1, 5)]}, "LinkConfig.dead must be a tuple"),
    ({"check": "paranoid"}, "unknown link check 'paranoid' .known: off, detect, retransmit."),
    ({"check": "detect", "reorder_window": 3}, "the detect link check needs an in-order link"),
    ({"check": "retransmit", "replay_depth": 48}, "the replay depth must be a power of two in 4..32768"),
    ({"check": "detect", "replay_depth": 64}, "the replay depth must be a power of two .* with the retransmit"),
])
def test_bad_fault_options(options, message):
    with pytest.raises(ConfigError, match=message):
        LinkConfig(**options)


def test_platform_link_follows_an_overridden_latency():
    link = LinkConfig.from_platform("ac510x4", 2, latency_cycles=2000)
    assert (link.latency_cycles, link.fifo_depth) == (2000, 2016)
    assert LinkConfig.from_platform("ac510x4", 2, latency_cycles=2000, fifo_depth=4).fifo_depth == 4
