"""A buffered switch of the multistage message network: one FIFO per (input, output).

Each input's router offers a message to the crosspoint FIFO of the output its routing digit
names (bits ``low_bit ..`` of the message's ``neighbor``, a hardware id) and copies a barrier
into the crosspoint FIFO of every output (:func:`~gravfm.hw.network.broadcast.distribute`);
each output's :class:`~gravfm.hw.network.combiner.RoundCombiner` merges its ``radix``
crosspoint FIFOs round by round into one barrier per round.

Why a FIFO per crosspoint rather than one per output: a message waiting for a busy output then
never holds up the messages behind it that go to the others (head-of-line blocking). With one
FIFO per output, fed by the previous stage's output FIFO, a cycle-level model written while
choosing (not kept) delivered 0.44-0.51 messages per port per cycle under uniform random
traffic at 16 and 64 ports (radix 2 and 4, two-entry buffers); with crosspoint FIFOs of depth 4,
0.84-0.87 (``benchmarks/bench_msgnet.py``'s model of this design).
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..stream_fifo import StreamFIFO
from ..unused import refusal
from .broadcast import distribute
from .combiner import RoundCombiner

__all__ = ["RoundSwitch"]


class RoundSwitch(wiring.Component):
    """``radix`` x ``radix`` switch: routing by one digit of the destination, barriers combined.

    Parameters
    ----------
    layout : StructLayout
        Message layout with ``neighbor`` (the destination's hardware id), ``barrier`` and
        ``sent_any`` fields.
    radix : int
        Inputs and outputs (a power of two).
    depth : int
        Depth of each crosspoint FIFO (LUT RAM, at least 2: one message per cycle with a
        registered ``ready``).
    low_bit : int
        Lowest bit of the routing digit in ``neighbor`` (``log2(radix)`` bits).
    final : bool
        Last stage: the outputs are destinations (:class:`RoundCombiner` ``final``).

    Ports
    -----
    i : In(array of ``radix`` streams)
        Round-sorted messages and barriers; ``ready`` is the crosspoint FIFOs' (flip-flops)
        selected by the head's digit.
    o : Out(array of ``radix`` streams)
        Round-sorted, one barrier per round; registered.
    terminated, waiting : Out(radix)
        ``final`` only: per output, as :class:`RoundCombiner`.
    """

    def __init__(self, *, layout, radix, depth, low_bit, final=False):
        if not isinstance(radix, int) or radix < 1 or radix & (radix - 1):
            raise refusal(self, f"switch radix must be a power of two, not {radix!r}")
        if not isinstance(depth, int) or depth < 2:
            raise refusal(self, f"crosspoint FIFO depth must be an integer >= 2, not {depth!r}")
        self._layout, self._radix, self._depth = layout, radix, depth
        self._low_bit, self._final = low_bit, final
        members = {"i": In(stream.Signature(layout)).array(radix), "o": Out(stream.Signature(layout)).array(radix)}
        if final:
            members.update(terminated=Out(radix), waiting=Out(radix))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        k, bits = self._radix, self._radix.bit_length() - 1
        combiners = []
        for u in range(k):
            m.submodules[f"combine{u}"] = combiner = RoundCombiner(layout=self._layout, sources=k, final=self._final)
            wiring.connect(m, combiner.o, wiring.flipped(self.o[u]))
            if self._final:
                m.d.comb += [self.terminated[u].eq(combiner.terminated), self.waiting[u].eq(combiner.waiting)]
            combiners.append(combiner)
        for t, port in enumerate(self.i):
            crosspoints = []
            for u in range(k):
                # LUT RAM read through a register (bypass: one cycle into an empty FIFO): the
                # combiner's arbitration starts at flip-flops, and ``ready`` upstream is one too.
                fifo = StreamFIFO(shape=self._layout, depth=self._depth, ram_style="distributed", bypass=True)
                m.submodules[f"crosspoint{t}_{u}"] = fifo
                wiring.connect(m, fifo.o, combiners[u].i[t])
                crosspoints.append(fifo.i)
            digit = port.payload.neighbor[self._low_bit:self._low_bit + bits]
            target = Signal(k, name=f"target{t}")
            m.d.comb += target.eq(Cat(digit == u for u in range(k)))
            distribute(m, port, crosspoints, copy=port.payload.barrier, target=target)
        return m
