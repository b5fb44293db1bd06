"""Proof (bounded model checking, tests/formal.py) of the endpoint's merge and barrier counting.

The endpoint stores no update: each update it takes leaves in the same cycle, so the harness
matches every cycle's taken updates with the output lanes (no watched item needed). Per source
it counts the barriers taken (the source's round) and the updates taken in its current round,
and checks the floating barrier's contract:

- a round's barrier leaves only after every source's barrier of that round, each with as many
  updates taken from its source in the round as its ``count`` says, and only if one of them
  had ``sent_any`` (else the endpoint terminates instead, and says nothing more);
- nothing is taken from a source that has delivered its barrier until the round's barrier left
  (a source a round ahead waits: its updates never overtake the barrier);
- the barrier travels alone in lane 0; ``o.valid`` is held until ``o.ready``;
- it keeps going: a round complete for two cycles has sent its barrier or terminated, and an
  update offered is never left waiting two cycles with ``o.valid`` low.

The sources are free but keep the stream rules (``valid`` and the payload held until
``ready``, as the FIFOs in front of the endpoint are proved to) and send fewer updates in a
round than ``count`` can hold (the configuration sizes ``count_bits`` so).
"""

import pytest
from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Cat, Cover, Elaboratable, Signal, unsigned
from amaranth.lib import data

from gravfm.hw.network import Endpoint
from formal import harness_module, prove

COUNT_BITS = 2


class EndpointContract(Elaboratable):
    def __init__(self, *, sources, lanes):
        self.layout = data.StructLayout({"update": unsigned(2), "barrier": 1, "count": unsigned(COUNT_BITS),
                                         "sent_any": 1})
        self.dut = Endpoint(layout=self.layout, sources=sources, count_bits=COUNT_BITS, lanes=lanes)
        self.sources = sources
        self.lanes = lanes

    def elaborate(self, platform):
        dut = self.dut
        m = harness_module(dut)
        n, most = self.sources, 2 ** COUNT_BITS - 1
        rounds_out = Signal(3)                     # barriers the endpoint sent
        rounds_in = [Signal(3, name=f"rounds_in{s}") for s in range(n)]
        updates = [Signal(COUNT_BITS, name=f"updates{s}") for s in range(n)]   # in the current round
        counted = Signal(n)                        # the source's barrier count matched its updates
        anything = Signal()                        # a barrier of the round had sent_any
        m.d.comb += dut.o.ready.eq(AnySeq(1))

        taken = []                                 # (an update is taken from s, its payload)
        for s, port in enumerate(dut.i):
            m.d.comb += [port.valid.eq(AnySeq(1)), port.payload.eq(AnySeq(len(port.payload.as_value())))]
            moves = port.valid & port.ready
            held, held_payload = Signal(name=f"held{s}"), Signal(self.layout, name=f"held_payload{s}")
            m.d.sync += [held.eq(port.valid & ~port.ready), held_payload.eq(port.payload)]
            with m.If(held):
                m.d.comb += Assume(port.valid & (port.payload.as_value() == held_payload.as_value()))
            is_barrier = port.payload.barrier
            with m.If(moves & ~is_barrier):
                m.d.comb += Assume(updates[s] != most)
                m.d.sync += updates[s].eq(updates[s] + 1)
            with m.If(moves & is_barrier):
                m.d.sync += [rounds_in[s].eq(rounds_in[s] + 1), updates[s].eq(0),
                             counted[s].eq(updates[s] == port.payload.count)]
                with m.If(port.payload.sent_any):
                    m.d.sync += anything.eq(1)
            ahead = Signal(3, name=f"ahead{s}")     # rounds, modulo 8
            m.d.comb += [ahead.eq(rounds_in[s] - rounds_out),
                         Assert(ahead <= 1, "a source ran two rounds ahead"),
                         Assert(~(moves & (ahead != 0)), "taken from a source behind its barrier")]
            taken.append((moves & ~is_barrier, port.payload.as_value()))

        complete = Signal()
        m.d.comb += complete.eq(counted.all() & Cat(r != rounds_out for r in rounds_in).all())
        lanes = self._lanes(m)
        barrier_out = lanes[0][0] & dut.o.ready & lanes[0][1].barrier
        through = Signal(4)                        # updates delivered (for the cover)
        m.d.sync += through.eq(through + self._updates_pass(m, taken, lanes))
        with m.If(barrier_out):
            m.d.comb += [Assert(complete & anything, "a barrier left before its round was complete"),
                         Cover((rounds_out == 1) & (through >= 2 * n))]
            m.d.sync += [rounds_out.eq(rounds_out + 1), anything.eq(0)]

        # Termination: only after a complete round that nobody sent anything in; then silence.
        silent_round = Signal()
        with m.If(complete & ~anything):
            m.d.sync += silent_round.eq(1)
        m.d.comb += [Assert(~dut.terminated | silent_round, "terminated before a silent round"),
                     Assert(~(dut.terminated & dut.o.valid), "output after termination"),
                     Cover(dut.terminated & (rounds_out == 2))]

        # Progress: a complete round's barrier is offered at once (or the endpoint terminates
        # the next cycle); an update is never offered two cycles with ``o.valid`` low.
        silent_before, offered_before, stalled = Signal(), Signal(), Signal()
        offered = Signal()
        m.d.comb += offered.eq(~dut.o.valid & ~dut.terminated & sum(
            port.valid & ~port.payload.barrier & (r == rounds_out) for port, r in zip(dut.i, rounds_in)).bool())
        m.d.sync += [silent_before.eq(complete & ~anything), offered_before.eq(offered),
                     stalled.eq(dut.o.valid & ~dut.o.ready)]
        m.d.comb += [Assert(~(complete & anything) | (lanes[0][0] & lanes[0][1].barrier),
                            "a complete round's barrier not offered"),
                     Assert(~silent_before | dut.terminated, "a silent round did not terminate"),
                     Assert(~(offered_before & offered), "an offered update waited with o.valid low"),
                     Assert(~stalled | dut.o.valid, "o.valid dropped before o.ready")]
        return m

    def _lanes(self, m):
        """The output lanes as (valid, payload), lane 0 first; a barrier only alone in lane 0."""
        o = self.dut.o
        if self.lanes == 1:
            return [(o.valid, o.payload)]
        lanes = [(o.valid & o.payload.valid[j], o.payload.lanes[j]) for j in range(2)]
        m.d.comb += [Assert(o.valid == o.payload.valid.any(), "o.valid without a valid lane"),
                     Assert(~(lanes[1][0] & lanes[1][1].barrier), "a barrier in lane 1"),
                     Assert(~(lanes[0][0] & lanes[0][1].barrier & lanes[1][0]), "a barrier beside an update")]
        return lanes

    def _updates_pass(self, m, taken, lanes):
        """The updates taken this cycle are the update lanes moving out, one lane per source.
        Returns how many."""
        moving = [valid & self.dut.o.ready & ~payload.barrier for valid, payload in lanes]
        m.d.comb += Assert(sum(t for t, _ in taken) == sum(moving), "updates taken != updates out")
        for lane, (valid, payload) in zip(moving, lanes):
            m.d.comb += Assert(~lane | sum(t & (p == payload.as_value()) for t, p in taken).bool(),
                               "an update left that no source gave")
        if self.lanes == 2:
            both = sum(ta & tb & (pa == lanes[0][1].as_value()) & (pb == lanes[1][1].as_value())
                       for a, (ta, pa) in enumerate(taken) for b, (tb, pb) in enumerate(taken) if a != b)
            m.d.comb += [Assert(~(moving[0] & moving[1]) | both.bool(), "two lanes not from two sources"),
                         Cover(moving[0] & moving[1])]
        return sum(moving)


@pytest.mark.parametrize("sources, lanes", [
    (2, 1), (2, 2),
    # Three sources: a source between the grant and the second lane's (45 s of solver each).
    pytest.param(3, 1, marks=pytest.mark.slow), pytest.param(3, 2, marks=pytest.mark.slow),
])
def test_endpoint_counts_barriers_and_passes_every_update(tmp_path, sources, lanes):
    # Two rounds of updates from every source, their barriers and the endpoint's, then a silent
    # round that terminates.
    prove(EndpointContract(sources=sources, lanes=lanes), depth=4 * sources + 6, workdir=tmp_path)
