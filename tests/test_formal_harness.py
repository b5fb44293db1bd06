"""The proof harness can fail: a block that loses an item, and a cover out of reach."""

import pytest
from amaranth.hdl import Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from gravfm.hw.skid_buffer import SkidBuffer
from formal import ProofFailed, StreamContract, prove


class LossyStage(wiring.Component):
    """A register stage that takes a new item even while its output is refused (losing it)."""

    i: In(stream.Signature(unsigned(2)))
    o: Out(stream.Signature(unsigned(2)))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.i.ready.eq(1)
        with m.If(self.i.valid | self.o.ready):
            m.d.sync += [self.o.valid.eq(self.i.valid), self.o.payload.eq(self.i.payload)]
        return m


def test_a_lost_item_fails_the_proof(tmp_path):
    harness = StreamContract(LossyStage(), capacity=1, latency=1, bound=6)
    with pytest.raises(ProofFailed, match="assertions failed at"):
        prove(harness, depth=harness.bound, workdir=tmp_path)


def test_a_cover_out_of_reach_fails_the_proof(tmp_path):
    # Three items never fit in the skid buffer: "filled twice" cannot be reached.
    harness = StreamContract(SkidBuffer(shape=unsigned(1)), capacity=3, latency=1, bound=8)
    with pytest.raises(ProofFailed, match="covers not reached"):
        prove(harness, depth=harness.bound, workdir=tmp_path)
