"""Receiving endpoint of a PE: merges its per-source FIFOs and runs the floating barrier.

Each source's FIFO delivers that source's updates in order, its round-``r`` barrier behind them,
then round ``r+1``. The arbiter picks round-robin among the sources that have not yet delivered
their barrier of the current round, so a source that is a round ahead simply waits behind its
barrier (a virtual channel per round, without extra buffers). Barriers are not forwarded: the
endpoint records each source's ``count`` and ``sent_any`` and counts the updates it received.
When every source's barrier is in and the counts match, it sends ONE barrier to its PE and
starts the next round — unless no source sent anything, in which case it raises ``terminated``
instead (SPEC §3: every PE detects termination on its own).

With two lanes the endpoint hands over up to two updates per cycle, from two different sources
(the second grant is the next eligible source after the first whose head is an update, not a
barrier): a PE whose edge lists for most senders are empty can then keep pace with an FPGA's
whole update stream.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import lanes_layout
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
    lanes : int
        Updates handed over per cycle (1 or 2).

    Ports
    -----
    i : In(array of ``sources`` streams)
        One in-order stream per source.
    o : Out(stream)
        Updates, then one barrier per round. With one lane the payload is ``layout``; with two
        it is ``{lanes: [layout, layout], valid}`` (lane 0 always valid when ``o.valid``; the
        barrier alone in lane 0) — :func:`lanes_layout`.
    terminated : Out(1)
        Set (and kept) once a round ended with no update from any source.
    waiting : Out(1)
        The round is not complete and no source has anything to deliver (barrier wait).
    """

    def __init__(self, *, layout, sources, count_bits, lanes=1):
        if not isinstance(sources, int) or sources < 1:
            raise TypeError(f"endpoint sources must be a positive integer, not {sources!r}")
        if lanes not in (1, 2):
            raise TypeError(f"endpoint lanes must be 1 or 2, not {lanes!r}")
        self._layout = layout
        self._sources = sources
        self._count_bits = count_bits
        self._lanes = lanes
        super().__init__({
            "i": In(stream.Signature(layout)).array(sources),
            "o": Out(stream.Signature(lanes_layout(layout, lanes))),
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
        chosen = self._select(m, grant, "chosen")

        counts_match = 1
        for s in range(n):
            counts_match = counts_match & (received[s] == expected[s])
        round_complete = arrived.all() & counts_match

        # The second lane: the next source after ``grant`` whose head is an update.
        second_taken = Signal()
        if self._lanes == 2:
            eligible2 = Signal(n)
            for s in range(n):
                m.d.comb += eligible2[s].eq(eligible[s] & (grant != s) & ~self.i[s].payload.barrier)
            grant2, granted2 = round_robin_grant(m, eligible2, grant)
            chosen2 = self._select(m, grant2, "chosen2")
            lane0, lane1 = self.o.payload.lanes[0], self.o.payload.lanes[1]
        else:
            lane0 = self.o.payload

        fire = Signal()
        with m.If(~terminated):
            with m.If(round_complete):
                with m.If(anything):
                    m.d.comb += [self.o.valid.eq(1), lane0.barrier.eq(1)]
                    if self._lanes == 2:
                        m.d.comb += self.o.payload.valid.eq(1)
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
                    m.d.comb += [self.o.valid.eq(1), lane0.eq(chosen), fire.eq(self.o.ready)]
                    if self._lanes == 2:
                        m.d.comb += [lane1.eq(chosen2), self.o.payload.valid.eq(Cat(1, granted2)),
                                     second_taken.eq(granted2 & self.o.ready)]
                with m.If(fire):
                    m.d.sync += last.eq(grant)
                if self._lanes == 2:
                    with m.If(second_taken):
                        m.d.sync += last.eq(grant2)
        for s in range(n):
            update_taken = fire & ~chosen.barrier & (grant == s)
            ready = fire & (grant == s)
            if self._lanes == 2:
                update_taken = update_taken | (second_taken & (grant2 == s))
                ready = ready | (second_taken & (grant2 == s))
            with m.If(update_taken):
                m.d.sync += received[s].eq(received[s] + 1)
            m.d.comb += self.i[s].ready.eq(ready)
        m.d.comb += [
            self.terminated.eq(terminated),
            self.waiting.eq(~terminated & ~round_complete & ~granted),
        ]
        return m

    def _select(self, m, grant, name):
        """The payload of input ``grant``."""
        chosen = Signal(self._layout, name=name)
        for s in range(self._sources):
            with m.If(grant == s):
                m.d.comb += chosen.eq(self.i[s].payload)
        return chosen

