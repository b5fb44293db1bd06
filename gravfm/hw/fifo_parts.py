"""What the block-RAM FIFOs share: their ports, and counters and ring pointers stepped by
strobes that only choose between values computed from registers."""

from amaranth.hdl import Mux
from amaranth.lib.wiring import In, Out

__all__ = ["buffer_ports", "count_becomes", "count_stepped", "successor"]


def buffer_ports(width, depth):
    """The members of a FIFO with Amaranth's ``SyncFIFOBuffered`` ports (``level`` up to ``depth``)."""
    return {
        "w_data": In(width), "w_en": In(1), "w_rdy": Out(1),
        "r_data": Out(width), "r_en": In(1), "r_rdy": Out(1),
        "level": Out(range(depth + 1)),
    }


def count_stepped(count, up, down):
    """``count + up - down``, both sums from ``count`` alone and the strobes only choosing: an
    adder fed by the strobes ran the crossbar FIFO's late ``store`` (the update queue's valid,
    across the chip) through its carry chain (FPGA 0 of 2 x 4 PEs, 8e9b7a7, router1 seed 2:
    138.5 MHz)."""
    return Mux(up & ~down, count + 1, Mux(down & ~up, count - 1, count))


def count_becomes(count, value, up, down):
    """``count + up - down == value``, from compares of ``count`` alone (the strobes only choose)."""
    return Mux(up & ~down, count == value - 1, Mux(down & ~up, count == value + 1, count == value))


def successor(pointer, size):
    """The pointer after ``pointer`` in a ring of ``size`` slots (a power of two wraps by itself)."""
    if size & (size - 1) == 0:
        return (pointer + 1)[:len(pointer)]
    return Mux(pointer == size - 1, 0, pointer + 1)
