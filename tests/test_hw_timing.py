"""Timing-driven structure of the PE: the hazard unit sized from the gather kernel's latency,
the registered stream stage that cuts long valid/ready paths, and the endpoint's and the link
merger's grants chosen a cycle ahead."""

import random

import pytest
from amaranth.hdl import Fragment, Module, Signal, unsigned
from amaranth.lib import data

from gravfm.algorithms import PAGERANK, WCC
from gravfm.hw import SystemConfig
from gravfm.hw.fp import FPAdder
from gravfm.hw.kernels import build_kernels
from gravfm.hw.layouts import KernelLayouts
from gravfm.hw.network import Endpoint, RoundMerger
from gravfm.hw.network.merge import round_robin_two
from gravfm.hw.pe import HazardUnit
from gravfm.hw.kernels import KernelSignature
from gravfm.hw.pe.gather import GatherUnit, hazard_slots_for
from gravfm.hw.skid_buffer import SkidBuffer
from conftest import insert_addresses, run_dut as run
from gravfm.hw.unused import silence_unused


class _Kernel:
    """Stands for a gather kernel: only its signature's latency is read."""

    def __init__(self, latency):
        self.signature = KernelSignature({}, latency=latency)


@pytest.mark.parametrize(("configured", "latency", "expected"), [(4, 0, 4), (4, 1, 4), (4, 2, 5), (4, 4, 7),
                                                                  (8, 4, 8), (1, 17, 20)])
def test_hazard_slots_cover_the_kernel_latency(configured, latency, expected):
    assert hazard_slots_for(configured, _Kernel(latency)) == expected


def test_hazard_slots_without_latency_attribute_keep_the_configured_size():
    assert hazard_slots_for(3, object()) == 3


@pytest.mark.parametrize("bad", [-1, 2.5, True, "4"])
def test_hazard_slots_reject_a_bad_latency(bad):
    with pytest.raises(TypeError, match="latency"):
        hazard_slots_for(4, _Kernel(bad))


@pytest.mark.parametrize(("algorithm", "expected"), [(WCC, 4), (PAGERANK, FPAdder.latency + 3)])
def test_gather_unit_sizes_its_hazard_unit_from_the_kernel(algorithm, expected):
    config = SystemConfig.of(algorithm=algorithm, local_bits=5)
    layouts = KernelLayouts(algorithm, config)
    kernel = build_kernels(algorithm, layouts)["gather"]
    gather = GatherUnit(layouts=layouts, config=config, kernel=kernel)
    assert gather.hazard_slots == expected
    hazard = Fragment.get(gather, None).find_subfragment("hazard")
    assert hazard is not None


@pytest.mark.parametrize(("p_valid", "p_ready"), [(1.0, 1.0), (0.7, 0.5), (1.0, 0.3), (0.3, 1.0)])
def test_skid_buffer_keeps_order_and_full_rate(p_valid, p_ready):
    dut = SkidBuffer(shape=unsigned(8))
    rng = random.Random(7)
    items = [rng.randrange(256) for _ in range(80)]

    async def bench(ctx):
        sent, received, cycles = 0, [], 0
        while len(received) < len(items):
            assert cycles < 2000, "items lost"
            valid = sent < len(items) and rng.random() < p_valid
            ready = rng.random() < p_ready
            ctx.set(dut.i.valid, valid)
            if valid:
                ctx.set(dut.i.payload, items[sent])
            ctx.set(dut.o.ready, ready)
            if ctx.get(dut.o.valid) and ready:
                received.append(ctx.get(dut.o.payload))
            accepted = valid and ctx.get(dut.i.ready)
            await ctx.tick()
            sent += accepted
            cycles += 1
        assert received == items
        if p_valid == p_ready == 1.0:  # one item per cycle after one cycle of latency
            assert cycles == len(items) + 1

    run(dut, bench)


def test_hazard_unit_with_remove_latency_frees_the_entry_a_cycle_later():
    dut = HazardUnit(addr_bits=3, slots=2, payload=unsigned(8), remove_latency=1)

    async def bench(ctx):
        await insert_addresses(ctx, dut, (5, 2))
        assert ctx.get(dut.full)
        ctx.set(dut.store, 1)
        ctx.set(dut.store_addr, 2)
        ctx.set(dut.store_data, 0x3C)
        await ctx.tick()
        ctx.set(dut.store, 0)
        ctx.set(dut.remove, 1)  # announce: 2 leaves next cycle
        ctx.set(dut.remove_addr, 2)
        ctx.set(dut.check_addr, 2)
        assert ctx.get(dut.hazard) and ctx.get(dut.full)
        await ctx.tick()
        ctx.set(dut.remove, 0)
        assert ctx.get(dut.remove_data) == 0x3C
        assert not ctx.get(dut.hazard) and not ctx.get(dut.full)
        await ctx.tick()
        assert not ctx.get(dut.hazard) and not ctx.get(dut.empty)

    run(dut, bench)


def test_hazard_unit_by_slot_removes_and_stores_the_named_slot():
    """With ``by_slot`` an insert reports its slot, and a removal or a store names the slot, not
    the address (the same address may then sit in two slots, as gather never lets it)."""
    dut = HazardUnit(addr_bits=3, slots=3, payload=unsigned(8), remove_latency=1, by_slot=True)

    async def bench(ctx):
        taken = []
        for address in (5, 2, 6):
            taken.append(ctx.get(dut.insert_slot))
            await insert_addresses(ctx, dut, (address,))
        assert taken == [0, 1, 2] and ctx.get(dut.full)
        ctx.set(dut.store, 1)
        ctx.set(dut.store_slot, 1)
        ctx.set(dut.store_data, 0x5A)
        await ctx.tick()
        ctx.set(dut.store, 0)
        ctx.set(dut.remove, 1)   # announce slot 1 (address 2); the address port is not read
        ctx.set(dut.remove_slot, 1)
        ctx.set(dut.remove_addr, 5)
        await ctx.tick()
        ctx.set(dut.remove, 0)
        assert ctx.get(dut.remove_data) == 0x5A
        ctx.set(dut.check_addr, 2)
        assert not ctx.get(dut.hazard) and not ctx.get(dut.full) and ctx.get(dut.insert_slot) == 1
        ctx.set(dut.check_addr, 5)
        assert ctx.get(dut.hazard)

    run(dut, bench)


def test_hazard_unit_rejects_a_bad_remove_latency():
    with pytest.raises(TypeError, match="remove latency"):
        HazardUnit(addr_bits=3, slots=2, remove_latency=2)


def test_hazard_unit_look_ahead_predicts_the_next_cycle():
    """``ahead`` (or this cycle's insert of the address) is the address's ``hazard`` a cycle later:
    what gather keeps in its registered hazard flags."""
    dut = HazardUnit(addr_bits=3, slots=3, remove_latency=1, lookahead=2)
    rng = random.Random(3)
    seen = {"ahead": 0, "announced": 0, "insert": 0}

    async def bench(ctx):
        entries, announced = [], None  # in flight; the address announced last cycle
        predictions = []
        for _ in range(500):
            freeing = announced
            live = [a for a in entries if a != freeing]
            for address, predicted in predictions:
                ctx.set(dut.check_addr, address)
                assert ctx.get(dut.hazard) == predicted == (address in live)
            announce = bool(live) and rng.random() < 0.4
            announced = rng.choice(live) if announce else None
            ctx.set(dut.remove, announce)
            ctx.set(dut.remove_addr, announced or 0)
            candidate = rng.randrange(8)
            ctx.set(dut.check_addr, candidate)
            hazard = ctx.get(dut.hazard)
            assert hazard == (candidate in live)
            insert = not hazard and not ctx.get(dut.full) and rng.random() < 0.7
            ctx.set(dut.insert, insert)
            ctx.set(dut.insert_addr, candidate)
            probes = [rng.randrange(8) for _ in range(2)]
            predictions = []
            for i, address in enumerate(probes):
                ctx.set(dut.ahead_addr[i], address)
                ahead = ctx.get(dut.ahead[i])
                assert ahead == (address in live and address != announced)
                predictions.append((address, bool(ahead) or (insert and address == candidate)))
                seen["ahead"] += ahead
            await ctx.tick()
            entries = live + ([candidate] if insert else [])
            seen["announced"] += announce
            seen["insert"] += insert

    run(dut, bench)
    assert seen["ahead"] > 50 and seen["announced"] > 50 and seen["insert"] > 50


def test_hazard_unit_look_ahead_needs_the_remove_latency():
    with pytest.raises(TypeError, match="look-ahead"):
        HazardUnit(addr_bits=3, slots=2, lookahead=1)


def test_gather_unit_rejects_a_bad_write_latency():
    config = SystemConfig.of(algorithm=WCC, local_bits=5)
    layouts = KernelLayouts(WCC, config)
    kernel = build_kernels(WCC, layouts)["gather"]
    silence_unused(kernel)  # never elaborated: the gather unit is refused
    with pytest.raises(TypeError, match="write latency"):
        GatherUnit(layouts=layouts, config=config, kernel=kernel, write_latency=2)


NET = data.StructLayout({"sender": unsigned(6), "barrier": 1, "count": unsigned(4), "sent_any": 1})


@pytest.mark.parametrize("sources", [1, 4])
def test_endpoint_registered_grant_keeps_one_update_per_cycle(sources):
    """The grant is chosen a cycle ahead; with every source always offering, the endpoint still
    hands over an update every cycle. Each incoming barrier takes a cycle, and a round's barrier
    leaves two cycles after the last one arrived (``arrived``, then the registered completion)."""
    per_round, rounds = 12, 2
    scripts = []
    for s in range(sources):
        script = []
        for r in range(rounds):
            script += [{"sender": (s * 16 + r * per_round + k) % 64, "barrier": 0, "count": 0, "sent_any": 0}
                       for k in range(per_round)]
            script.append({"sender": 0, "barrier": 1, "count": per_round, "sent_any": 1})
        scripts.append(script + [{"sender": 0, "barrier": 1, "count": 0, "sent_any": 0}])
    dut = Endpoint(layout=NET, sources=sources, count_bits=4)
    updates = sources * per_round * rounds

    async def bench(ctx):
        position, delivered, barriers, cycles = [0] * sources, 0, 0, 0
        while not ctx.get(dut.terminated):
            assert cycles < 10 * updates, "the endpoint stopped"
            for s, script in enumerate(scripts):
                valid = position[s] < len(script)
                ctx.set(dut.i[s].valid, valid)
                if valid:
                    ctx.set(dut.i[s].payload, script[position[s]])
            ctx.set(dut.o.ready, 1)
            if ctx.get(dut.o.valid):
                barrier = ctx.get(dut.o.payload.barrier)
                delivered += not barrier
                barriers += barrier
            taken = [position[s] < len(scripts[s]) and ctx.get(dut.i[s].ready) for s in range(sources)]
            await ctx.tick()
            position = [p + t for p, t in zip(position, taken)]
            cycles += 1
        assert (delivered, barriers) == (updates, rounds)
        # Updates, incoming barriers and per round two completion cycles plus the barrier out.
        assert cycles <= updates + sources * (rounds + 1) + 3 * rounds + 2, cycles

    run(dut, bench)


def test_endpoint_ready_does_not_wait_for_valid():
    """The granted source's ``ready`` is up before it offers anything (and no other source's is):
    its FIFO's read enable must not run through every source's valid and the grant multiplexer."""
    dut = Endpoint(layout=NET, sources=4, count_bits=4)

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        for s in range(4):
            ctx.set(dut.i[s].valid, 0)
        await ctx.tick()
        assert [ctx.get(dut.i[s].ready) for s in range(4)] == [1, 0, 0, 0]
        # A refusing PE closes it again (for an update; a barrier is taken regardless).
        ctx.set(dut.o.ready, 0)
        assert [ctx.get(dut.i[s].ready) for s in range(4)] == [0, 0, 0, 0]
        ctx.set(dut.i[0].payload, {"sender": 0, "barrier": 1, "count": 0, "sent_any": 0})
        assert ctx.get(dut.i[0].ready) == 1

    run(dut, bench)


def test_second_lane_ready_does_not_wait_for_the_first_source():
    """With two lanes the second granted source's ``ready`` is the same whether or not the first
    granted source offers an update: its FIFO's read enable must not run through another source's
    valid (FPGA 0 of 4 x 4 PEs on ECP5: 76 MHz on that path). Its update then leaves alone."""
    dut = Endpoint(layout=NET, sources=3, count_bits=4, lanes=2)
    update = {"sender": 5, "barrier": 0, "count": 0, "sent_any": 0}

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        for s in range(3):
            ctx.set(dut.i[s].valid, 1)
            ctx.set(dut.i[s].payload, update)
        await ctx.tick()   # grants chosen a cycle ahead: source 1, then source 2
        assert [ctx.get(dut.i[s].ready) for s in range(3)] == [0, 1, 1]
        ctx.set(dut.i[1].valid, 0)
        assert [ctx.get(dut.i[s].ready) for s in range(3)] == [0, 1, 1]
        assert ctx.get(dut.o.valid) and ctx.get(dut.o.payload.valid) == 0b10
        assert ctx.get(dut.o.payload.lanes[1].sender) == 5

    run(dut, bench)


def _merger_script(source, rounds):
    """``rounds[r]`` updates of ``source`` in round r, each round closed by its barrier (items of
    fewer than 16 per source are told apart by ``sender``)."""
    script = []
    for r, count in enumerate(rounds):
        script += [{"sender": 0, "barrier": 0, "count": 0, "sent_any": 0} for _ in range(count)]
        script.append({"sender": 0, "barrier": 1, "count": count, "sent_any": int(count > 0)})
    for k, item in enumerate(script):
        item["sender"] = source * 16 + k % 16
    return script


def _merge(dut, scripts, rng, p_valid, p_ready, cycles):
    """Drive ``dut`` (a RoundMerger) with ``scripts``; return the items it sent, in order."""
    sent = []

    async def bench(ctx):
        position = [0] * len(scripts)
        for _ in range(cycles):
            offered = []
            for s, script in enumerate(scripts):
                valid = position[s] < len(script) and rng.random() < p_valid
                ctx.set(dut.i[s].valid, valid)
                if valid:
                    ctx.set(dut.i[s].payload, script[position[s]])
                offered.append(valid)
            ready = rng.random() < p_ready
            ctx.set(dut.o.ready, ready)
            if ready and ctx.get(dut.o.valid):
                item = ctx.get(dut.o.payload)
                sent.append({"sender": item.sender, "barrier": item.barrier, "count": item.count,
                             "sent_any": item.sent_any})
            taken = [offered[s] and ctx.get(dut.i[s].ready) for s in range(len(scripts))]
            await ctx.tick()
            position = [p + t for p, t in zip(position, taken)]

    run(dut, bench)
    return sent


@pytest.mark.parametrize(("p_valid", "p_ready", "seed"), [(1.0, 1.0, 1), (0.6, 0.7, 2), (0.9, 0.4, 3)])
def test_merger_sends_round_by_round_in_source_order(p_valid, p_ready, seed):
    """Every item leaves once; each source's items keep their order; round r+1 starts only after
    every source's round-r barrier."""
    rounds = [[3, 0, 2], [1, 4, 0], [0, 0, 1], [2, 2, 2]]
    scripts = [_merger_script(s, r) for s, r in enumerate(rounds)]
    dut = RoundMerger(layout=NET, sources=len(scripts))
    sent = _merge(dut, scripts, random.Random(seed), p_valid, p_ready, cycles=300)
    assert len(sent) == sum(map(len, scripts))
    for s, script in enumerate(scripts):
        mine = [item for item in sent if item in script]
        assert mine == script
    # Round of each item: the number of barriers its source sent before it.
    barriers_before, rounds_seen = [0] * len(scripts), []
    for item in sent:
        s = next(s for s, script in enumerate(scripts) if item in script)
        rounds_seen.append(barriers_before[s])
        barriers_before[s] += item["barrier"]
    assert rounds_seen == sorted(rounds_seen)


def test_merger_keeps_one_item_per_cycle():
    """Sources always offering, the link always taking: an item leaves every cycle after the two
    registers' latency, but for the cycle in which a round's end clears the barrier flags."""
    scripts = [_merger_script(s, [12, 12]) for s in range(4)]
    dut = RoundMerger(layout=NET, sources=4)
    total = sum(map(len, scripts))
    sent = _merge(dut, scripts, random.Random(0), 1.0, 1.0, cycles=total + 3)
    assert len(sent) == total


def test_merger_ready_is_registered():
    """A source's ``ready`` does not depend on any input in the same cycle (a flip-flop), so the
    round robin never runs back into a link FIFO's read enable."""
    dut = RoundMerger(layout=NET, sources=4)

    async def bench(ctx):
        for o_ready, valid in ((1, 0), (0, 1), (1, 1)):
            ctx.set(dut.o.ready, o_ready)
            for s in range(4):
                ctx.set(dut.i[s].valid, valid)
            assert [ctx.get(dut.i[s].ready) for s in range(4)] == [1, 1, 1, 1]
        ctx.set(dut.o.ready, 0)
        await ctx.tick().repeat(4)   # the output and every entry fill up: nothing is ready
        assert [ctx.get(dut.i[s].ready) for s in range(4)] == [0, 0, 0, 0]
        ctx.set(dut.o.ready, 1)
        assert [ctx.get(dut.i[s].ready) for s in range(4)] == [0, 0, 0, 0]

    run(dut, bench)


def _round_robin_after(bits, first, n, *, skip_first):
    """The reference: the first set bit of ``bits`` after ``first`` in round-robin order."""
    order = [(first + 1 + k) % n for k in range(n - 1 if skip_first else n)]
    return next((s for s in order if bits >> s & 1), None)


@pytest.mark.parametrize("n, window", [*((n, False) for n in (1, 2, 3, 5, 6)), *((n, True) for n in (1, 2, 3, 5, 6, 64))])
def test_round_robin_two_is_the_round_robin_then_the_next_after_it(n, window):
    """The endpoint's two lanes, in both forms: the first grant is the round robin after ``start``
    and the second the round robin after the first with the first itself excluded (none when fewer
    than two are eligible); every eligible set and start up to 6 sources, a sample of 64's."""
    m = Module()
    eligible, start = Signal(n), Signal(range(max(n, 2)))
    grant, granted, second, second_granted = round_robin_two(m, eligible, start, window=window)
    rng = random.Random(n)
    cases = ([(first, bits) for first in range(n) for bits in range(1 << n)] if n <= 6 else
             [(rng.randrange(n), rng.getrandbits(n) & rng.getrandbits(n) & rng.getrandbits(n)) for _ in range(300)])

    async def bench(ctx):
        for first, bits in cases:
            ctx.set(start, first)
            ctx.set(eligible, bits)
            want = _round_robin_after(bits, first, n, skip_first=False)
            want2 = None if want is None else _round_robin_after(bits, want, n, skip_first=True)
            got = ctx.get(grant) if ctx.get(granted) else None
            got2 = ctx.get(second) if ctx.get(second_granted) else None
            assert (got, got2) == (want, want2), (first, bits)

    from amaranth.sim import Simulator
    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
