"""The output queue of a pipeline that never stalls: :class:`LatencyQueue`."""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .stream_fifo import StreamFIFO
from .unused import refusal

__all__ = ["LatencyQueue"]


class LatencyQueue(wiring.Component):
    """A FIFO behind a pipeline of fixed ``latency`` whose stages advance every cycle, and the
    credit that keeps it from overflowing: ``room`` says the pipeline may take an item.

    A pipeline that freezes when its consumer stalls fans the consumer's ``ready`` out to the
    enable of every stage register (PageRank's apply chain: 27 stages, ~3,000 flip-flops; the
    4-PE top's path at 67.8 MHz, 1bfbb82, ran from the update's ``valid`` through that enable).
    Free-running, the stages need no enable, and the consumer's ``ready`` reaches only this
    FIFO. ``room`` is a register: it is high while the FIFO, as it stood a cycle ago, holds few
    enough items that every item on its way through the pipeline, plus the one taken now, still
    fits (``depth = latency + SLACK``).

    Parameters
    ----------
    shape : ShapeLike
        Payload layout.
    latency : int
        Cycles from the pipeline's input to its output (the most items on their way).

    Ports
    -----
    i : In(stream.Signature(shape))
        The pipeline's output; never refused while the pipeline takes items only with ``room``
        (``i.ready`` is 1).
    o : Out(stream.Signature(shape))
        The items in order, one cycle after they enter at the earliest (the head is a register).
    room : Out(1)
        The pipeline may take an item this cycle.
    """

    #: Free slots beyond the pipeline's latency: the item taken now, ``room``'s cycle of delay,
    #: and four for the items a consumer taking one per cycle leaves stored (so it does not run dry).
    SLACK = 6

    def __init__(self, *, shape, latency):
        if not isinstance(latency, int) or latency < 0:
            raise refusal(self, f"LatencyQueue latency must be a non-negative integer, not {latency!r}")
        self._shape = shape
        self._latency = latency
        self.depth = latency + self.SLACK
        super().__init__({"i": In(stream.Signature(shape)), "o": Out(stream.Signature(shape)), "room": Out(1)})

    def elaborate(self, platform):
        m = Module()
        # LUT RAM read into the head register (bypass): the consumer's logic starts at a
        # flip-flop, and a block RAM's late output stays out of its path.
        m.submodules.fifo = fifo = StreamFIFO(shape=self._shape, depth=self.depth, ram_style="distributed",
                                              bypass=True)
        wiring.connect(m, wiring.flipped(self.i), fifo.i)
        wiring.connect(m, fifo.o, wiring.flipped(self.o))
        # At most latency + 1 items arrive beyond the level a cycle ago, plus the one it grew by since.
        limit = self.depth - self._latency - 2
        m.d.sync += self.room.eq(fifo.level <= limit)
        return m
