"""The host protocol: what the host, the gateware and the compiled simulator's harness agree on.

One place for the constants of docs/host-interface.md, without Amaranth, so the loader, the
back-ends and the model can use them without building hardware. The gateware takes its codes
from here, and :func:`cpp_header` turns them into the ``gravfm_protocol.h`` that the C++
harness includes: nothing is spelled twice.

* Host writes (``host_wr_mem``, :class:`HostMem`), one word per cycle before ``start``.
* Host reads (``host_rd_mem``, :class:`HostReadMem`): the word arrives ``HOST_READ_LATENCY``
  cycles after the address.
* Per-PE counters (:data:`COUNTER_NAMES`, address = index) and per-round logs.
* Link counters of a multi-FPGA system (:data:`LINK_COUNTER_NAMES`,
  :func:`link_counter_address`), read through any PE of the sending FPGA.
* The load file the harness reads (:func:`write_load_file`).
"""

import numpy as np

__all__ = [
    "HostMem", "TOP_WRITE_CODES", "HostReadMem", "codes", "PeRegister", "PRESENT_WORD_BITS", "PRESENT_WORD_SHIFT",
    "FpgaRegister",
    "HOST_MEM_BITS", "COUNTER_BITS", "COUNTER_DESCRIPTIONS", "COUNTER_NAMES", "LOG_BITS", "ROUND_LOGS",
    "PE_READ_LATENCY", "HOST_READ_LATENCY",
    "LINK_COUNTER_NAMES", "LINK_MODEL_COUNTER_NAMES", "LINK_END_COUNTER_NAMES", "peers_of", "link_counter_address",
    "LOAD_MAGIC", "split_words", "join_words", "write_load_file", "cpp_header",
]


class HostMem:
    """``host_wr_mem`` codes: what a host write fills."""

    VERTEX = 0        #: vertex state, addr = local index
    EDGE_INDEX = 1    #: edge index, addr = sender's hardware id, word = {start, length}
    EDGES = 2         #: edge array, word = {dst, edge fields}
    REGISTERS = 3     #: PE registers (:class:`PeRegister`)
    FILTER = 4        #: neighbor filter (multi-FPGA GraVF-M): bit k = link k's peer hosts a neighbour
    APPLY_LIST = 5    #: vertices round 0's apply visits (sparse apply)
    FPGA = 6          #: registers of the FPGA written to (:class:`FpgaRegister`); the PE names a per-PE one
    EDGE_PRESENT = 7  #: off-chip edges: which index entries hold a list (:data:`PRESENT_WORD_BITS` a word)


#: Codes that the FPGA's top takes from the host bus itself, not from a PE's write port: a parallel
#: load (the compiled simulator's, ``FpgaTop(load_ports=True)``) sends only the other codes by PE.
TOP_WRITE_CODES = (HostMem.FILTER, HostMem.FPGA)


class HostReadMem:
    """``host_rd_mem`` codes: what a host read returns."""

    VERTEX = 0          #: vertex state, addr = local index
    COUNTERS = 3        #: PE counters, addr = index in :data:`COUNTER_NAMES`
    LINK_COUNTERS = 4   #: link counters of the PE's FPGA (:func:`link_counter_address`)
    LOG_MESSAGES = 5    #: per-round log: messages scattered, addr = round
    LOG_UPDATES = 6     #: per-round log: updates emitted
    LOG_CYCLE = 7       #: per-round log: cycle at which the round's apply ended (from ``start``)


def codes(table):
    """``{name: code}`` of a code table (:class:`HostMem`, :class:`HostReadMem`), in declaration order."""
    return {name: value for name, value in vars(table).items() if name.isupper()}


#: Width of ``host_wr_mem`` and ``host_rd_mem``: every code of both tables fits (a new code may widen it).
HOST_MEM_BITS = max(*codes(HostMem).values(), *codes(HostReadMem).values()).bit_length()


class PeRegister:
    """Addresses of the PE registers (``host_wr_mem = HostMem.REGISTERS``)."""

    NUM_LOCAL = 0       #: vertices this PE holds
    SPARSE_ROUND0 = 1   #: 1: round 0's apply visits only the listed vertices (APPLY_LIST)
    INDEX_BASE = 2      #: off-chip edges: memory word address of this PE's edge index
    EDGE_BASE = 3       #: off-chip edges: memory word address of this PE's edge lists


#: Index entries per EDGE_PRESENT word (a power of two: entry = word address, bit).
PRESENT_WORD_BITS = 32
#: Bits of an index entry that select the bit within its EDGE_PRESENT word.
PRESENT_WORD_SHIFT = PRESENT_WORD_BITS.bit_length() - 1


class FpgaRegister:
    """Addresses of an FPGA's registers (``host_wr_mem = HostMem.FPGA``): what tells identical
    FPGA tops apart. The host addresses an FPGA by any of its PEs; the top sees local PE indices."""

    INDEX = 0           #: this FPGA's index in the system (its PEs are INDEX * p .. INDEX * p + p - 1)
    HUB_SENDERS = 1     #: the addressed PE's hubs: its local indices below this (hybrid's hub path)


COUNTER_BITS = 64
COUNTER_DESCRIPTIONS = {
    "cycles": "cycles from start until this PE detected termination",
    "busy": "cycles in which scatter, gather or apply held work",
    "messages": "edges scattered by this PE (messages = traversed edges)",
    "updates": "updates emitted by this PE's apply",
    "supersteps": "apply passes executed (rounds, the silent last one included)",
    "stall_hazard": "cycles gather issued nothing because its messages waited for their vertices "
                    "to be written back (or for a free hazard slot)",
    "stall_backpressure": "cycles the scatter address generator had an edge but the pipeline was full",
    "wait_barrier": "cycles the PE was idle and its endpoint waited for other PEs' updates or barriers",
    "apply_cycles": "cycles spent in the apply pass",
    "mem_requests": "off-chip memory read requests (edge index and edge words)",
    "mem_words": "off-chip memory words received",
    "mem_responses": "off-chip memory requests answered (their last word received)",
    "mem_wait": "cycles scatter had a list to deliver but waited for off-chip memory",
}
#: Counter order = read address. All count between ``start`` and this PE's termination.
COUNTER_NAMES = tuple(COUNTER_DESCRIPTIONS)

LOG_BITS = 64
#: The per-round logs by name, and their read codes.
ROUND_LOGS = {"messages": HostReadMem.LOG_MESSAGES, "updates": HostReadMem.LOG_UPDATES,
              "cycle": HostReadMem.LOG_CYCLE}

#: Cycles from a PE's copy of the read request to its registered word (gravfm.hw.host_read).
PE_READ_LATENCY = 4
#: Cycles from ``host_rd_*`` to ``host_rd_data``: the top registers each PE's request first.
HOST_READ_LATENCY = PE_READ_LATENCY + 1

#: Counters of each outgoing link of an FPGA, kept by the simulated link: items into the link,
#: bits carried, cycles the link was the bound, items delivered to the peer, barriers into and
#: out of the link; the faults it injected (items lost, delivered twice, delivered with a flipped
#: bit) and the cycle of the first, counted from reset.
LINK_MODEL_COUNTER_NAMES = ("items", "bits", "bound_cycles", "delivered", "barriers_sent", "barriers_delivered",
                            "dropped", "duplicated", "flipped", "first_fault")
#: Counters of an FPGA's link ends (the link check, :mod:`gravfm.hw.link_check`; 0 without it),
#: read from the FPGA top: frames its sender sent again on link ``k``, and, for the link coming
#: back from that peer, the frames its receiver dropped and the receiver's error word.
LINK_END_COUNTER_NAMES = ("retransmissions", "discarded_in", "error_in")
LINK_COUNTER_NAMES = LINK_MODEL_COUNTER_NAMES + LINK_END_COUNTER_NAMES


def peers_of(fpga, fpgas):
    """The other FPGAs, in the order of FPGA ``fpga``'s link ports (link ``k`` goes to ``peers_of(fpga)[k]``)."""
    return [j for j in range(fpgas) if j != fpga]


def link_counter_address(link, counter):
    """Read address of counter ``counter`` (index in :data:`LINK_COUNTER_NAMES`) of an FPGA's
    ``link``-th outgoing link (to ``peers_of(fpga)[link]``)."""
    return len(LINK_COUNTER_NAMES) * link + counter


#: First bytes of a load file.
LOAD_MAGIC = b"GRVFMLD1"


def split_words(values, bits):
    """Integers (< 2**bits) as ``uint32[n, ceil(bits/32)]``, least significant word first."""
    words = max(1, -(-bits // 32))
    array = np.asarray(values)
    if array.dtype.kind in "iu" and bits <= 64:
        array = array.astype(np.uint64).reshape(-1)
        out = np.empty((len(array), words), dtype=np.uint32)
        for k in range(words):
            out[:, k] = (array >> np.uint64(32 * k)) & np.uint64(0xFFFFFFFF)
        return out
    ints = [int(v) for v in np.asarray(values, dtype=object).reshape(-1)]
    out = np.empty((len(ints), words), dtype=np.uint32)
    for i, value in enumerate(ints):
        for k in range(words):
            out[i, k] = (value >> (32 * k)) & 0xFFFFFFFF
    return out


def join_words(words, bits):
    """Inverse of :func:`split_words`: uint64 array when ``bits <= 64``, else object array of ints."""
    words = np.asarray(words, dtype=np.uint64)
    if bits <= 64:
        out = words[:, 0].copy()
        if words.shape[1] > 1:
            out |= words[:, 1] << np.uint64(32)
        if bits < 64:
            out &= np.uint64((1 << bits) - 1)
        return out
    out = np.empty(len(words), dtype=object)
    for i, row in enumerate(words):
        out[i] = sum(int(w) << (32 * k) for k, w in enumerate(row)) & ((1 << bits) - 1)
    return out


def write_load_file(path, pe, mem, addr, data):
    """Write host writes as the harness's load file.

    Little-endian: ``LOAD_MAGIC``, u32 words per data item, u32 0, u64 record count; then one
    record per write: u32 pe, u32 mem, u32 addr, the data as u32 words, least significant first.

    Parameters
    ----------
    pe, mem, addr : array of int
    data : uint32 array (writes, words)
    """
    data = np.asarray(data, dtype=np.uint32)
    count, words = data.shape
    records = np.empty((count, 3 + words), dtype="<u4")
    records[:, 0], records[:, 1], records[:, 2] = pe, mem, addr
    records[:, 3:] = data
    header = LOAD_MAGIC + np.array([words, 0], dtype="<u4").tobytes() + np.array([count], dtype="<u8").tobytes()
    with open(path, "wb") as file:
        file.write(header)
        file.write(records.tobytes())


def cpp_header():
    """``gravfm_protocol.h``: the constants above for the C++ harness."""
    constants = [f"constexpr uint32_t HOST_MEM_{name} = {value};" for name, value in codes(HostMem).items()]
    constants += [f"constexpr uint32_t HOST_READ_{name} = {value};" for name, value in codes(HostReadMem).items()]
    return "\n".join([
        "// Generated by gravfm.hw.protocol: the host protocol's constants (do not edit).",
        "#pragma once",
        "#include <cstdint>",
        "",
        f'constexpr char LOAD_MAGIC[] = "{LOAD_MAGIC.decode()}";',
        f"constexpr int HOST_READ_LATENCY = {HOST_READ_LATENCY};",
        f"constexpr int COUNTER_COUNT = {len(COUNTER_NAMES)};",
        f"constexpr int LINK_COUNTER_COUNT = {len(LINK_COUNTER_NAMES)};",
        f"constexpr int LINK_MODEL_COUNTER_COUNT = {len(LINK_MODEL_COUNTER_NAMES)};",
        *constants,
        "// A code the FPGA's top takes from the host bus itself (TOP_WRITE_CODES), not from a PE's port.",
        "constexpr bool host_mem_of_top(uint32_t mem) {",
        f"    return {' || '.join(f'mem == {code}' for code in TOP_WRITE_CODES)};",
        "}",
        "",
    ])
