"""Receiving endpoint of a PE: merges its per-source FIFOs and runs the floating barrier.

Each source's FIFO delivers that source's updates in order, its round-``r`` barrier behind them,
then round ``r+1``. The arbiter picks round-robin among the sources that have not yet delivered
their barrier of the current round, so a source that is a round ahead simply waits behind its
barrier (a virtual channel per round, without extra buffers). Barriers are not forwarded: the
endpoint records each source's ``count`` and ``sent_any`` and counts the updates it received.
When every source's barrier is in and the counts match, it sends ONE barrier to its PE and
starts the next round — unless no source sent anything, in which case it raises ``terminated``
instead (SPEC §3: every PE detects termination on its own).
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .merge import round_robin_grant

__all__ = ["Endpoint"]


class Endpoint(wiring.Component):
    """Per-destination arbiter and barrier counter.

    Parameters
    ----------
    layout : StructLayout
        The network update layout (``sender``, ``update``, ``barrier``, ``count``, ``sent_any``).
    sources : int
        Number of sources (local PEs plus remote-FPGA inputs).
    count_bits : int
        Width of the update counters.

    Ports
    -----
    i : In(array of ``sources`` streams)
        One in-order stream per source.
    o : Out(stream)
        Updates, then one barrier per round.
    terminated : Out(1)
        Set (and kept) once a round ended with no update from any source.
    waiting : Out(1)
        The round is not complete and no source has anything to deliver (barrier wait).
    """

    def __init__(self, *, layout, sources, count_bits):
        if not isinstance(sources, int) or sources < 1:
            raise TypeError(f"endpoint sources must be a positive integer, not {sources!r}")
        self._layout = layout
        self._sources = sources
        self._count_bits = count_bits
        super().__init__({
            "i": In(stream.Signature(layout)).array(sources),
            "o": Out(stream.Signature(layout)),
            "terminated": Out(1),
            "waiting": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._sources
        arrived = Signal(n)                       # barrier of this round received, per source
        received = [Signal(self._count_bits, name=f"received{s}") for s in range(n)]
        expected = [Signal(self._count_bits, name=f"expected{s}") for s in range(n)]
        anything = Signal()
        terminated = Signal()
        last = Signal(range(max(n, 2)))           # last granted source, for round robin

        eligible = Signal(n)
        for s in range(n):
            m.d.comb += eligible[s].eq(self.i[s].valid & ~arrived[s])
        grant, granted = round_robin_grant(m, eligible, last)

        counts_match = 1
        for s in range(n):
            counts_match = counts_match & (received[s] == expected[s])
        round_complete = arrived.all() & counts_match

        chosen = Signal(self._layout)
        for s in range(n):
            with m.If(grant == s):
                m.d.comb += chosen.eq(self.i[s].payload)
        fire = Signal()
        with m.If(~terminated):
            with m.If(round_complete):
                with m.If(anything):
                    m.d.comb += [self.o.valid.eq(1), self.o.payload.barrier.eq(1)]
                    with m.If(self.o.ready):
                        m.d.sync += [arrived.eq(0), anything.eq(0)]
                        m.d.sync += [r.eq(0) for r in received]
                with m.Else():
                    m.d.sync += terminated.eq(1)
            with m.Elif(granted):
                with m.If(chosen.barrier):
                    m.d.comb += fire.eq(1)
                    for s in range(n):
                        with m.If(grant == s):
                            m.d.sync += [arrived[s].eq(1), expected[s].eq(chosen.count)]
                    with m.If(chosen.sent_any):
                        m.d.sync += anything.eq(1)
                with m.Else():
                    m.d.comb += [self.o.valid.eq(1), self.o.payload.eq(chosen), fire.eq(self.o.ready)]
                    for s in range(n):
                        with m.If((grant == s) & self.o.ready):
                            m.d.sync += received[s].eq(received[s] + 1)
                with m.If(fire):
                    m.d.sync += last.eq(grant)
        for s in range(n):
            m.d.comb += self.i[s].ready.eq(fire & (grant == s))
        m.d.comb += [
            self.terminated.eq(terminated),
            self.waiting.eq(~terminated & ~round_complete & ~granted),
        ]
        return m
