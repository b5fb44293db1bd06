"""The host read path of docs/host-interface.md: data ``HOST_READ_LATENCY`` cycles after the address.

Every back-end driver waits exactly ``HOST_READ_LATENCY`` clock cycles between setting
``host_rd_pe``/``host_rd_mem``/``host_rd_addr`` and sampling ``host_rd_data`` (the compiled
simulator's harness gets the number from its generated header).

Inside a top the read is five register stages deep, so no block-RAM output (ECP5 DP16KD:
~4.3 ns clock-to-out) runs into logic or onto a long wire, and no single register drives the
address of every PE's memories:

0. each PE's copy of the request (``host_rd_mem``, ``host_rd_addr``) loads while ``host_rd_pe``
   names it (:func:`pe_read_request`); the PE reads ``PE_READ_LATENCY`` cycles on from there
   (:func:`pe_host_read`):
1. the PE's memory read ports (round logs, vertex memory) take the address;
2. each memory's read data lands in a plain register (no logic in front), and the counter
   register takes the counter picked by a registered one-hot select;
3. a second plain register: the first then has a single load and is placed by its RAM (with
   one stage, nextpnr put it ~30 rows away, towards the select logic, and the 4.3 ns plus the
   wire ended a 4-PE top's critical path at 148 MHz);
4. the PE registers the word picked by a registered select on ``rd_data``; the top ANDs each
   PE's registered word with its PE select, delayed to line up, and ORs them
   (:func:`select_registered`).
"""

from amaranth.hdl import Signal

from .protocol import COUNTER_BITS, HOST_READ_LATENCY, PE_READ_LATENCY

__all__ = ["PE_READ_LATENCY", "HOST_READ_LATENCY", "delayed", "select_registered", "pe_read_request",
           "pe_host_read"]



def delayed(m, value, cycles, *, name):
    """``value`` after ``cycles`` registers (a new signal; ``value`` itself when ``cycles`` is 0)."""
    for k in range(cycles):
        stage = Signal(value.shape(), name=f"{name}_q{k + 1}", reset_less=True)
        m.d.sync += stage.eq(value)
        value = stage
    return value


def select_registered(m, words, key, *, cycles, name):
    """AND-OR of ``words`` ({code: value}) by ``key == code``, that select delayed ``cycles`` registers.

    One LUT level per four sources instead of a mux tree decoding ``key``; the words must arrive
    ``cycles`` cycles after ``key``.
    """
    read = 0
    for code, value in words.items():
        selected = delayed(m, key == code, cycles, name=f"{name}{code}")
        read = read | (value & selected.replicate(len(value)))
    return read


def pe_read_request(m, index, *, top, pe):
    """Drive ``pe.rd_mem``/``pe.rd_addr`` from registers that load ``top.host_rd_*`` while
    ``top.host_rd_pe == index``.

    The enable makes every PE's copy a register of its own: Yosys merges equal registers, and
    one register driving the address of every PE's block RAMs across the chip was a 4-PE top's
    critical path.
    """
    mem = Signal.like(top.host_rd_mem, name=f"rd_mem_pe{index}", reset_less=True)
    addr = Signal.like(top.host_rd_addr, name=f"rd_addr_pe{index}", reset_less=True)
    with m.If(top.host_rd_pe == index):
        m.d.sync += [mem.eq(top.host_rd_mem), addr.eq(top.host_rd_addr)]
    m.d.comb += [pe.rd_mem.eq(mem), pe.rd_addr.eq(addr)]


def pe_host_read(m, *, rd_mem, rd_addr, rd_data, counters_code, counters, memories):
    """A PE's host read: ``rd_data`` (registered) holds the word ``PE_READ_LATENCY`` cycles on.

    ``memories`` maps a ``rd_mem`` code to the data of a read port whose address is ``rd_addr``
    (one cycle of latency); ``counters`` lists the counter signals read with ``counters_code``
    (address = index).
    """
    words = {code: delayed(m, value, 2, name=f"rd_word{code}") for code, value in memories.items()}
    # The counter select is decoded into one register per counter, not kept as an address that
    # a mux tree (and the register's synchronous reset, for no counter) decodes: every PE sees
    # the same address, so Yosys shares these registers between the PEs, and the decode logic
    # behind them ran across the chip into each PE's counter register.
    counter_q = Signal(COUNTER_BITS)
    m.d.sync += counter_q.eq(select_registered(m, dict(enumerate(counters)), rd_addr, cycles=1,
                                               name="rd_counter_sel"))
    sources = {counters_code: delayed(m, counter_q, 1, name="rd_counter"), **words}
    m.d.sync += rd_data.eq(select_registered(m, sources, rd_mem, cycles=PE_READ_LATENCY - 1,
                                             name="rd_select"))
