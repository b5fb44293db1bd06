"""Proofs (bounded model checking, tests/formal.py) of the stream FIFO's contract in every mode
it offers: in order, nothing lost or duplicated, ``o.valid`` and ``o.payload`` held until
``o.ready``, its latency, and ``level`` counting the items in the buffer."""

import pytest
from amaranth.hdl import Assert, unsigned

from gravfm.hw.prefetch_fifo import PrefetchFIFO
from gravfm.hw.stream_fifo import StreamFIFO
from formal import StreamContract, prove

MODES = [
    # depth, bypass, head_register, output_register
    (4, False, False, False),
    (4, True, False, False),
    (4, False, True, False),
    (4, True, True, False),
    (3, True, True, False),      # a depth whose pointers wrap short of a power of two
    (4, False, False, True),
    (4, True, True, True),
    (1, False, False, False),    # one item: the library's single register
]


@pytest.mark.parametrize("depth, bypass, head_register, output_register", MODES)
def test_stream_fifo_keeps_its_contract(tmp_path, depth, bypass, head_register, output_register):
    dut = StreamFIFO(shape=unsigned(2), depth=depth, bypass=bypass, head_register=head_register,
                     output_register=output_register)
    capacity = depth + output_register
    # An item into an empty FIFO: readable after 2 cycles (1 with bypass or a single register),
    # one more through the output register.
    latency = (1 if bypass or depth == 1 else 2) + output_register

    def level_counts_the_buffer(dut, inside):
        return [Assert(dut.level == inside - (dut.o.valid if output_register else 0))]

    harness = StreamContract(dut, capacity=capacity, latency=latency, bound=2 * capacity + latency + 2,
                             extra=level_counts_the_buffer)
    prove(harness, depth=harness.bound, workdir=tmp_path)


def test_prefetch_fifo_keeps_the_bypass_contract(tmp_path):
    """The block-RAM FIFO read from registers alone: a bypass FIFO's latency at its whole depth
    (one item more than its fabric queue: items go through the memory and skip it)."""
    depth = PrefetchFIFO.QUEUE + 1
    dut = StreamFIFO(shape=unsigned(2), depth=depth, prefetch=True, bypass=True)

    def level_counts_every_item(dut, inside):
        return [Assert(dut.level == inside)]

    harness = StreamContract(dut, capacity=depth, latency=1, bound=2 * depth + 3, extra=level_counts_every_item)
    prove(harness, depth=harness.bound, workdir=tmp_path)
