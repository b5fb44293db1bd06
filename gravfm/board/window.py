"""The host window of a board's gravfm core: what the driver writes and reads, in one place.

The SoC (:mod:`gravfm.board.core`) puts the FPGA top's host port behind a bus window, so that any
LiteX host bridge (UART, Etherbone, PCIe) drives it with plain 32-bit bus reads and writes:

- **write stream** (``WRITE_STREAM``, word offsets ``0 .. STREAM_WORDS - 1`` of the window): every
  bus write appends its word to a stream that the core cuts into *records* of
  :attr:`RecordLayout.words` words. A record is one host write ``(pe, mem, addr, data)`` of
  docs/host-interface.md, or (``start`` bit set) the ``start`` pulse, so ``start`` follows the
  last write in order. Any address inside the region appends (bursts that increment the address
  land in the same stream).
- **read stream** (``READ_STREAM``): after the driver asks for ``count`` host reads from
  ``(mem, pe, addr)`` on (CSR ``read_request``), every bus read inside the region pops the next
  32-bit word of their data, :attr:`RecordLayout.read_words` words per host read, least
  significant first.

The CSRs (``gravfm_*`` in the SoC's ``csr.csv``): ``design_id`` (a hash of the top's Verilog: the
driver refuses a board that carries another design), ``records`` (records applied by the top
since reset: the driver checks none was lost), ``status`` (done, link_error, running),
``superstep``, ``cycles`` (from ``start`` to ``done`` in the design's clock), ``read_*``.

This module has no hardware import: the driver and the gateware both use it.
"""

import hashlib
from dataclasses import dataclass

import numpy as np

from ..hw.protocol import HOST_MEM_BITS

__all__ = ["RecordLayout", "WORD_BITS", "STREAM_WORDS", "WRITE_STREAM", "READ_STREAM", "WINDOW_BYTES",
           "READ_COUNT_BITS", "design_id", "GRAVFM_BASE", "MAIN_RAM_BASE", "DESIGN_DOMAIN", "CORE_STATUS",
           "LINK_STATUS", "flag"]

#: The FPGA top's clock domain in every SoC (from the board's PLL; in simulation a clock of its own).
DESIGN_DOMAIN = "design"
#: Bus address of the gravfm window in every SoC (inside the IO region a CPU leaves uncached).
GRAVFM_BASE = 0xB000_0000
#: Bus address of the DRAM (LiteX's ``main_ram``).
MAIN_RAM_BASE = 0x4000_0000

#: The host bridges' bus word.
WORD_BITS = 32
#: Words in each stream region (a burst never leaves its region: bridges burst at most 256 words).
STREAM_WORDS = 1 << 14
#: Word offsets of the two stream regions inside the window.
WRITE_STREAM, READ_STREAM = 0, STREAM_WORDS
#: Bytes the window occupies on the SoC bus.
WINDOW_BYTES = 2 * STREAM_WORDS * WORD_BITS // 8
#: Width of the read request's count (host reads per request).
READ_COUNT_BITS = 32

#: One-bit fields of the core's ``status`` CSR, lowest bit first, and what each says.
CORE_STATUS = {
    "done": "Every PE has detected termination",
    "link_error": "A link receiver latched an error",
    "running": "Started and not yet done",
}
#: One-bit fields of each link port's ``status`` CSR (:class:`gravfm.board.link.LinkPort`).
LINK_STATUS = {
    "ready": "Aligned both ways: frames can pass",
    "error": "The bring-up found no alignment",
    "hello": "A HELLO came from the peer (peer_fpga, peer_design hold it)",
    "peer_armed": "The peer is armed",
}


def flag(status, fields, name):
    """Field ``name`` of a ``status`` word laid out as ``fields`` (:data:`CORE_STATUS`, :data:`LINK_STATUS`)."""
    return bool(status >> list(fields).index(name) & 1)


def _words(bits):
    return -(-bits // WORD_BITS)


@dataclass(frozen=True)
class RecordLayout:
    """How a host write is packed into bus words, from the top's host geometry.

    Fields from the least significant bit: ``start`` (1), ``mem`` (``HOST_MEM_BITS``), ``pe``,
    ``addr``, ``data``; padded with zeros to whole 32-bit words.

    Parameters
    ----------
    pe_bits, addr_bits, wr_data_bits, rd_data_bits : int
        The top's :class:`gravfm.hw.host.HostGeometry`.
    """

    pe_bits: int
    addr_bits: int
    wr_data_bits: int
    rd_data_bits: int

    @classmethod
    def of(cls, geometry):
        return cls(geometry.pe_bits, geometry.addr_bits, geometry.wr_data_bits, geometry.rd_data_bits)

    @property
    def fields(self):
        """``[(name, offset, width)]`` LSB first."""
        out, offset = [], 0
        for name, width in (("start", 1), ("mem", HOST_MEM_BITS), ("pe", self.pe_bits),
                            ("addr", self.addr_bits), ("data", self.wr_data_bits)):
            out.append((name, offset, width))
            offset += width
        return out

    @property
    def bits(self):
        return sum(width for _, _, width in self.fields)

    @property
    def words(self):
        """Bus words per record."""
        return _words(self.bits)

    @property
    def read_words(self):
        """Bus words per host read's data."""
        return _words(self.rd_data_bits)

    def pack(self, pe, mem, addr, data):
        """Bus words (uint32 array, record after record) for host writes given as arrays."""
        n = len(pe)
        records = np.zeros((n, self.words), dtype=np.uint32)
        columns = {"start": np.zeros(n, dtype=object), "mem": mem, "pe": pe, "addr": addr, "data": data}
        # Python integers: a record can be wider than 64 bits (wide vertex states).
        value = np.zeros(n, dtype=object)
        for name, offset, width in self.fields:
            column = np.asarray(columns[name], dtype=object)
            value = value + ((column & ((1 << width) - 1)) << offset)
        for w in range(self.words):
            records[:, w] = np.array([(int(v) >> (WORD_BITS * w)) & 0xFFFFFFFF for v in value], dtype=np.uint32)
        return records.reshape(-1)

    def start_record(self):
        """The record that pulses ``start``."""
        words = np.zeros(self.words, dtype=np.uint32)
        words[0] = 1
        return words

    def unpack_reads(self, words):
        """Host-read data (Python ints) from the read stream's words."""
        words = np.asarray(words, dtype=np.uint64).reshape(-1, self.read_words)
        out = []
        for row in words:
            value = 0
            for w, word in enumerate(row):
                value |= int(word) << (WORD_BITS * w)
            out.append(value & ((1 << self.rd_data_bits) - 1))
        return out


def design_id(verilog_text):
    """A 32-bit identity of a top's Verilog, built into the SoC and checked by the driver."""
    return int.from_bytes(hashlib.sha256(verilog_text.encode()).digest()[:4], "little")
