"""The AXI4 read channels with which a PE reads its off-chip edge memory.

Only the read address (AR) and read data (R) channels exist: the edge memory is filled by the
host before ``start`` and never written by the design. Member names are AXI4's, lower case and
without the channel prefix's capital letters (``ARADDR`` is ``araddr``), so that an exported
port reads as the AXI name it carries:

=========== ===== ================================================================
member      dir   meaning
=========== ===== ================================================================
``araddr``  Out   byte address of the burst's first beat (word-aligned)
``arid``    Out   transaction ID; beats of one ID come back in request order
``arlen``   Out   beats in the burst minus one (AXI4: up to 256 beats)
``arsize``  Out   log2 of the bytes per beat; always log2 of the word's bytes
``arburst`` Out   burst type; 1 = INCR (the only one the simulated memory serves)
``arvalid`` Out   the request is valid
``arready`` In    the memory takes the request
``rdata``   In    one word, little-endian (byte 0 of the word is bits 7:0)
``rid``     In    the ID of the request the beat answers
``rresp``   In    0 OKAY, 2 SLVERR (bad request), 3 DECERR (address beyond the memory)
``rlast``   In    the last beat of its burst
``rvalid``  In    the beat is valid
``rready``  Out   the PE takes the beat
=========== ===== ================================================================

Directions are the reader's (the PE's): "Out" is driven by the PE. A top with memory ports has a
member ``mem = Out(axi_read_signature(...)).array(ports)``; its Verilog ports are then
``mem__K__araddr`` and so on (Verilator's C++ spells ``__`` as ``___05F``).
"""

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["AXI_BURST_INCR", "AXI_RESP_OKAY", "AXI_RESP_SLVERR", "AXI_RESP_DECERR", "axi_read_signature"]

#: ``arburst`` of an incrementing burst.
AXI_BURST_INCR = 1
#: ``rresp`` codes.
AXI_RESP_OKAY, AXI_RESP_SLVERR, AXI_RESP_DECERR = 0, 2, 3


def axi_read_signature(*, addr_bits, word_bits, id_bits):
    """The AXI4 read channels seen from the reader (module docstring).

    Parameters
    ----------
    addr_bits : int
        Width of ``araddr`` (byte addresses).
    word_bits : int
        Width of ``rdata``: the bytes of a beat times 8.
    id_bits : int
        Width of ``arid`` and ``rid`` (at least 1).

    Returns
    -------
    amaranth.lib.wiring.Signature
    """
    for name, value in (("addr_bits", addr_bits), ("word_bits", word_bits), ("id_bits", id_bits)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TypeError(f"{name} must be a positive integer, not {value!r}")
    return wiring.Signature({
        "araddr": Out(addr_bits), "arid": Out(id_bits), "arlen": Out(8), "arsize": Out(3),
        "arburst": Out(2), "arvalid": Out(1), "arready": In(1),
        "rdata": In(word_bits), "rid": In(id_bits), "rresp": In(2), "rlast": In(1), "rvalid": In(1),
        "rready": Out(1),
    })
