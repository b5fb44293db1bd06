"""Several update lanes in one link: each lane's link word side by side in one wider word.

A hybrid FPGA of many PEs sends each peer two independent round-sorted streams (lane ``l``: the
updates of its PEs ``l`` mod 2, each lane its own :class:`~gravfm.hw.link.LinkSender` with its
own barrier and count), because one link end takes only one update per cycle. The link carries
them in one word (:func:`lanes_word_layout`: a slot per lane and which slots are full), so the
link, its model and its check stay one per peer; the receiving side splits the word again, one
:class:`~gravfm.hw.link.LinkReceiver` per lane. Lanes never wait for each other on the way in
(a word leaves with whatever lanes offer), and on the way out a full slot leaves as soon as its
receiver takes it (a slot already taken is masked until the word has gone).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["lanes_word_layout", "LanePacker", "LaneSplitter"]


def lanes_word_layout(word_layout, lanes):
    """A link word of ``lanes`` slots of ``word_layout`` (lane 0 at the bottom) and a ``valid`` bit
    per slot."""
    return data.StructLayout({"lanes": data.ArrayLayout(word_layout, lanes), "valid": lanes})


class LanePacker(wiring.Component):
    """Put the words the ``lanes`` inputs offer into one word (every input taken together).

    Ports
    -----
    i : In(array of ``lanes`` streams of ``word_layout``)
    o : Out(stream of :func:`lanes_word_layout`)
    """

    def __init__(self, *, word_layout, lanes):
        self._lanes = lanes
        super().__init__({"i": In(stream.Signature(word_layout)).array(lanes),
                          "o": Out(stream.Signature(lanes_word_layout(word_layout, lanes)))})

    def elaborate(self, platform):
        m = Module()
        for lane, source in enumerate(self.i):
            # An empty slot is zero: nothing of a stale word reaches the link (a barrier flag
            # there would be counted).
            m.d.comb += [self.o.payload.lanes[lane].eq(Mux(source.valid, source.payload.as_value(), 0)),
                         self.o.payload.valid[lane].eq(source.valid),
                         source.ready.eq(self.o.ready)]
        m.d.comb += self.o.valid.eq(self.o.payload.valid.any())
        return m


class LaneSplitter(wiring.Component):
    """Split a word of :func:`lanes_word_layout` into its lanes: each full slot to its output.

    Ports
    -----
    i : In(stream of :func:`lanes_word_layout`)
    o : Out(array of ``lanes`` streams of ``word_layout``)
    """

    def __init__(self, *, word_layout, lanes):
        self._lanes = lanes
        super().__init__({"i": In(stream.Signature(lanes_word_layout(word_layout, lanes))),
                          "o": Out(stream.Signature(word_layout)).array(lanes)})

    def elaborate(self, platform):
        m = Module()
        taken = Signal(self._lanes)          # slots of the current word already delivered
        done = Signal(self._lanes)           # ... or delivered now, or empty
        for lane, out in enumerate(self.o):
            full = self.i.payload.valid[lane] & ~taken[lane]
            m.d.comb += [out.payload.eq(self.i.payload.lanes[lane]),
                         out.valid.eq(self.i.valid & full),
                         done[lane].eq(~full | out.ready)]
        m.d.comb += self.i.ready.eq(done.all())
        with m.If(self.i.valid):
            with m.If(done.all()):
                m.d.sync += taken.eq(0)
            with m.Else():
                for lane, out in enumerate(self.o):
                    with m.If(out.valid & out.ready):
                        m.d.sync += taken[lane].eq(1)
        return m
