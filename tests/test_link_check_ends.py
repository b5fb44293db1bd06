"""The link check's ends (CheckedSender, CheckedReceiver) over faulty link models, under Amaranth's
simulator: detect names the first fault; go-back-N delivers every word once, in order."""

import random

import pytest
from amaranth.hdl import Module, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from gravfm.hw.link import CheckedReceiver, CheckedSender, LinkConfig, LinkModel, LinkReceiver
from gravfm.hw.link.frame import frame_crc, frame_layout
from gravfm.hw.link_check import CRC_BITS, LinkCheck, crc, crc_masks, decode_error, error_word

from conftest import run_dut, stream_source

WORD = data.StructLayout({"item": 20, "parity": 1})


def plan(mode, **options):
    return LinkCheck.plan(mode, latency_cycles=2, bits_per_cycle=None, fifo_depth=16, stall_probability=0.0,
                          item_bits=21, **options)


class LinkPair(wiring.Component):
    """Side A's words go to side B over ``forward``; B's control frames come back over ``backward``."""

    def __init__(self, check, forward, backward, *, dead_after=None):
        self._check, self._forward, self._backward = check, forward, backward
        self._dead_after = dead_after
        super().__init__({"i": In(stream.Signature(WORD)), "o": Out(stream.Signature(WORD)), "start": In(1),
                          "error": Out(64), "retransmissions": Out(64), "discarded": Out(64),
                          "dropped": Out(64)})

    def elaborate(self, platform):
        m = Module()
        check, frame = self._check, frame_layout(WORD, self._check)
        ends = {side: (CheckedSender(word_layout=WORD, check=check), CheckedReceiver(word_layout=WORD, check=check))
                for side in "ab"}
        for side, (tx, rx) in ends.items():
            m.submodules[f"tx_{side}"], m.submodules[f"rx_{side}"] = tx, rx
            m.d.comb += [tx.start.eq(self.start), rx.start.eq(self.start)]
            if check.retransmit:
                m.d.comb += [tx.ack_out.eq(rx.ack_out), tx.nak_out.eq(rx.nak_out), rx.nak_sent.eq(tx.nak_sent),
                             tx.peer_ack.eq(rx.peer_ack), tx.peer_ack_valid.eq(rx.peer_ack_valid),
                             tx.peer_nak.eq(rx.peer_nak)]
        (tx_a, rx_a), (tx_b, rx_b) = ends["a"], ends["b"]
        bits = len(Value.cast(tx_a.o.payload))
        m.submodules.forward = forward = LinkModel(shape=frame, config=self._forward, item_bits=bits, seed=3,
                                                   dead_after=self._dead_after)
        m.submodules.backward = backward = LinkModel(shape=frame, config=self._backward, item_bits=bits, seed=4)
        wiring.connect(m, wiring.flipped(self.i), tx_a.i)
        wiring.connect(m, tx_a.o, forward.i)
        wiring.connect(m, forward.o, rx_b.i)
        wiring.connect(m, rx_b.o, wiring.flipped(self.o))
        wiring.connect(m, tx_b.o, backward.i)
        wiring.connect(m, backward.o, rx_a.i)
        m.d.comb += [rx_a.o.ready.eq(1), self.error.eq(rx_b.error), self.retransmissions.eq(tx_a.retransmissions),
                     self.discarded.eq(rx_b.discarded), self.dropped.eq(forward.dropped)]
        return m


def exchange(check, forward, backward=None, *, words=150, cycles=3000, ready_percent=100, dead_after=None):
    """Offer ``words`` words at A for ``cycles`` cycles; return (words sent, words out of B, final
    figures). ``dead_after``: the forward link dies that long after its first frame."""
    pair = LinkPair(check, forward, backward or LinkConfig(), dead_after=dead_after)
    sent = [{"item": k * 4099 % (1 << 20), "parity": k % 2} for k in range(words)]
    received, figures = [], {}

    async def source(ctx):
        ctx.set(pair.start, 1)
        await ctx.tick()
        ctx.set(pair.start, 0)
        for word in sent:
            ctx.set(pair.i.valid, 1)
            ctx.set(pair.i.payload, word)
            await ctx.tick().until(pair.i.ready)
        ctx.set(pair.i.valid, 0)

    async def sink(ctx):
        chance = random.Random(7)
        for _ in range(cycles):
            ready = chance.randrange(100) < ready_percent
            ctx.set(pair.o.ready, ready)
            if ready and ctx.get(pair.o.valid):
                payload = ctx.get(pair.o.payload)
                received.append({"item": payload.item, "parity": payload.parity})
            await ctx.tick()
        figures.update({name: ctx.get(getattr(pair, name)) for name in
                        ("error", "retransmissions", "discarded", "dropped")})

    run_dut(pair, source, sink)
    return sent, received, figures


def test_crc_gateware_is_the_reference():
    layout = frame_layout(WORD, plan("retransmit"))
    covered = layout.size - CRC_BITS
    values = [random.Random(seed).getrandbits(covered) for seed in range(20)] + [0, (1 << covered) - 1]
    bits, parity = Signal(layout.size), Signal(CRC_BITS)
    module = Module()
    module.d.comb += parity.eq(frame_crc(layout(bits)))
    results = []

    async def bench(ctx):
        for value in values:
            ctx.set(bits, value)
            results.append(ctx.get(parity))

    sim = Simulator(module)
    sim.add_testbench(bench)
    sim.run()
    assert results == [crc(value, covered) for value in values]


@pytest.mark.parametrize("bits", [40, 89, 119, 150, 247])
def test_crc_catches_every_one_and_two_bit_error(bits):
    """Each covered bit changes the CRC, and no two bits change it alike (Hamming distance >= 3)."""
    masks = crc_masks(bits)
    syndromes = [sum(1 << j for j, mask in enumerate(masks) if mask >> bit & 1) for bit in range(bits)]
    assert 0 not in syndromes and len(set(syndromes)) == bits


def test_frame_costs():
    detect, retransmit = plan("detect"), plan("retransmit")
    assert (detect.seq_bits, detect.overhead_bits) == (8, 17)
    assert retransmit.replay_depth == 128 and retransmit.seq_bits == 8 and retransmit.overhead_bits == 26
    assert plan("retransmit", replay_depth=16).seq_bits == 5
    assert frame_layout(WORD, retransmit).size == WORD.size + retransmit.overhead_bits
    platform = LinkCheck.plan("retransmit", latency_cycles=300, bits_per_cycle=89.3, fifo_depth=316,
                              stall_probability=0.0, item_bits=65)
    # A round trip of 300-cycle links at 0.92 frames per cycle: 1024 frames, 11 sequence bits.
    assert (platform.replay_depth, platform.seq_bits) == (1024, 11) and platform.silence_cycles < 1000


def test_error_word_round_trip():
    word = error_word(2, expected=57, received=59, ordinal=1337)
    assert decode_error(word) == {"kind": "lost", "expected": 57, "received": 59, "ordinal": 1337}
    assert decode_error(0)["kind"] is None


def test_detect_without_faults_passes_everything_and_beats():
    sent, received, figures = exchange(plan("detect"), LinkConfig(), ready_percent=60)
    assert received == sent
    assert figures["error"] == 0 and figures["discarded"] == 0


@pytest.mark.parametrize("fault, kind", [("drop_rate", "lost"), ("duplicate_rate", "duplicate"),
                                          ("flip_rate", "corrupt")])
def test_detect_names_the_first_fault(fault, kind):
    sent, received, figures = exchange(plan("detect"), LinkConfig(**{fault: 0.03}))
    error = decode_error(figures["error"])
    assert error["kind"] == kind
    # Everything before the fault arrived, in order, and nothing after it.
    assert received == sent[:error["ordinal"]] and error["expected"] == error["ordinal"] % 256
    if kind == "lost":   # a later frame arrived in its place
        assert 0 < (error["received"] - error["expected"]) % 256 < 128 and figures["dropped"] > 0


@pytest.mark.parametrize("mode", ["detect", "retransmit"])
def test_a_dead_link_is_named_and_an_idle_one_is_not(mode):
    check = plan(mode)
    cycles = 2 * check.silence_cycles + 200
    sent, received, figures = exchange(check, LinkConfig(), words=40, cycles=cycles)
    assert received == sent and figures["error"] == 0   # idle for long, but the heartbeats keep it alive
    sent, received, figures = exchange(check, LinkConfig(), words=40, cycles=cycles, dead_after=20)
    error = decode_error(figures["error"])
    assert error["kind"] == "dead" and 10 < len(received) < 25 and received == sent[:len(received)]
    assert error["ordinal"] == len(received)


@pytest.mark.parametrize("faults", [{"drop_rate": 0.05}, {"duplicate_rate": 0.05}, {"flip_rate": 0.05},
                                    {"drop_rate": 0.02, "duplicate_rate": 0.02, "flip_rate": 0.02}])
def test_go_back_n_delivers_every_word_once_in_order(faults):
    check = plan("retransmit", replay_depth=16)
    sent, received, figures = exchange(check, LinkConfig(**faults), LinkConfig(**faults, seed=9), ready_percent=70)
    assert received == sent
    assert figures["error"] == 0 and figures["discarded"] > 0
    if "duplicate_rate" not in faults or len(faults) > 1:
        assert figures["retransmissions"] > 0


@pytest.mark.parametrize("updates, flagged", [(2, False), (3, True)])
def test_a_barrier_that_counts_fewer_updates_than_arrived_is_an_error(updates, flagged):
    """The link receiver's count check (kind ``count``): more delivered than the barrier says
    were sent can never complete the round, and is reported instead of waiting."""
    layout = data.StructLayout({"sender": 8, "update": 4, "barrier": 1, "count": 6, "sent_any": 1})
    receiver = LinkReceiver(layout=layout, depth=4, check_counts=True)
    arrivals = [{"item": {"sender": k}, "parity": 0} for k in range(updates)]
    arrivals.append({"item": {"barrier": 1, "count": 2, "sent_any": 1}, "parity": 0})
    seen = []

    async def sink(ctx):
        ctx.set(receiver.o.ready, 1)
        for _ in range(30):
            seen.append(ctx.get(receiver.count_error))
            await ctx.tick()

    run_dut(receiver, stream_source(receiver.i, arrivals), sink)
    assert any(seen) == flagged
