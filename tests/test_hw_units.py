"""Units of the PE and network on their own: hazard CAM, stream FIFO (the update queue),
broadcaster and endpoint (floating barrier, virtual channels, termination)."""

import random
import re

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module, unsigned
from amaranth.lib import data
from amaranth.lib.fifo import SyncFIFOBuffered

from gravfm.hw.network import Broadcaster, Endpoint
from gravfm.hw.pe import HazardUnit
from gravfm.hw.prefetch_fifo import PrefetchFIFO
from gravfm.hw.stream_fifo import BufferedFIFO, StreamFIFO
from conftest import insert_addresses, run_dut as run


@pytest.mark.parametrize("slots", [1, 3])
def test_hazard_unit_matches_a_set_model(slots):
    dut = HazardUnit(addr_bits=3, slots=slots)
    rng = random.Random(slots)
    seen = {"hazard": 0, "full": 0, "insert": 0}

    async def bench(ctx):
        in_flight = []
        for _ in range(400):
            remove = bool(in_flight) and rng.random() < 0.5
            removed = in_flight[0] if remove else 0
            candidate = rng.randrange(8)
            ctx.set(dut.remove, remove)
            ctx.set(dut.remove_addr, removed)
            ctx.set(dut.check_addr, candidate)
            other = rng.randrange(8)
            ctx.set(dut.check2_addr, other)
            remaining = [a for a in in_flight if not (remove and a == removed)]
            hazard = candidate in remaining
            assert ctx.get(dut.hazard2) == (other in remaining)
            full = len(remaining) >= slots
            assert ctx.get(dut.hazard) == hazard
            assert ctx.get(dut.full) == full
            assert ctx.get(dut.empty) == (not in_flight)
            insert = not hazard and not full and rng.random() < 0.8
            ctx.set(dut.insert, insert)
            ctx.set(dut.insert_addr, candidate)
            await ctx.tick()
            in_flight = remaining + ([candidate] if insert else [])
            seen["hazard"] += hazard
            seen["full"] += full
            seen["insert"] += insert

    run(dut, bench)
    assert seen["hazard"] > 10 and seen["insert"] > 50  # the random walk exercised the cases
    if slots == 1:
        assert seen["full"] > 10


@pytest.mark.parametrize("depth, output_register, bypass", [
    (1, False, False), (2, False, False), (3, False, False), (6, True, False), (1, False, True), (2, False, True),
    (5, False, True), (5, True, True)])
def test_stream_fifo_keeps_order_under_random_handshakes(depth, output_register, bypass):
    layout = data.StructLayout({"sender": unsigned(5), "barrier": 1})
    dut = StreamFIFO(shape=layout, depth=depth, output_register=output_register, bypass=bypass)
    rng = random.Random(depth)
    items = [(rng.randrange(32), rng.randrange(2)) for _ in range(60)]

    async def bench(ctx):
        sent, received = 0, []
        for _ in range(1000):
            valid = sent < len(items) and rng.random() < 0.7
            ready = rng.random() < 0.5
            if valid:
                ctx.set(dut.i.payload, {"sender": items[sent][0], "barrier": items[sent][1]})
            ctx.set(dut.i.valid, valid)
            ctx.set(dut.o.ready, ready)
            assert ctx.get(dut.level) <= depth
            if ctx.get(dut.o.valid) and ready:
                payload = ctx.get(dut.o.payload)
                received.append((payload.sender, payload.barrier))
            accepted = valid and ctx.get(dut.i.ready)
            await ctx.tick()
            sent += accepted
            if len(received) == len(items):
                break
        assert received == items

    run(dut, bench)


@pytest.mark.parametrize("head_register", [False, True])
@pytest.mark.parametrize("depth", [2, 3, 5, 16])
def test_buffered_fifo_matches_the_library_fifo_cycle_by_cycle(depth, head_register):
    """Same ports, same timing as SyncFIFOBuffered, with or without the fabric head register."""
    ours = BufferedFIFO(width=8, depth=depth, head_register=head_register)
    library = SyncFIFOBuffered(width=8, depth=depth)
    top = Module()
    top.submodules.ours, top.submodules.library = ours, library
    rng = random.Random(depth)
    seen = {"full": 0, "empty_read": 0}

    async def bench(ctx):
        for cycle in range(600):
            w_en, r_en, value = rng.random() < 0.6, rng.random() < 0.5, rng.randrange(256)
            for fifo_ in (ours, library):
                ctx.set(fifo_.w_en, w_en)
                ctx.set(fifo_.w_data, value)
                ctx.set(fifo_.r_en, r_en)
            for name in ("w_rdy", "r_rdy", "level"):
                assert ctx.get(getattr(ours, name)) == ctx.get(getattr(library, name)), (cycle, name)
            # Even while not r_rdy: a consumer may look at the stale head.
            assert ctx.get(ours.r_data) == ctx.get(library.r_data), cycle
            seen["full"] += not ctx.get(library.w_rdy)
            seen["empty_read"] += r_en and not ctx.get(library.r_rdy)
            await ctx.tick()

    run(top, bench)
    assert seen["full"] and seen["empty_read"]  # both edges of the FIFO were exercised


def _check_bypass_timing(dut, depth, rng, *, cycles, rates):
    """Drive ``dut`` (BufferedFIFO's ports) with random strobes, the write and read probabilities
    drawn from ``rates`` every 37 cycles, and check it cycle by cycle against a bypass FIFO: an
    item written while nothing is stored and the head is free (or leaving) is the head the next
    cycle, one written behind others is the head the cycle after they have all left."""
    seen = {"full": 0, "bypassed": 0, "stored": 0, "streamed": 0}

    async def bench(ctx):
        stored, head = [], None
        for cycle in range(cycles):
            if cycle % 37 == 0:
                p_write, p_read = rng.choice(rates), rng.choice(rates)
            w_en, r_en, value = rng.random() < p_write, rng.random() < p_read, rng.randrange(256)
            ctx.set(dut.w_en, w_en)
            ctx.set(dut.w_data, value)
            ctx.set(dut.r_en, r_en)
            assert ctx.get(dut.w_rdy) == (len(stored) < depth - 1), cycle
            assert ctx.get(dut.r_rdy) == (head is not None), cycle
            assert ctx.get(dut.level) == len(stored) + (head is not None), cycle
            if head is not None:
                assert ctx.get(dut.r_data) == head, cycle
            written = w_en and len(stored) < depth - 1
            head_free = head is None or r_en
            bypassed = written and not stored and head_free
            seen["streamed"] += written and r_en and len(stored) >= 2
            if stored and head_free:
                head = stored.pop(0)
            elif bypassed:
                head = value
            elif r_en:
                head = None
            if written and not bypassed:
                stored.append(value)
            seen["full"] += len(stored) == depth - 1
            seen["bypassed"] += bypassed
            seen["stored"] += written and not bypassed
            await ctx.tick()

    run(dut, bench)
    return seen


@pytest.mark.parametrize("head_register", [False, True])
@pytest.mark.parametrize("depth", [2, 3, 5, 16])
def test_bypass_fifo_matches_a_model_cycle_by_cycle(depth, head_register):
    dut = BufferedFIFO(width=8, depth=depth, head_register=head_register, bypass=True)
    seen = _check_bypass_timing(dut, depth, random.Random(depth), cycles=800, rates=[0.2, 0.5, 0.9])
    assert seen["full"] and seen["bypassed"] > 20 and seen["stored"] > 20


@pytest.mark.parametrize("depth", [PrefetchFIFO.QUEUE + 1, 9, 64])
def test_prefetch_fifo_has_the_bypass_fifos_timing(depth):
    """Streams in and out at every rate, full and empty: the three-cycle read stays invisible."""
    dut = PrefetchFIFO(width=8, depth=depth)
    seen = _check_bypass_timing(dut, depth, random.Random(depth), cycles=2500, rates=[0, 0.2, 0.5, 0.8, 0.95, 1])
    assert seen["full"] and seen["bypassed"] > 20 and seen["stored"] > 100 and seen["streamed"] > 100


def test_prefetch_fifo_with_a_three_item_queue_misses_that_timing():
    """The queue's size is what the timing needs: one item fewer and a stored item comes late."""
    dut = PrefetchFIFO(width=8, depth=9, queue=PrefetchFIFO.QUEUE - 1)
    with pytest.raises(AssertionError):
        _check_bypass_timing(dut, 9, random.Random(9), cycles=2500, rates=[0, 0.2, 0.5, 0.8, 0.95, 1])


def test_buffered_fifo_storage_carries_the_no_read_during_write_attribute():
    text = verilog.convert(BufferedFIFO(width=8, depth=4), name="top")
    assert "no_rw_check" in text
    assert "ram_style" not in text


def test_stream_fifo_ram_style_reaches_the_storage():
    text = verilog.convert(StreamFIFO(shape=8, depth=64, ram_style="distributed"), name="top")
    assert '(* ram_style = "distributed" *)' in text and "no_rw_check" in text


NET = data.StructLayout({"sender": unsigned(6), "update": data.StructLayout({"v": unsigned(4)}),
                         "barrier": 1, "count": unsigned(4), "sent_any": 1})


def test_a_prefetch_fifo_refuses_the_options_of_the_other_kinds():
    for options in ({"head_register": True, "bypass": True}, {"bypass": False}):
        with pytest.raises(TypeError, match="a prefetch FIFO needs bypass and a depth > 4, and takes no ram_style"):
            StreamFIFO(shape=8, depth=64, prefetch=True, **options)
    with pytest.raises(TypeError, match="a prefetch FIFO needs bypass and a depth > 4"):
        StreamFIFO(shape=8, depth=4, prefetch=True, bypass=True)
    with pytest.raises(TypeError, match="depth must be an integer > 4"):
        PrefetchFIFO(width=8, depth=4)


def test_a_deep_crossbar_fifo_is_block_ram_read_from_registers():
    """Deeper than a LUT-RAM row: block RAM, its read address the read pointer itself (a
    register, not the next head's address chosen by the endpoint's ready); a row deep or less:
    LUT RAM alone."""
    from gravfm.hw.network.network import LUT_RAM_FIFO_DEPTH, crossbar_fifo
    deep = verilog.convert(crossbar_fifo(NET, 64), name="top")
    assert deep.count('(* ram_style = "block" *)') == 1 and "distributed" not in deep
    address = re.search(r"<= storage\[(\S+)\];", deep).group(1)
    assert re.search(rf"^  reg \[\d+:0\] {re.escape(address)} ", deep, re.M), "the block RAM is read at a register"
    shallow = verilog.convert(crossbar_fifo(NET, LUT_RAM_FIFO_DEPTH), name="top")
    assert shallow.count('(* ram_style = "distributed" *)') == 1 and "block" not in shallow


def test_broadcaster_delivers_each_item_once_to_every_output():
    dut = Broadcaster(shape=NET, count=3)
    rng = random.Random(2)
    items = list(range(1, 30))

    async def bench(ctx):
        sent, got = 0, [[], [], []]
        for _ in range(2000):
            valid = sent < len(items)
            if valid:
                ctx.set(dut.i.payload.sender, items[sent])
            ctx.set(dut.i.valid, valid)
            readies = [rng.random() < (0.2 if j == 2 else 0.9) for j in range(3)]
            for j, out in enumerate(dut.o):
                ctx.set(out.ready, readies[j])
            for j, out in enumerate(dut.o):
                if ctx.get(out.valid) and readies[j]:
                    got[j].append(ctx.get(out.payload.sender))
            accepted = valid and ctx.get(dut.i.ready)
            await ctx.tick()
            sent += accepted
        assert got == [items] * 3

    run(dut, bench)


@pytest.mark.parametrize("lanes, depth", [(2, 4), (2, 8), (3, 6)])
def test_lane_queue_keeps_the_valid_lanes_in_order(lanes, depth):
    """Cycle by cycle against a list model: head, ``o.valid`` and ``i.ready`` (``lanes`` entries
    free) as the model says, kept lanes in lane order, dropped ones gone (scatter's list queue
    relies on the exact timing: its cycle counts must not move)."""
    from gravfm.hw.lane_queue import LaneQueue
    dut = LaneQueue(shape=8, lanes=lanes, depth=depth)
    rng = random.Random(lanes * 10 + depth)
    groups = [[(rng.randrange(256), rng.random() < 0.6) for _ in range(lanes)] for _ in range(150)]
    expected = [value for group in groups for value, keep in group if keep]

    async def bench(ctx):
        sent, got, model, seen_full = 0, [], [], False
        for cycle in range(1500):
            valid = sent < len(groups) and rng.random() < 0.8
            if valid:
                for k, (value, keep) in enumerate(groups[sent]):
                    ctx.set(dut.i.payload.lanes[k], value)
                ctx.set(dut.i.payload.valid, sum(keep << k for k, (_, keep) in enumerate(groups[sent])))
            ctx.set(dut.i.valid, valid)
            # Phases of slow and fast draining, so that the queue also runs full.
            ready = rng.random() < (0.3 if cycle // 100 % 2 else 0.9)
            ctx.set(dut.o.ready, ready)
            assert ctx.get(dut.o.valid) == bool(model), cycle
            assert ctx.get(dut.i.ready) == (len(model) <= depth - lanes), cycle
            seen_full |= not ctx.get(dut.i.ready)
            if model:
                assert ctx.get(dut.o.payload) == model[0], cycle
            if ready and model:
                got.append(model.pop(0))
            accepted = valid and ctx.get(dut.i.ready)
            if accepted:
                model.extend(value for value, keep in groups[sent] if keep)
            await ctx.tick()
            sent += accepted
        assert sent == len(groups)
        assert got == expected
        assert seen_full

    run(dut, bench)


def output_items(payload, lanes):
    """(barrier, sender) of each item an endpoint hands over in one cycle."""
    if lanes == 1:
        return [(payload.barrier, payload.sender)]
    assert payload.valid, "some lane must be valid whenever the endpoint offers anything"
    items = [(lane.barrier, lane.sender) for k, lane in enumerate(payload.lanes) if payload.valid >> k & 1]
    assert not (payload.valid >> 1 & 1 and payload.lanes[1].barrier), "a barrier must travel alone in lane 0"
    assert not (items[0][0] and len(items) > 1), "a barrier must travel alone in lane 0"
    return items


def endpoint_bench(dut, scripts, rng, *, ready_probability=0.6, cycles=3000, lanes=1, valid_probability=0.7):
    """Drive ``scripts[s]`` (lists of dicts) into source ``s``; return (output items, terminated)."""
    outputs = []
    terminated_at = []

    async def bench(ctx):
        position = [0] * len(scripts)
        for cycle in range(cycles):
            offered = []
            for s, script in enumerate(scripts):
                valid = position[s] < len(script) and rng.random() < valid_probability
                if valid:
                    ctx.set(dut.i[s].payload, script[position[s]])
                ctx.set(dut.i[s].valid, valid)
                offered.append(valid)
            ready = rng.random() < ready_probability
            ctx.set(dut.o.ready, ready)
            if ctx.get(dut.o.valid) and ready:
                outputs.extend(output_items(ctx.get(dut.o.payload), lanes))
            taken = [offered[s] and ctx.get(dut.i[s].ready) for s in range(len(scripts))]
            if ctx.get(dut.terminated) and not terminated_at:
                terminated_at.append(cycle)
            await ctx.tick()
            for s in range(len(scripts)):
                position[s] += taken[s]

    return bench, outputs, terminated_at


def source_script(source, rounds):
    """Updates of ``source`` (``rounds[r]`` updates in round r), each round closed by its barrier."""
    script = []
    for r, count in enumerate(rounds):
        for k in range(count):
            script.append({"sender": source * 16 + r * 4 + k, "barrier": 0, "count": 0, "sent_any": 0})
        script.append({"sender": 0, "barrier": 1, "count": count, "sent_any": int(count > 0)})
    return script


@pytest.mark.parametrize("lanes", [1, 2])
def test_endpoint_floating_barrier_and_termination(lanes):
    rounds = [[2, 1, 0, 0], [0, 3, 1, 0], [1, 0, 0, 0]]  # per source: updates per round
    dut = Endpoint(layout=NET, sources=3, count_bits=4, lanes=lanes)
    rng = random.Random(3)
    bench, outputs, terminated_at = endpoint_bench(dut, [source_script(s, r) for s, r in enumerate(rounds)], rng,
                                                   lanes=lanes)
    run(dut, bench)
    # Split the output at its barriers: round r must hold exactly every source's round-r updates.
    delivered, current = [], []
    for barrier, sender in outputs:
        if barrier:
            delivered.append(sorted(current))
            current = []
        else:
            current.append(sender)
    assert current == []
    expected = []
    for r in range(4):
        updates = sorted(s * 16 + r * 4 + k for s in range(3) for k in range(rounds[s][r]))
        if r < 3:  # round 3 is silent everywhere: termination, no barrier
            expected.append(updates)
    assert delivered == expected
    assert terminated_at, "the endpoint never detected termination"


def test_two_lane_endpoint_hands_over_two_updates_per_cycle():
    """Four busy sources, 3 rounds of 15 updates each: two lanes nearly halve the cycles."""
    def script(source):
        items = []
        for r in range(3):
            items += [{"sender": (source * 45 + r * 15 + k) % 64, "barrier": 0, "count": 0, "sent_any": 0}
                      for k in range(15)]
            items.append({"sender": 0, "barrier": 1, "count": 15, "sent_any": 1})
        return items + [{"sender": 0, "barrier": 1, "count": 0, "sent_any": 0}]

    expected = sorted((s * 45 + r * 15 + k) % 64 for s in range(4) for r in range(3) for k in range(15))
    finished = {}
    for lanes in (1, 2):
        dut = Endpoint(layout=NET, sources=4, count_bits=4, lanes=lanes)
        bench, outputs, terminated_at = endpoint_bench(dut, [script(s) for s in range(4)], random.Random(6),
                                                       ready_probability=1.0, cycles=300, lanes=lanes,
                                                       valid_probability=1.0)
        run(dut, bench)
        assert sorted(sender for barrier, sender in outputs if not barrier) == expected
        assert [barrier for barrier, _ in outputs].count(1) == 3
        assert terminated_at
        finished[lanes] = terminated_at[0]
    # 180 updates: one lane needs at least 180 cycles; two lanes 90 plus the barrier cycles.
    assert finished[1] >= 180
    assert finished[2] <= 0.6 * finished[1], finished


def test_endpoint_round_ahead_source_waits_behind_its_barrier():
    """Source 0 races a round ahead; its round-1 updates must not overtake round 0's barrier."""
    dut = Endpoint(layout=NET, sources=2, count_bits=4)
    fast = source_script(0, [1, 3, 0])
    slow = source_script(1, [2, 0, 0])

    # Source 1 only starts offering after 40 cycles (all of source 0's script is then queued).
    async def bench(ctx):
        position, outputs = [0, 0], []
        for cycle in range(600):
            offered = []
            for s, script in enumerate((fast, slow)):
                valid = position[s] < len(script) and (s == 0 or cycle > 40)
                if valid:
                    ctx.set(dut.i[s].payload, script[position[s]])
                ctx.set(dut.i[s].valid, valid)
                offered.append(valid)
            ctx.set(dut.o.ready, 1)
            if ctx.get(dut.o.valid):
                payload = ctx.get(dut.o.payload)
                outputs.append((payload.barrier, payload.sender, cycle))
            taken = [offered[s] and ctx.get(dut.i[s].ready) for s in range(2)]
            await ctx.tick()
            for s in range(2):
                position[s] += taken[s]
        kinds = [(b, sender) for b, sender, _ in outputs]
        first_barrier = kinds.index((1, 0))
        assert sorted(kinds[:first_barrier]) == [(0, 0), (0, 16 + 0), (0, 16 + 1)]
        assert sorted(kinds[first_barrier + 1:-1]) == [(0, 4), (0, 5), (0, 6)]
        assert kinds[-1] == (1, 0)
        # Source 0's first update went through long before source 1 started.
        assert outputs[0][2] <= 40
        assert ctx.get(dut.terminated)

    run(dut, bench)


@pytest.mark.parametrize("lanes", [1, 2])
def test_endpoint_takes_every_barrier_at_once_and_sends_its_own_the_next_cycle(lanes):
    """Barriers need no grant: four sources' barriers offered together are all taken in one
    cycle, and the round's barrier leaves in the next (a cycle per source per superstep else)."""
    dut = Endpoint(layout=NET, sources=4, count_bits=4, lanes=lanes)
    barrier = {"sender": 0, "barrier": 1, "count": 0, "sent_any": 1}

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        for s in range(4):
            ctx.set(dut.i[s].payload, barrier)
            ctx.set(dut.i[s].valid, 1)
        assert [ctx.get(dut.i[s].ready) for s in range(4)] == [1, 1, 1, 1]
        assert not ctx.get(dut.o.valid)
        await ctx.tick()
        for s in range(4):
            ctx.set(dut.i[s].valid, 0)
        assert ctx.get(dut.o.valid)
        out = dut.o.payload if lanes == 1 else dut.o.payload.lanes[0]
        assert ctx.get(out.barrier)

    run(dut, bench)


def test_endpoint_waits_for_counted_updates():
    """A barrier whose count exceeds the updates seen holds the round open."""
    dut = Endpoint(layout=NET, sources=1, count_bits=4)
    script = [{"sender": 1, "barrier": 0, "count": 0, "sent_any": 0},
              {"sender": 0, "barrier": 1, "count": 2, "sent_any": 1}]

    async def bench(ctx):
        position = 0
        for _ in range(20):
            valid = position < len(script)
            if valid:
                ctx.set(dut.i[0].payload, script[position])
            ctx.set(dut.i[0].valid, valid)
            ctx.set(dut.o.ready, 1)
            if ctx.get(dut.o.valid):
                assert not ctx.get(dut.o.payload.barrier), "barrier passed with an update missing"
            taken = valid and ctx.get(dut.i[0].ready)
            await ctx.tick()
            position += taken
        assert position == 2
        assert not ctx.get(dut.terminated)

    run(dut, bench)


def test_network_remote_ports():
    """A remote link gets a copy of every local update the filter keeps (here all but sender 16's);
    a remote source reaches every local PE."""
    from gravfm.hw.network import Network
    dut = Network(layout=NET, pes=2, remotes=1, fifo_depth=2, count_bits=4)
    local = [source_script(0, [2, 0]), source_script(1, [1, 0])]
    remote = source_script(2, [1, 0])
    rng = random.Random(5)

    async def bench(ctx):
        sources = list(dut.src) + list(dut.remote_in)
        scripts = local + [remote]
        position = [0, 0, 0]
        delivered = [[], []]
        sent_out = []
        kept = [True] * len(dut.link_keep)
        for _ in range(400):
            offered = []
            for s, script in enumerate(scripts):
                valid = position[s] < len(script) and rng.random() < 0.8
                if valid:
                    ctx.set(sources[s].payload, script[position[s]])
                ctx.set(sources[s].valid, valid)
                offered.append(valid)
            for d in range(2):
                ctx.set(dut.dst[d].ready, rng.random() < 0.7)
            ctx.set(dut.remote_out[0].ready, rng.random() < 0.7)
            # The neighbor filter: a registered read, looked up as the entry register loads.
            for k, (sender, lookup, keep) in enumerate(zip(dut.link_sender, dut.link_lookup, dut.link_keep)):
                ctx.set(keep, kept[k])
                if ctx.get(lookup):
                    kept[k] = ctx.get(sender) != 16
            for d in range(2):
                if ctx.get(dut.dst[d].valid) and ctx.get(dut.dst[d].ready):
                    payload = ctx.get(dut.dst[d].payload)
                    delivered[d].append((payload.barrier, payload.sender))
            if ctx.get(dut.remote_out[0].valid) and ctx.get(dut.remote_out[0].ready):
                payload = ctx.get(dut.remote_out[0].payload)
                sent_out.append((payload.barrier, payload.sender))
            taken = [offered[s] and ctx.get(sources[s].ready) for s in range(3)]
            await ctx.tick()
            for s in range(3):
                position[s] += taken[s]
        round0 = sorted([(0, 0), (0, 1), (0, 16)] + [(0, 32)])
        for d in range(2):
            assert sorted(delivered[d][:-1]) == round0 and delivered[d][-1] == (1, 0)
        assert ctx.get(dut.terminated) == 0b11
        # The link carries local updates and barriers only (never the remote source's own).
        assert sorted(x for x in sent_out if not x[0]) == [(0, 0), (0, 1)]
        assert sum(1 for x in sent_out if x[0]) == 4  # two rounds' barriers of two local PEs

    run(dut, bench)


def test_hazard_unit_keeps_data_per_entry():
    """Data stored against an in-flight address comes back when that address is removed."""
    dut = HazardUnit(addr_bits=3, slots=2, payload=unsigned(8))

    async def bench(ctx):
        await insert_addresses(ctx, dut, (5, 2))
        ctx.set(dut.store, 1)
        ctx.set(dut.store_addr, 5)
        ctx.set(dut.store_data, 0xA5)
        await ctx.tick()
        ctx.set(dut.store_addr, 2)
        ctx.set(dut.store_data, 0x3C)
        # Same-cycle store and removal of address 2 (a kernel without latency): bypass.
        ctx.set(dut.remove, 1)
        ctx.set(dut.remove_addr, 2)
        assert ctx.get(dut.remove_data) == 0x3C
        await ctx.tick()
        ctx.set(dut.store, 0)
        ctx.set(dut.remove_addr, 5)
        assert ctx.get(dut.remove_data) == 0xA5
        await ctx.tick()
        ctx.set(dut.remove, 0)
        assert ctx.get(dut.empty)

    run(dut, bench)
