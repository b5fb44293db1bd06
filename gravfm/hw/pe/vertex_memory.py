"""A PE's vertex memory, between the host, gather and apply: one memory, or an accumulator split off.

:func:`shared_vertex_memory` (every algorithm without an ``accumulator``): one memory of
``vertex_word`` with one write port, which the host (before ``start``), gather and apply share
(gather first: apply buffers its write-backs), and read ports for gather, apply and the host.

:func:`split_vertex_memory` (an algorithm that names an ``accumulator`` field, PageRank's
``sum``): gather reads and writes only that field and apply resets it, so it lives apart from
the rest of the state in two banks chosen by round parity. Apply's pass of round r reads and
clears bank ``r % 2`` (the sums of round r's messages) and reads and writes the rest of the state
in its own memory, while the next round's gather accumulates into the other bank: the two
never write the same memory, so gather runs beside the pass at one message per cycle and a
message of round r+1 cannot reach what the pass reads (BSP stays exact). A bank was cleared by
the pass two rounds back before gather starts on it again. Each bank has one read port, given
to gather or to apply by its parity, and one for the host; the rest of the state has a port for
apply and one for the host. Block RAM per vertex: ``2 * (w - a) + 4 * a`` bits for a vertex of
``w`` state bits with an accumulator of ``a`` (PageRank: 256), against ``3 * (w + 2)`` for the
shared memory (PageRank: 294): gather no longer keeps a copy of the whole word.

Both return the state bits of the host's read (one cycle after ``host_rd_addr``).
"""

from amaranth.hdl import Mux, Signal
from amaranth.lib import data, memory

from ..memory_ports import no_read_during_write

__all__ = ["shared_vertex_memory", "split_vertex_memory"]


def _write_register(shape, local_bits, prefix=""):
    """A registered write port's enable, address and data (the port takes flip-flops, not the
    choice between its writers, which ran on into memory cells placed far away)."""
    return (Signal(name=f"{prefix}w_en"), Signal(local_bits, name=f"{prefix}w_addr", reset_less=True),
            Signal(shape, name=f"{prefix}w_data", reset_less=True))


def _memory(m, name, shape, local_bits, write):
    """A block-RAM memory written through the registered ``write`` (en, addr, data)."""
    # Block RAM at every size: a graph needs thousands of vertices per PE, and a small build in
    # LUT RAM times a different memory (its read address fans out to every LUT RAM). No read port
    # is transparent, nor needs collision logic behind the RAM (which would start the PE's
    # critical path at the RAM's late output).
    m.submodules[name] = mem = memory.Memory(shape=shape, depth=2 ** local_bits, init=[],
                                             attrs=no_read_during_write("block"))
    port = mem.write_port()
    en, addr, word = write
    m.d.comb += [port.en.eq(en), port.addr.eq(addr), port.data.eq(word)]
    return mem


def _read(m, mem, rd):
    """A read port of ``mem`` for the unit port ``rd`` (addr, en, data)."""
    port = mem.read_port()
    m.d.comb += [port.addr.eq(rd.addr), port.en.eq(rd.en), rd.data.eq(port.data)]


def shared_vertex_memory(m, *, layouts, local_bits, gather, apply, host_write, host_addr, host_data,
                         host_rd_addr):
    """One memory of ``vertex_word`` for the host, gather and apply (module docstring).

    Gather forwards the word of a write landing as it reads (``write_latency=1``). Apply never
    reads a vertex as its write lands: while it runs only its own writes reach the memory, each
    after its read of that vertex, which a pass issues once; gather starts apply only once its
    pipeline is empty, so its last write lands by the cycle after, and apply's first read comes
    a cycle later. The host reads after termination.
    """
    write = _write_register(layouts.vertex_word, local_bits)
    w_en, w_addr, w_data = write
    mem = _memory(m, "vertex_mem", layouts.vertex_word, local_bits, write)
    _read(m, mem, gather.rd)
    _read(m, mem, apply.rd)
    # Gather's write first: its pipeline never waits; apply's write-back buffer does. A write
    # lands a cycle later: gather forwards the word to a read of the same vertex in that cycle,
    # apply writes each vertex once per pass and hands the memory back only after its barrier,
    # and start follows the host's writes by more.
    with m.If(host_write):
        m.d.sync += [w_en.eq(1), w_addr.eq(host_addr), w_data.state.eq(host_data[:layouts.vertex.size]),
                     w_data.touched.eq(0)]
    with m.Elif(gather.wr.en):
        m.d.sync += [w_en.eq(1), w_addr.eq(gather.wr.addr), w_data.eq(gather.wr.data)]
    with m.Else():
        m.d.sync += [w_en.eq(apply.wr.en), w_addr.eq(apply.wr.addr), w_data.eq(apply.wr.data)]
    m.d.comb += apply.wr_grant.eq(~host_write & ~gather.wr.en)
    host = mem.read_port()
    m.d.comb += host.addr.eq(host_rd_addr)
    return host.data.state.as_value()


def split_vertex_memory(m, *, layouts, local_bits, accumulator, gather, apply, host_write, host_addr,
                        host_data, host_rd_addr):
    """The ``accumulator`` field in two banks by round parity, the rest in a memory of its own
    (module docstring). ``gather`` must not overlap by itself (no retry queue): the PE resumes it
    when apply's pass starts, and it takes its next barrier only once the pass is done.
    """
    vertex = layouts.vertex
    acc_shape = vertex[accumulator].shape
    rest = data.StructLayout({name: field.shape for name, field in vertex if name != accumulator})
    loaded = data.View(vertex, host_data[:vertex.size])

    # The bank each unit uses: apply's pass of round r reads bank r % 2, gather of round r (whose
    # messages the pass of round r + 1 reads) the other. Between passes apply's round has moved
    # on, so the two agree: gather writes bank round % 2. Each changes only while its unit is
    # idle: apply's round as its pass ends (with ``busy``, so gather's bank stays), gather's bank
    # as a pass starts. A register: the ports' address multiplexers then start at a flip-flop.
    # It follows ``busy`` a cycle late, early enough: gather hands over a round only with its
    # pipeline empty and resumes a cycle after the pass has started, and apply's first read
    # comes as late.
    apply_bank = apply.round[0]
    gather_bank = Signal()
    m.d.sync += gather_bank.eq(apply.round[0] ^ apply.busy)
    # The bank behind gather's read data (the read a cycle ago).
    gather_read_bank = Signal()
    m.d.sync += gather_read_bank.eq(gather_bank)

    # The rest of the state: written by the host, then by apply alone.
    rest_write = _write_register(rest, local_bits, "rest_")
    w_en, w_addr, w_data = rest_write
    rest_mem = _memory(m, "vertex_rest", rest, local_bits, rest_write)
    with m.If(host_write):
        m.d.sync += [w_en.eq(1), w_addr.eq(host_addr), *(w_data[name].eq(loaded[name]) for name, _ in rest)]
    with m.Else():
        m.d.sync += [w_en.eq(apply.wr.en), w_addr.eq(apply.wr.addr),
                     *(w_data[name].eq(apply.wr.data.state[name]) for name, _ in rest)]
    # Apply never waits for the port: gather writes a bank of its own.
    m.d.comb += apply.wr_grant.eq(1)
    rest_read = rest_mem.read_port()
    m.d.comb += [rest_read.addr.eq(apply.rd.addr), rest_read.en.eq(apply.rd.en)]
    host_rest = rest_mem.read_port()
    m.d.comb += host_rest.addr.eq(host_rd_addr)

    reads, host_reads = [], []
    for bank in range(2):
        write = _write_register(acc_shape, local_bits, f"acc{bank}_")
        w_en, w_addr, w_data = write
        mem = _memory(m, f"vertex_acc{bank}", acc_shape, local_bits, write)
        for_gather = gather_bank == bank
        # The host loads round 0's accumulator into bank 0 and clears bank 1, as a pass would.
        with m.If(host_write):
            m.d.sync += [w_en.eq(1), w_addr.eq(host_addr), w_data.eq(loaded[accumulator] if bank == 0 else 0)]
        with m.Elif(gather.wr.en & for_gather):
            m.d.sync += [w_en.eq(1), w_addr.eq(gather.wr.addr), w_data.eq(gather.wr.data.state[accumulator])]
        with m.Else():
            m.d.sync += [w_en.eq(apply.wr.en & (apply_bank == bank)), w_addr.eq(apply.wr.addr),
                         w_data.eq(apply.wr.data.state[accumulator])]
        # One read port, gather's or apply's by parity: during a pass each has a bank of its own.
        # Neither reads a vertex as its write lands but gather, which forwards that word itself.
        port = mem.read_port()
        m.d.comb += [port.addr.eq(Mux(for_gather, gather.rd.addr, apply.rd.addr)),
                     port.en.eq(Mux(for_gather, gather.rd.en, apply.rd.en))]
        reads.append(port.data)
        host = mem.read_port()
        m.d.comb += host.addr.eq(host_rd_addr)
        host_reads.append(host.data)

    # Gather sees only the accumulator (the rest of its state reads as 0; the contract says it
    # does not look); apply sees the whole state.
    m.d.comb += [
        gather.rd.data.state[accumulator].eq(Mux(gather_read_bank, reads[1], reads[0])),
        apply.rd.data.state[accumulator].eq(Mux(apply_bank, reads[1], reads[0])),
        *(apply.rd.data.state[name].eq(rest_read.data[name]) for name, _ in rest),
    ]
    # After termination: the bank the last round's gather wrote (apply's round has moved on).
    host_state = Signal(vertex, name="host_state")
    m.d.comb += [host_state[accumulator].eq(Mux(gather_bank, host_reads[1], host_reads[0])),
                 *(host_state[name].eq(host_rest.data[name]) for name, _ in rest)]
    return host_state.as_value()
