"""Proof (bounded model checking, tests/formal.py) of one switch of the multistage message network.

A 2 x 2 :class:`~gravfm.hw.network.switch.RoundSwitch` with crosspoint FIFOs of depth 2 (the
smallest the network allows), its inputs free but keeping the stream rules (``valid`` and the
payload held until ``ready``; each carries its input's index in ``origin``). The harness counts
each input's barriers (its round) and each output's, and checks:

- **one watched message**: a free input, a free output and a free index pick one message of
  those the input routes to that output (by its ``neighbor`` digit), carrying a free value; the
  message with that index among the output's messages from that input carries exactly that
  value, leaves after it entered, and leaves in its own round (after the output's barriers of
  the rounds before, before the barrier of its round). As the choices are free this holds of
  every message: per (input, output) in order, nothing duplicated or made up, nothing dropped
  (a message dropped shifts the ones behind it), no round overtaken;
- **routing**: a message leaves only at the output its digit names;
- **barriers**: an output sends its round-``r`` barrier only once every input's round-``r``
  barrier has been taken or waits at its head, and its ``sent_any`` is the OR of theirs;
- **handshake**: ``o.valid`` and ``o.payload`` held until ``o.ready``.

Progress (every message delivered, every round ended) is the simulations' part
(tests/test_hw_multistage.py): a bounded proof of it would need fair inputs.
"""

from amaranth.asserts import AnyConst, AnySeq
import pytest
from amaranth.hdl import Assert, Assume, Const, Cover, Elaboratable, Mux, Signal, unsigned
from amaranth.lib import data

from gravfm.hw.network.combiner import RoundCombiner
from gravfm.hw.network.switch import RoundSwitch
from formal import harness_module, prove

LAYOUT = data.StructLayout({"value": unsigned(1), "origin": unsigned(1), "neighbor": unsigned(1), "barrier": 1,
                            "sent_any": 1})
BOUND = 10
SWITCH_BOUND = 8
ROUNDS = 3                                        # rounds counted (the inputs send at most 2 barriers)


class RoundContract(Elaboratable):
    """The harness of a 2 x 2 switch (routing by ``neighbor``) or of one 2-input combiner
    (every message to its one output; ``final``: its termination and barrier word too)."""

    def __init__(self, dut, *, final=False):
        self.dut, self.final = dut, final
        self.routing = isinstance(dut, RoundSwitch)
        self.outputs = list(dut.o) if self.routing else [dut.o]

    def elaborate(self, platform):
        dut = self.dut
        m = harness_module(dut)
        watched_input, watched_index, watched_value = AnyConst(1), AnyConst(range(BOUND)), AnyConst(1)
        watched_output = AnyConst(1) if self.routing else Const(0, 1)
        rounds_in = [Signal(range(ROUNDS), name=f"rounds_in{t}") for t in range(2)]
        sent = [[Signal(name=f"sent{t}_{r}") for r in range(ROUNDS)] for t in range(2)]
        count_in, watched_round, watched_in = Signal(range(BOUND + 1)), Signal(range(ROUNDS)), Signal()
        for t, port in enumerate(dut.i):
            payload = port.payload
            m.d.comb += [port.valid.eq(AnySeq(1)), payload.eq(AnySeq(len(payload.as_value()))),
                         Assume(payload.origin == t)]
            held, held_payload = Signal(name=f"held{t}"), Signal(LAYOUT, name=f"held_payload{t}")
            m.d.sync += [held.eq(port.valid & ~port.ready), held_payload.eq(payload)]
            with m.If(held):
                m.d.comb += Assume(port.valid & (payload.as_value() == held_payload.as_value()))
            moves = port.valid & port.ready
            with m.If(moves & payload.barrier):
                m.d.comb += Assume(rounds_in[t] != ROUNDS - 1)
                m.d.sync += rounds_in[t].eq(rounds_in[t] + 1)
                for r in range(ROUNDS):
                    with m.If(rounds_in[t] == r):
                        m.d.sync += sent[t][r].eq(payload.sent_any)
            routed = payload.neighbor == watched_output if self.routing else Const(1)
            with m.If((watched_input == t) & moves & ~payload.barrier & routed):
                m.d.sync += count_in.eq(count_in + 1)
                with m.If(count_in == watched_index):
                    m.d.comb += Assume(payload.value == watched_value)
                    m.d.sync += [watched_round.eq(rounds_in[t]), watched_in.eq(1)]

        for u, port in enumerate(self.outputs):
            m.d.comb += port.ready.eq(AnySeq(1))
            rounds_out = Signal(range(ROUNDS), name=f"rounds_out{u}")
            self._barriers(m, u, port, rounds_out, rounds_in, sent)
            count_out = Signal(range(BOUND + 1), name=f"count_out{u}")
            payload = port.payload
            mine = (watched_output == u) & ~payload.barrier & (payload.origin == watched_input)
            with m.If(port.valid & port.ready & mine):
                m.d.sync += count_out.eq(count_out + 1)
                m.d.comb += Assert(count_out < count_in, "a message left that never entered")
                with m.If(count_out == watched_index):
                    m.d.comb += [Assert(watched_in, "the watched message left before it entered"),
                                 Assert(payload.value == watched_value, "a message changed or out of order"),
                                 Assert(watched_round == rounds_out, "a message left outside its round"),
                                 Cover(watched_round == 1)]
        return m

    def _barriers(self, m, u, port, rounds_out, rounds_in, sent):
        """Routing, barriers, termination and handshake of output ``u``."""
        payload = port.payload
        if self.routing:
            m.d.comb += Assert(~port.valid | payload.barrier | (payload.neighbor == u), "a message at the wrong output")
        # The round of output ``u`` is complete: every input's barrier taken; heard: its sent_any.
        heard = []
        complete = Signal(name=f"complete{u}")
        for t, source in enumerate(self.dut.i):
            recorded = Signal(name=f"recorded{u}_{t}")
            for r in range(ROUNDS):
                with m.If(rounds_out == r):
                    m.d.comb += recorded.eq(sent[t][r])
            waiting = (rounds_in[t] == rounds_out) & source.valid & source.payload.barrier
            heard.append((rounds_in[t] > rounds_out, Mux(rounds_in[t] > rounds_out, recorded, source.payload.sent_any),
                          waiting))
        m.d.comb += complete.eq(heard[0][0] & heard[1][0])
        with m.If(port.valid & port.ready & payload.barrier):
            m.d.sync += rounds_out.eq(rounds_out + 1)
            round_sent = heard[0][1] | heard[1][1]
            for t, (taken, _, waiting) in enumerate(heard):
                m.d.comb += Assert(taken | waiting, "a barrier before an input's barrier")
            if self.final:
                m.d.comb += [Assert(round_sent, "a barrier for a silent round"),
                             Assert(payload.as_value() == LAYOUT.const({"barrier": 1}).as_value(),
                                    "the destination's barrier is not the bare barrier word")]
            else:
                m.d.comb += Assert(payload.sent_any == round_sent, "a barrier's sent_any is not the OR")
            m.d.comb += Cover(rounds_out == 1)
        if self.final:
            silent, silent_before = Signal(), Signal()      # a complete round with no sent_any
            m.d.comb += silent.eq(complete & ~heard[0][1] & ~heard[1][1])
            with m.If(silent):
                m.d.sync += silent_before.eq(1)
            m.d.comb += [Assert(~self.dut.terminated | silent | silent_before, "terminated before a silent round"),
                         Assert(~(self.dut.terminated & port.valid & payload.barrier), "a barrier after termination"),
                         Cover(self.dut.terminated & (rounds_out == 1))]
        held, held_payload = Signal(name=f"out_held{u}"), Signal(LAYOUT, name=f"out_held_payload{u}")
        m.d.sync += [held.eq(port.valid & ~port.ready), held_payload.eq(payload)]
        with m.If(held):
            m.d.comb += [Assert(port.valid, "o.valid dropped before o.ready"),
                         Assert(payload.as_value() == held_payload.as_value(), "o.payload changed before o.ready")]


@pytest.mark.parametrize("final", [False, True])
def test_combiner_merges_in_order_and_combines_barriers(tmp_path, final):
    dut = RoundCombiner(layout=LAYOUT, sources=2, final=final)
    prove(RoundContract(dut, final=final), depth=BOUND, workdir=tmp_path)


def test_switch_routes_keeps_order_and_combines_barriers(tmp_path):
    prove(RoundContract(RoundSwitch(layout=LAYOUT, radix=2, depth=2, low_bit=0)), depth=SWITCH_BOUND,
          workdir=tmp_path)
