"""Signatures of memory ports passed between units (the memories themselves live in the PE)."""

from amaranth.hdl import unsigned
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["NO_READ_DURING_WRITE", "no_read_during_write", "read_port_signature", "write_port_signature"]

#: Attributes of a memory whose read port never reads the entry written in the same cycle
#: (memories the host fills before ``start``; round logs, which it reads only after termination;
#: FIFO storage, which reads only stored entries and writes only free ones). Without them Yosys
#: keeps the read-during-write result of the two block-RAM ports exact with an address compare
#: and a multiplexer behind the RAM's output, which on ECP5 made the RAM's already late output
#: the longest path of a PE.
NO_READ_DURING_WRITE = {"no_rw_check": 1}


def no_read_during_write(ram_style=None):
    """:data:`NO_READ_DURING_WRITE`, plus Yosys's ``ram_style`` (e.g. ``"distributed"``) if given."""
    return {**NO_READ_DURING_WRITE, **({"ram_style": ram_style} if ram_style else {})}


def read_port_signature(addr_bits, shape):
    """Synchronous read port seen from its user: ``addr``, ``en`` out; ``data`` in, one cycle later."""
    return wiring.Signature({"addr": Out(unsigned(addr_bits)), "en": Out(1), "data": In(shape)})


def write_port_signature(addr_bits, shape):
    """Write port seen from its user: ``addr``, ``en``, ``data`` out."""
    return wiring.Signature({"addr": Out(unsigned(addr_bits)), "en": Out(1), "data": Out(shape)})
