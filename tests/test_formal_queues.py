"""Proofs (bounded model checking, tests/formal.py) of the skid buffer's and the lane queue's
contracts: in order, nothing lost or duplicated, ``o.valid`` and ``o.payload`` held until
``o.ready``; the skid buffer's and the ready slice's ``i.ready`` a flip-flop, the lane queue's taking several items a
cycle (lanes whose valid bit is clear dropped) and ``i.ready`` while ``lanes`` entries are free."""

import pytest
from amaranth.hdl import Assert, unsigned

from gravfm.hw.lane_queue import LaneQueue
from gravfm.hw.skid_buffer import ReadySlice, SkidBuffer
from formal import StreamContract, lane_items, prove


def test_skid_buffer_keeps_its_contract(tmp_path):
    dut = SkidBuffer(shape=unsigned(2))

    def ready_while_the_skid_entry_is_free(dut, inside):
        # Two entries: the output register and the skid entry, which alone lowers ``i.ready``.
        return [Assert(dut.i.ready == ((inside == 0) | ((inside == 1) & dut.o.valid)))]

    harness = StreamContract(dut, capacity=2, latency=1, bound=8, extra=ready_while_the_skid_entry_is_free)
    prove(harness, depth=harness.bound, workdir=tmp_path)


def test_ready_slice_keeps_its_contract(tmp_path):
    dut = ReadySlice(shape=unsigned(2))

    def ready_unless_an_item_waits(dut, inside):
        # One entry; an item passes in the cycle it arrives unless the consumer refuses it.
        return [Assert(dut.i.ready == (inside == 0))]

    harness = StreamContract(dut, capacity=1, latency=1, bound=8, extra=ready_unless_an_item_waits, same_cycle=True)
    prove(harness, depth=harness.bound, workdir=tmp_path)


@pytest.mark.parametrize("lanes, depth", [
    (2, 4), (3, 6),
    pytest.param(2, 8, marks=pytest.mark.slow),    # the scatter unit's (LIST_QUEUE_DEPTH): minutes
])
def test_lane_queue_keeps_its_contract(tmp_path, lanes, depth):
    dut = LaneQueue(shape=unsigned(2), lanes=lanes, depth=depth)

    def ready_while_lanes_entries_are_free(dut, inside):
        return [Assert(dut.i.ready == (inside <= depth - lanes))]

    # Filled (up to ``lanes`` items a cycle), then every entry replaced (one out a cycle).
    harness = StreamContract(dut, capacity=depth, latency=1, bound=-(-depth // lanes) + depth + 2,
                             inputs=lane_items, extra=ready_while_lanes_entries_are_free)
    prove(harness, depth=harness.bound, workdir=tmp_path)
