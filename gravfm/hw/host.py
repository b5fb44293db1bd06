"""The host interface of a top (docs/host-interface.md): its widths and its ports.

Every top (one FPGA, or several FPGAs with their links) has these ports, so the back-ends drive
any of them the same way; the codes and the read latency are :mod:`gravfm.hw.protocol`'s.
"""

from dataclasses import dataclass

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .protocol import COUNTER_BITS, COUNTER_NAMES, HOST_MEM_BITS, LINK_COUNTER_NAMES, LOG_BITS, PRESENT_WORD_BITS

__all__ = ["HostGeometry", "host_ports", "load_port_signature"]


@dataclass(frozen=True)
class HostGeometry:
    """Widths of the host interface of a configuration (shared with the loader and back-ends).

    Attributes
    ----------
    pe_bits, addr_bits, wr_data_bits, rd_data_bits : int
    """

    pe_bits: int
    addr_bits: int
    wr_data_bits: int
    rd_data_bits: int

    @classmethod
    def of(cls, config, layouts, *, pes=None):
        """The widths for ``config``: every memory, counter and log addressable, every word carried
        (with several FPGAs also the link counters); ``pes`` PEs addressed (default: all of the
        system's; an FPGA top addresses its own, by local index)."""
        link_counters = len(LINK_COUNTER_NAMES) * (config.fpgas - 1)
        pes = config.total_pes if pes is None else pes
        return cls(
            pe_bits=max(1, (pes - 1).bit_length()),
            addr_bits=max(config.vertexid_bits, config.pe.edge_addr_bits, config.pe.local_bits,
                          (config.pe.max_rounds - 1).bit_length(), (len(COUNTER_NAMES) - 1).bit_length(),
                          (link_counters - 1).bit_length(), 1),
            wr_data_bits=max(layouts.vertex.size, layouts.edge_index.size, layouts.edge_word.size,
                             config.pe.local_bits + 1, 1,
                             # off-chip edges: 32 presence bits, the memory's word addresses
                             *((PRESENT_WORD_BITS, config.pe.memory_addr_bits) if config.pe.offchip else ())),
            rd_data_bits=max(layouts.vertex.size, COUNTER_BITS, LOG_BITS))


def host_ports(geometry):
    """Signature members of the host interface.

    ``host_wr_*``: one write per cycle before ``start``; ``host_rd_*``: the word is on
    ``host_rd_data`` ``HOST_READ_LATENCY`` cycles after the address; ``start`` pulses round 0's
    apply; ``done``: every PE has detected termination; ``superstep``: PE 0's round (progress).
    """
    return {
        "host_wr_en": In(1),
        "host_wr_pe": In(geometry.pe_bits),
        "host_wr_mem": In(HOST_MEM_BITS),
        "host_wr_addr": In(geometry.addr_bits),
        "host_wr_data": In(geometry.wr_data_bits),
        "host_rd_pe": In(geometry.pe_bits),
        "host_rd_mem": In(HOST_MEM_BITS),
        "host_rd_addr": In(geometry.addr_bits),
        "host_rd_data": Out(geometry.rd_data_bits),
        "start": In(1),
        "done": Out(1),
        "superstep": Out(32),
    }


def load_port_signature(geometry):
    """One PE's own write port (``en``, ``mem``, ``addr``, ``data``, as ``host_wr_*``), outputs
    as seen by the host: the compiled simulator's parallel load (``FpgaTop(load_ports=True)``)."""
    return wiring.Signature({"en": Out(1), "mem": Out(HOST_MEM_BITS), "addr": Out(geometry.addr_bits),
                             "data": Out(geometry.wr_data_bits)})
