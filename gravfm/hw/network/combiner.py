"""Merge round-sorted streams into one, each round's barriers combined into one.

Every input is *round-sorted*: its round-``r`` messages, then one barrier for round ``r``, then
round ``r+1``. The output is round-sorted too: the round-``r`` messages of all inputs
(round-robin), then ONE barrier, once every input's round-``r`` barrier is in; its ``sent_any``
is set if any of theirs was. A barrier is taken at once, needing no output slot; an input whose
barrier is in waits until the round's barrier has left (its next round may not overtake it).

This is what a switch of :class:`~gravfm.hw.network.multistage.MultistageNetwork` does at each
output, and in the last stage (``final``) the destination's floating barrier: there a round
whose barriers all lack ``sent_any`` is the silent round, and the combiner raises
``terminated`` instead of sending a barrier (the :class:`~gravfm.hw.network.Endpoint`'s rule,
without its per-source counts: the inputs' order makes them unnecessary).
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..skid_buffer import SkidBuffer
from ..unused import refusal
from .merge import round_robin_grant

__all__ = ["RoundCombiner"]


class RoundCombiner(wiring.Component):
    """Round-robin merge of ``sources`` round-sorted streams, one combined barrier per round.

    The output leaves through a :class:`~gravfm.hw.SkidBuffer`: ``o.valid``, ``o.payload`` and
    the register in front of each ``i.ready`` path are flip-flops, and the arbitration runs from
    the inputs' registered heads to it (one item per cycle, one cycle of latency).

    Parameters
    ----------
    layout : StructLayout
        Message layout with ``barrier`` and ``sent_any`` fields.
    sources : int
        Inputs.
    final : bool
        The destination's combiner: a silent round terminates, and the barrier sent for a round
        is the bare barrier word (``barrier`` set, every other field zero) as the
        :class:`~gravfm.hw.network.Endpoint` sends it.

    Ports
    -----
    i : In(array of ``sources`` streams)
        Round-sorted messages and barriers (a barrier's ``sent_any``: its source sent something
        in the round). ``ready`` depends on the input's own head and on flip-flops.
    o : Out(stream)
        Round-sorted; a barrier's ``sent_any`` is the OR of the round's (unless ``final``).
    terminated : Out(1)
        ``final`` only: a round ended with no ``sent_any`` and everything before it has left
        (kept; nothing is taken after it).
    waiting : Out(1)
        ``final`` only: the round is open and no input offers anything of it (barrier wait).
    """

    def __init__(self, *, layout, sources, final=False):
        if not isinstance(sources, int) or sources < 1:
            raise refusal(self, f"combiner sources must be a positive integer, not {sources!r}")
        self._layout, self._sources, self._final = layout, sources, final
        members = {"i": In(stream.Signature(layout)).array(sources), "o": Out(stream.Signature(layout))}
        if final:
            members.update(terminated=Out(1), waiting=Out(1))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        n = self._sources
        m.submodules.out = out = SkidBuffer(shape=self._layout)
        wiring.connect(m, out.o, wiring.flipped(self.o))
        arrived = Signal(n)                       # this round's barrier taken, per input
        sent_any = Signal()                       # ... one of them had sent_any
        terminated = Signal()
        last = Signal(range(max(n, 2)))
        pending, eligible, absorb = Signal(n), Signal(n), Signal(n)
        for s, port in enumerate(self.i):
            m.d.comb += [pending[s].eq(port.valid & ~arrived[s]),
                         eligible[s].eq(pending[s] & ~port.payload.barrier),
                         absorb[s].eq(pending[s] & port.payload.barrier & ~terminated)]
        grant, granted = round_robin_grant(m, eligible, last)
        # The round's barrier leaves in the cycle its last input barrier is taken: a cycle per
        # stage per superstep. Then no input is eligible (each has its barrier in or at its head).
        complete = (arrived | absorb).all()
        round_sent = sent_any | (absorb & Cat(port.payload.sent_any for port in self.i)).any()
        barrier_word = Signal(self._layout)
        m.d.comb += barrier_word.barrier.eq(1)
        if not self._final:
            m.d.comb += barrier_word.sent_any.eq(round_sent)
        chosen = Signal(self._layout)
        for s, port in enumerate(self.i):
            with m.If(grant == s):
                m.d.comb += chosen.eq(port.payload)
            m.d.comb += port.ready.eq(absorb[s] | (~terminated & granted & (grant == s) & out.i.ready))
        silent = complete & ~round_sent
        emit = complete & ~silent if self._final else complete
        m.d.comb += [out.i.valid.eq(~terminated & (emit | granted)),
                     out.i.payload.eq(Mux(complete, barrier_word.as_value(), chosen.as_value()))]
        with m.If(complete & out.i.valid & out.i.ready):
            m.d.sync += [arrived.eq(0), sent_any.eq(0)]
        with m.Else():
            m.d.sync += [arrived.eq(arrived | absorb), sent_any.eq(round_sent)]
        if self._final:
            # Only once the output is empty: the previous round's barrier may still wait there.
            with m.If(silent & ~self.o.valid):
                m.d.sync += terminated.eq(1)
        with m.If(granted & out.i.ready):
            m.d.sync += last.eq(grant)
        if self._final:
            m.d.comb += [self.terminated.eq(terminated),
                         self.waiting.eq(~terminated & ~arrived.all() & ~pending.any())]
        return m

