"""Merge the local PEs' streams onto one outgoing link, one superstep at a time.

The paper sequentializes the virtual channels on inter-FPGA links: the outgoing endpoint
takes updates of round ``r`` from every local source (round-robin), forwards each source's
round-``r`` barrier too, and moves to round ``r+1`` only when all local sources have sent their
round-``r`` barrier. A source that is a round ahead waits behind its barrier.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..skid_buffer import SkidBuffer

__all__ = ["RoundMerger", "round_robin_grant", "round_robin_two"]


def round_robin_grant(m, eligible, last):
    """Combinational round robin: the first eligible index after ``last``; returns (grant, granted)."""
    return _first_eligible_after(m, eligible, last, candidates=len(eligible))


#: From this many sources on, :func:`round_robin_two` chooses through a window of the doubled
#: request vector (size linear in the sources) instead of a priority chain per start (size
#: quadratic: a 64-source GraVF-M endpoint took 30 s to elaborate instead of 1). The chains are
#: shallower where it matters for timing (ECP5 tops of 5-12 sources: 5-7 LUT levels, the window
#: 5-9).
WINDOW_SOURCES = 17


def round_robin_two(m, eligible, start, *, window=None):
    """The first two eligible indices after ``start`` (``start`` itself last):
    (grant, granted, second, second_granted).

    ``second`` is the first eligible index after ``grant``, but it is not chosen after ``grant``:
    both choices run beside each other from the registered ``start``. ``window`` (default: from
    :data:`WINDOW_SOURCES` sources on) chooses the form; both give the same answers.
    """
    n = len(eligible)
    if window if window is not None else n >= WINDOW_SOURCES:
        return _two_through_a_window(m, eligible, start)
    grant, granted = round_robin_grant(m, eligible, start)
    second, second_granted = Signal(range(max(n, 2))), Signal()
    with m.Switch(start):
        for first in range(n):
            with m.Case(first):
                order = [(first + 1 + k) % n for k in range(n)]
                # seen[k]: an index among the first k + 1 of the order is eligible (a signal per
                # prefix: one growing expression made elaboration cubic in n)
                seen = Signal(n, name=f"seen_after_{first}")
                m.d.comb += seen[0].eq(eligible[order[0]])
                for k in range(1, n):
                    m.d.comb += seen[k].eq(seen[k - 1] | eligible[order[k]])
                for position, s in enumerate(order[1:], start=1):
                    with (m.If if position == 1 else m.Elif)(eligible[s] & seen[position - 1]):
                        m.d.comb += [second.eq(s), second_granted.eq(1)]
    return grant, granted, second, second_granted


def _two_through_a_window(m, eligible, start):
    """The two choices of :func:`round_robin_two` from the doubled request vector: its bits
    ``start + 1 .. start + n`` are the order after ``start``; the first set bit is the grant, the
    first set bit of the window without its lowest (``w & (w - 1)``) the second."""
    n = len(eligible)
    first = Signal(range(max(n, 2))), Signal()
    second = Signal(range(max(n, 2))), Signal()
    doubled = Cat(eligible, eligible)
    window, rest = Signal(2 * n), Signal(2 * n)
    m.d.comb += [window.eq(Cat(doubled[i] & (start < i) & (start + n >= i) for i in range(2 * n))),
                 rest.eq(window & (window - 1))]
    for bits, (index, found) in ((window, first), (rest, second)):
        for i in range(2 * n):
            with (m.If if i == 0 else m.Elif)(bits[i]):
                m.d.comb += [index.eq(i % n), found.eq(1)]
    return (*first, *second)


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
