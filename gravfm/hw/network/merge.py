"""Merge the local PEs' streams onto one outgoing link, one superstep at a time.

The paper sequentializes the virtual channels on inter-FPGA links: the outgoing endpoint
takes updates of round ``r`` from every local source (round-robin), forwards each source's
round-``r`` barrier too, and moves to round ``r+1`` only when all local sources have sent their
round-``r`` barrier. A source that is a round ahead waits behind its barrier.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..skid_buffer import SkidBuffer

__all__ = ["RoundMerger", "round_robin_grant", "round_robin_two"]


def round_robin_grant(m, eligible, last):
    """Combinational round robin: the first eligible index after ``last``; returns (grant, granted)."""
    return _first_eligible_after(m, eligible, last, candidates=len(eligible))


def round_robin_two(m, eligible, start):
    """The first two eligible indices after ``start`` (``start`` itself last):
    (grant, granted, second, second_granted).

    ``second`` is the first eligible index after ``grant``, but it is not chosen after ``grant``:
    it is the first eligible index with another eligible one before it in ``start``'s order, so
    both choices run beside each other from the registered ``start`` (one priority chain each),
    not one behind the other.
    """
    n = len(eligible)
    grant, granted = round_robin_grant(m, eligible, start)
    second, second_granted = Signal(range(max(n, 2))), Signal()
    with m.Switch(start):
        for first in range(n):
            with m.Case(first):
                order = [(first + 1 + k) % n for k in range(n)]
                seen = eligible[order[0]]        # an eligible index earlier in the order
                for position, s in enumerate(order[1:]):
                    with (m.If if position == 0 else m.Elif)(eligible[s] & seen):
                        m.d.comb += [second.eq(s), second_granted.eq(1)]
                    seen = seen | eligible[s]
    return grant, granted, second, second_granted


def _first_eligible_after(m, eligible, start, *, candidates):
    """(grant, granted): the first eligible of the ``candidates`` indices after ``start``, in order
    (``len(eligible)`` of them wrap round to ``start`` itself), one priority chain per ``start``."""
    n = len(eligible)
    grant = Signal(range(max(n, 2)))
    granted = Signal()
    with m.Switch(start):
        for first in range(n):
            with m.Case(first):
                for position, s in enumerate((first + 1 + k) % n for k in range(candidates)):
                    with (m.If if position == 0 else m.Elif)(eligible[s]):
                        m.d.comb += [grant.eq(s), granted.eq(1)]
    return grant, granted


class RoundMerger(wiring.Component):
    """Merge ``sources`` in-order streams, one round at a time, barriers included.

    For timing every source enters through a :class:`SkidBuffer` and the output leaves through
    one (two cycles of latency, one item per cycle): the round robin then runs between
    flip-flops, and nothing combinational reaches back from it or from the link sender into a
    source's ``ready`` (a link FIFO's read enable, in front of block RAM).

    Parameters
    ----------
    layout : StructLayout
        Network update layout (must have a ``barrier`` field).
    sources : int

    Ports
    -----
    i : In(array of ``sources`` streams)
        ``ready`` registered.
    o : Out(stream)
        Round r's updates and every source's round-r barrier, then round r+1; registered.
    """

    def __init__(self, *, layout, sources):
        if not isinstance(sources, int) or sources < 1:
            raise TypeError(f"merger sources must be a positive integer, not {sources!r}")
        self._layout = layout
        self._sources = sources
        super().__init__({
            "i": In(stream.Signature(layout)).array(sources),
            "o": Out(stream.Signature(layout)),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._sources
        heads = []
        for s in range(n):
            m.submodules[f"in{s}"] = entry = SkidBuffer(shape=self._layout)
            wiring.connect(m, wiring.flipped(self.i[s]), entry.i)
            heads.append(entry.o)
        m.submodules.out = out = SkidBuffer(shape=self._layout)
        wiring.connect(m, out.o, wiring.flipped(self.o))
        arrived = Signal(n)
        last = Signal(range(max(n, 2)))
        eligible = Signal(n)
        for s in range(n):
            m.d.comb += eligible[s].eq(heads[s].valid & ~arrived[s])
        grant, granted = round_robin_grant(m, eligible, last)
        for s in range(n):
            with m.If(grant == s):
                m.d.comb += out.i.payload.eq(heads[s].payload)
            m.d.comb += heads[s].ready.eq(granted & (grant == s) & out.i.ready)
        m.d.comb += out.i.valid.eq(granted)
        with m.If(arrived.all()):
            m.d.sync += arrived.eq(0)
        with m.Elif(granted & out.i.ready):
            m.d.sync += last.eq(grant)
            with m.If(out.i.payload.barrier):
                m.d.sync += arrived.eq(arrived | (1 << grant))
        return m
