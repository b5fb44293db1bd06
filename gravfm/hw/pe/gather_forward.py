"""Gather stage with result forwarding, for a combinational gather kernel.

:class:`~gravfm.hw.pe.gather.GatherUnit` makes a message wait while an earlier message to the same
vertex is in flight (read, read-data register, kernel, write-back): on a hub vertex of a
power-law graph the messages to it arrive close together and each waits its turn. When the
kernel is combinational (it declares ``combinational = True``: its output is valid in the cycle
of its input, and it is ready whenever its output is), every in-flight result is known one
cycle after its read data, so a message to a vertex in flight can take the newest result
instead of waiting. Every message then issues in the cycle it arrives: one message per cycle
on any graph, and no hazard CAM.

Pipeline, one stage per cycle and never stalled::

    issue (read address) -> S (read data) -> R (read-data register, kernel) -> WB (write-back)

A message X issued in cycle ``i`` compares its vertex with the message in each stage; the newest
match provides X's state:

* in S at ``i``: that message is in WB while X is in R -> R takes the word being written;
* in R at ``i``: in WB while X is in S -> S takes the word being written;
* in WB at ``i``, with a registered memory write (``write_latency=1``): its write lands after
  X's read -> the word being written at ``i`` is kept for X's S stage;
* in WB at ``i - 1``, with ``write_latency=1``: its write lands as X reads -> that word is kept
  (so the read port need not be transparent);
* older: already in memory (with ``write_latency=0`` the read port must be transparent for
  the write port).

The vertex word's ``touched`` flag travels with the forwarded word, so each vertex is still
reported on ``touch`` once per round (see :class:`~gravfm.hw.pe.gather.GatherUnit`).
"""

from amaranth.hdl import Mux, Signal

from .gather import GatherStage, GatherUnit, kernel_inputs, newest_write, read_data_register

__all__ = ["ForwardingGatherUnit", "build_gather_unit", "forwards"]


def is_combinational(kernel):
    """Whether the gather ``kernel`` declares ``combinational = True``."""
    return getattr(kernel, "combinational", False) is True


def forwards(config, kernel):
    """Whether the gather stage for ``kernel`` forwards results (:class:`ForwardingGatherUnit`):
    the kernel declares itself combinational and ``config.pe.gather_forwarding`` is on."""
    return config.pe.gather_forwarding and is_combinational(kernel)


def build_gather_unit(*, layouts, config, kernel, write_latency=0):
    """The gather stage for ``kernel``: forwarding when :func:`forwards`, else with a hazard unit."""
    unit = ForwardingGatherUnit if forwards(config, kernel) else GatherUnit
    return unit(layouts=layouts, config=config, kernel=kernel, write_latency=write_latency)


class ForwardingGatherUnit(GatherStage):
    """Gather with forwarding instead of a hazard unit, for a combinational gather kernel
    (``combinational = True``). Parameters and ports as :class:`~gravfm.hw.pe.gather.GatherStage`;
    ``hazard_stall`` is always 0 (no message waits for its vertex).
    """

    def __init__(self, *, layouts, config, kernel, write_latency=0):
        if not is_combinational(kernel):
            self._MustUse__silence = True
            raise TypeError(f"{type(kernel).__name__} is not a combinational gather kernel "
                            "(combinational = True); use GatherUnit")
        super().__init__(layouts=layouts, config=config, kernel=kernel, write_latency=write_latency)

    def _pipeline(self, m, layouts, local_bits, kernel, *, paused, level, take_barrier):
        incoming = self.messages.payload
        incoming_address = incoming.neighbor[:local_bits]

        s_valid = Signal()
        s_item = Signal(layouts.scatter_out)
        s_from_wb = Signal()    # S takes the word being written (the vertex was in R at issue)
        s_from_kept = Signal()  # S takes the word kept at issue (the vertex was in WB then)
        kept_word = Signal(layouts.vertex_word, reset_less=True)
        s_address = s_item.neighbor[:local_bits]
        r_valid = Signal()
        r_item = Signal(layouts.scatter_out)
        r_from_wb = Signal()    # R takes the word being written (the vertex was in S at issue)
        r_address = r_item.neighbor[:local_bits]
        wb_valid = Signal()
        wb = Signal(layouts.gather_out)
        wb_before = Signal(layouts.vertex_word, reset_less=True)  # the state the kernel saw
        wb_address = wb.nodeid[:local_bits]

        flushed = ~s_valid & ~r_valid & ~wb_valid
        issue = ~paused & self.messages.valid & ~incoming.barrier
        m.d.comb += [
            take_barrier.eq(~paused & self.messages.valid & incoming.barrier & flushed),
            self.rd.addr.eq(incoming_address),
            self.rd.en.eq(1),
            self.messages.ready.eq(issue | take_barrier),
            self.apply_start.eq(take_barrier),
            self.hazard_stall.eq(0),
            self.active.eq(~flushed),
        ]

        # The word being written back, touched flag included: what memory will hold.
        written = Signal(layouts.vertex_word)
        changed = wb.state.as_value() != wb_before.state.as_value()
        m.d.comb += [written.state.eq(wb.state), written.touched.eq(wb_before.touched | changed)]

        # Issue -> S: compare with the stages the message will meet, and register the results.
        s_then_r_from_wb = Signal()  # the vertex was in S at issue: R takes the word being written
        m.d.sync += [
            s_valid.eq(issue), s_item.eq(incoming),
            s_then_r_from_wb.eq(s_valid & (s_address == incoming_address)),
            s_from_wb.eq(r_valid & (r_address == incoming_address)),
        ]
        if self._write_latency:
            hit, newest = newest_write(m, valid=wb_valid, address=wb_address, word=written,
                                       read_address=incoming_address)
            m.d.sync += [s_from_kept.eq(hit), kept_word.eq(newest)]
        # S -> R. The newest match wins: R's forward over S's, S's write-back over the kept word.
        r_data = read_data_register(m, advance=1, memory_word=self.rd.data, forward=s_from_wb | s_from_kept,
                                    forward_word=Mux(s_from_wb, written, kept_word))
        m.d.sync += [r_valid.eq(s_valid), r_item.eq(s_item), r_from_wb.eq(s_then_r_from_wb)]
        state_in = Signal(layouts.vertex_word)
        m.d.comb += state_in.eq(Mux(r_from_wb, written, r_data))

        m.d.comb += kernel_inputs(kernel, valid=r_valid, level=level, item=r_item, state=state_in.state)
        m.d.sync += [wb_valid.eq(kernel.o.valid), wb.eq(kernel.o.payload), wb_before.eq(state_in)]
        m.d.comb += [
            self.wr.en.eq(wb_valid),
            self.wr.addr.eq(wb_address),
            self.wr.data.eq(written),
            self.touch.valid.eq(wb_valid & changed & ~wb_before.touched),
            self.touch.payload.eq(wb_address),
        ]
