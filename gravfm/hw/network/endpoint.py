"""Receiving endpoint of a PE: merges its per-source FIFOs and runs the floating barrier.

Each source's FIFO delivers that source's updates in order, its round-``r`` barrier behind them,
then round ``r+1``. The arbiter picks round-robin among the sources whose head is an update of
the current round; a source whose head is its barrier of the round is taken at once, beside the
grant and beside the other sources' barriers (the barriers of a superstep often arrive together:
taken one per cycle they cost up to a cycle per source per superstep). A source that is a round
ahead simply waits behind its barrier (a virtual channel per round, without extra buffers).
Barriers are not forwarded: the endpoint records each source's ``count`` and ``sent_any`` and
counts the updates it received.
When every source's barrier is in and the counts match, it sends ONE barrier to its PE and
starts the next round — unless no source sent anything, in which case it raises ``terminated``
instead (every PE detects termination on its own, as in the paper).

With two lanes the endpoint hands over up to two updates per cycle, from two different sources
(the second grant is the next eligible source after the first whose head is an update, not a
barrier): a PE whose edge lists for most senders are empty can then keep pace with an FPGA's
whole update stream. The lanes are taken independently, each with its own valid bit: the second
source's ``ready`` then depends on its own head and on flip-flops only, not on whether the first
source offers an update (on FPGA 0 of 4 x 4 PEs that ran from one FIFO's output through the
grant multiplexer into another FIFO's read enable: 76 MHz on ECP5).

For timing the grants and the round's completion are registers, decided a cycle ahead; the
output payload is a multiplexer selected by flip-flops.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..layouts import lanes_layout
from .merge import round_robin_grant, round_robin_two

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
    forward_silent : bool
        Send every round's barrier, its ``sent_any`` the OR of the sources', and never terminate
        (the hybrid's update endpoints: they see only some of the sources, so termination is
        decided behind them, by the message network).

    Ports
    -----
    i : In(array of ``sources`` streams)
        One in-order stream per source.
    o : Out(stream)
        Updates, then one barrier per round. With one lane the payload is ``layout``; with two
        it is ``{lanes: [layout, layout], valid}`` (either lane or both valid when ``o.valid``;
        the barrier alone in lane 0) — :func:`lanes_layout`.
    terminated : Out(1)
        Set (and kept) once a round ended with no update from any source (never with
        ``forward_silent``).
    waiting : Out(1)
        The round is not complete and no source has anything to deliver (barrier wait).
    """

    def __init__(self, *, layout, sources, count_bits, lanes=1, forward_silent=False):
        if not isinstance(sources, int) or sources < 1:
            raise TypeError(f"endpoint sources must be a positive integer, not {sources!r}")
        if lanes not in (1, 2):
            raise TypeError(f"endpoint lanes must be 1 or 2, not {lanes!r}")
        self._layout = layout
        self._sources = sources
        self._count_bits = count_bits
        self._lanes = lanes
        self._forward_silent = forward_silent
        super().__init__({
            "i": In(stream.Signature(layout)).array(sources),
            "o": Out(stream.Signature(lanes_layout(layout, lanes))),
            "terminated": Out(1),
            "waiting": Out(1),
        })

    def _grants(self, m, eligible):
        """The registered grants: ``(grant, granted, grant2, second, granted2)``, the last three
        None with one lane (``second``: a second source was chosen for ``grant2``).

        The grant is a register, chosen a cycle ahead: round robin after the current grant among
        the sources eligible now. The priority logic then ends at flip-flops instead of running on
        through the payload multiplexer into the PE's input buffer; a source that turns eligible
        while the grant points elsewhere waits a cycle for it. The second lane's: the next source
        after the first grant with an update at its head, chosen in the same cycle ahead beside
        the first (not behind it: both priority chains run from ``grant``), so two lanes rotate
        together.
        """
        n = self._sources
        grant = Signal(range(max(n, 2)))
        if self._lanes == 2:
            next_grant, next_granted, next_grant2, next_granted2 = round_robin_two(m, eligible, grant)
        else:
            next_grant, next_granted = round_robin_grant(m, eligible, grant)
        with m.If(next_granted):
            m.d.sync += grant.eq(next_grant)
        granted = Signal()
        m.d.comb += granted.eq(eligible.bit_select(grant, 1))
        if self._lanes == 1:
            return grant, granted, None, None, None
        grant2, second, granted2 = Signal(range(max(n, 2))), Signal(), Signal()
        m.d.sync += [grant2.eq(next_grant2), second.eq(next_granted2)]
        m.d.comb += granted2.eq(second & eligible.bit_select(grant2, 1))
        return grant, granted, grant2, second, granted2

    def elaborate(self, platform):
        m = Module()
        n = self._sources
        arrived = Signal(n)                       # barrier of this round received, per source
        received = [Signal(self._count_bits, name=f"received{s}") for s in range(n)]
        expected = [Signal(self._count_bits, name=f"expected{s}") for s in range(n)]
        anything = Signal()
        terminated = Signal()

        pending = Signal(n)                       # has something of this round
        eligible = Signal(n)                      # ... and it is an update (for the arbiter)
        for s in range(n):
            m.d.comb += [pending[s].eq(self.i[s].valid & ~arrived[s]),
                         eligible[s].eq(pending[s] & ~self.i[s].payload.barrier)]

        grant, granted, grant2, second, granted2 = self._grants(m, eligible)
        chosen = self._select(m, grant, "chosen")

        taking, complete_now, round_complete, barrier_sent = self._round_completion(
            m, arrived=arrived, received=received, expected=expected, anything=anything, terminated=terminated)

        if self._lanes == 2:
            chosen2 = self._select(m, grant2, "chosen2")
            lane0, lane1 = self.o.payload.lanes[0], self.o.payload.lanes[1]
        else:
            lane0 = self.o.payload

        # The payload does not wait for the grant decision (``granted`` comes from ``arrived``
        # and the inputs' valid): it is the chosen heads, or the barrier when the round is
        # complete, selected by flip-flops; only ``valid`` depends on the decision.
        barrier_word = self._barrier_word(m, anything)
        m.d.comb += [barrier_word.barrier.eq(1),
                     lane0.eq(Mux(round_complete, barrier_word.as_value(), chosen.as_value()))]
        if self._lanes == 2:
            m.d.comb += lane1.eq(chosen2)
        open_round = ~terminated & ~round_complete
        if self._lanes == 2:
            # Lane 1 does not wait for lane 0: its source's ready comes from its own head.
            m.d.comb += self.o.payload.valid[1].eq(open_round & granted2)
        with m.If(~terminated):
            with m.If(round_complete):
                with m.If(1 if self._forward_silent else anything):
                    m.d.comb += [self.o.valid.eq(1), barrier_sent.eq(self.o.ready)]
                    if self._lanes == 2:
                        m.d.comb += self.o.payload.valid.eq(1)
                    with m.If(self.o.ready):
                        m.d.sync += [arrived.eq(0), anything.eq(0)]
                        m.d.sync += [r.eq(0) for r in received]
            with m.Elif(granted):
                m.d.comb += self.o.valid.eq(1)
                if self._lanes == 2:
                    m.d.comb += self.o.payload.valid[0].eq(1)
            if self._lanes == 2:
                with m.If(open_round & granted2):
                    m.d.comb += self.o.valid.eq(1)
        # A source's ``ready`` does not wait for its own ``valid``: the granted source may take
        # its head whenever the decision would take it, valid or not (nothing moves without
        # valid). Its FIFO's read enable then comes from flip-flops through one LUT instead of
        # from every source's valid through the grant multiplexer, which on a 4-PE ECP5 top
        # ran across the chip into the FIFO's output register enable.
        # The second lane likewise: its source's ready comes from the same flip-flops and its own
        # head, never from the first source's valid.
        # A barrier needs no grant: it only records its source's count.
        for s in range(n):
            head, head_barrier = self.i[s].payload, self.i[s].payload.barrier
            mine = open_round & ~arrived[s]
            ready = mine & (head_barrier | ((grant == s) & self.o.ready))
            if self._lanes == 2:
                ready = ready | (mine & second & (grant2 == s) & ~head_barrier & self.o.ready)
            # ``ready & head_barrier`` without ``round_complete``: a complete round has every
            # barrier in, so no source is ``mine`` then anyway, and the round's completion does
            # not run through its own next value (FPGA 0 of 2 x 4, 16cc7ac, router2 seed 1:
            # 104.6 MHz, that loop through the count compare and back).
            m.d.comb += taking[s].eq(self.i[s].valid & ~terminated & ~arrived[s] & head_barrier)
            with m.If(self.i[s].valid & ready):
                with m.If(head_barrier):
                    m.d.sync += [arrived[s].eq(1), expected[s].eq(head.count)]
                    with m.If(head.sent_any):
                        m.d.sync += anything.eq(1)
                with m.Else():
                    m.d.sync += received[s].eq(received[s] + 1)
            m.d.comb += self.i[s].ready.eq(ready)
        m.d.comb += [
            self.terminated.eq(terminated),
            self.waiting.eq(~terminated & ~complete_now & ~pending.any()),
        ]
        return m

    def _round_completion(self, m, *, arrived, received, expected, anything, terminated):
        """Whether the round is complete (every source's barrier in, every count reached), and
        termination. Returns ``(taking, complete_now, round_complete, barrier_sent)``: per source,
        its barrier is taken this cycle (driven by the caller); complete on the recorded barriers;
        the registered flag that sends the barrier; the barrier leaves (driven by the caller)."""
        n = self._sources
        # Registered too: the count compares would otherwise gate the output. The flag is set
        # in the cycle the round's last barrier is taken: a source's barrier follows its updates,
        # so its count can be checked as it arrives (``received`` does not move while the
        # barrier is the head) and the barrier leaves the next cycle. The cycle it leaves
        # clears the flag, since ``arrived`` and the counts are cleared only then. Termination
        # (one flip-flop) and ``waiting`` take the condition on the recorded barriers.
        taking = Signal(n)                        # a source's barrier is taken this cycle
        matched = Signal(n)                       # a source's recorded count is reached
        done_next = Signal(n)                     # ... or its barrier, taken now, says it is
        for s in range(n):
            m.d.comb += [matched[s].eq(received[s] == expected[s]),
                         done_next[s].eq((arrived[s] & matched[s])
                                         | (taking[s] & (received[s] == self.i[s].payload.count)))]
        complete_next = done_next.all()
        complete_now = Signal()
        m.d.comb += complete_now.eq(arrived.all() & matched.all())
        round_complete = Signal()
        barrier_sent = Signal()
        m.d.sync += round_complete.eq(complete_next & ~barrier_sent)
        if not self._forward_silent:
            with m.If(complete_now & ~anything):
                m.d.sync += terminated.eq(1)
        return taking, complete_now, round_complete, barrier_sent

    def _barrier_word(self, m, anything):
        """The round's barrier word; with ``forward_silent`` it carries the sources' ``sent_any``."""
        barrier_word = Signal(self._layout, name="barrier_word")
        if self._forward_silent:
            m.d.comb += barrier_word.sent_any.eq(anything)
        return barrier_word

    def _select(self, m, grant, name):
        """The payload of input ``grant``."""
        chosen = Signal(self._layout, name=name)
        for s in range(self._sources):
            with m.If(grant == s):
                m.d.comb += chosen.eq(self.i[s].payload)
        return chosen

