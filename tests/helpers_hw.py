"""Simulation helpers shared by the hardware unit tests (test_hw_timing, test_hw_units,
test_hw_multi_link)."""

from amaranth.sim import Simulator


def run(dut, bench):
    """Simulate ``dut`` with one testbench ``bench`` on a 100 MHz clock, to the bench's end."""
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


async def insert_addresses(ctx, hazard_unit, addresses):
    """Insert ``addresses`` into a hazard unit, one per cycle; ``insert`` is low afterwards."""
    for address in addresses:
        ctx.set(hazard_unit.insert, 1)
        ctx.set(hazard_unit.insert_addr, address)
        await ctx.tick()
    ctx.set(hazard_unit.insert, 0)


def stream_source(port, items):
    """A testbench offering ``items`` in order on the stream ``port``, each until it is taken."""
    async def source(ctx):
        for item in items:
            ctx.set(port.valid, 1)
            ctx.set(port.payload, item)
            await ctx.tick().until(port.ready)
        ctx.set(port.valid, 0)

    return source
