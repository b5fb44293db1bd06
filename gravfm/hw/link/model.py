"""Simulation model of one direction of an inter-FPGA link (not synthesizable hardware of a board).

::

    i ─▶ bandwidth gate ─▶ in-flight FIFO (latency) ─▶ reorder window ─▶ random stalls ─▶ o

* Bandwidth: a credit counter (fixed point, :data:`~.config.FRACTION_BITS` fraction bits)
  gains ``bits_per_cycle`` every cycle; an item may enter when the credit is not negative and
  costs ``item_bits``. The credit saturates at one cycle's worth, so idle time is not banked.
* Latency: every item carries the cycle at which it may leave; the FIFO holds the items in flight.
* Reordering: blocks of up to ``reorder_window`` items (a block closes when full or when the
  input pauses) leave either in order or reversed, chosen by a pseudo-random bit; an item thus
  overtakes at most ``reorder_window - 1`` others.
* Stalls: in a cycle where an 8-bit pseudo-random draw is below the threshold, nothing leaves.
* Faults (only built when configured): the item about to leave is lost, delivered twice or
  delivered with one bit flipped, as a 16-bit draw of a second generator (xorshift32) falls in
  each rate's share; a dead link takes its items and delivers none.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Shape, Signal, Value, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..stream_fifo import StreamFIFO
from .config import FRACTION_BITS, RATE_BITS, LinkConfig, credit_bits, fault_seed, mixed_seed
from ..unused import silence_unused

__all__ = ["LinkModel", "lfsr_step", "xorshift_step"]

TIME_BITS = 32  # wide enough that an item held at the head for long never looks early again


def lfsr_step(state):
    """Next state of a 16-bit Galois LFSR (taps 16, 14, 13, 11), as an Amaranth expression."""
    feedback = state[0]
    shifted = state >> 1
    return shifted ^ (feedback.replicate(16) & Const(0xB400, 16))


def xorshift_step(state):
    """Next state of a 32-bit xorshift generator (13, 17, 5), as an Amaranth expression."""
    state = state ^ (state << 13)[:32]
    state = state ^ (state >> 17)
    return state ^ (state << 5)[:32]


class LinkModel(wiring.Component):
    """One direction of an FPGA-to-FPGA link.

    Parameters
    ----------
    shape : ShapeLike
        Item layout.
    config : LinkConfig
    item_bits : int
        Bits an item costs on the wire (``m_update`` for GraVF-M).
    seed : int
        Seed of this link's generators (non-zero after mixing).
    dead_after : int, optional
        The link delivers nothing from this many cycles after its first item on (0: from the
        start; None: never).

    Ports
    -----
    i : In(stream)
        Items from the sending FPGA.
    o : Out(stream)
        Items to the receiving FPGA.
    items : Out(64)
        Items carried.
    link_bound : Out(64)
        Cycles an item was waiting at the input for bandwidth credit.
    dropped, duplicated, flipped : Out(64)
        Items lost (a drop, or a dead link), delivered again, delivered with a flipped bit.
    first_fault : Out(TIME_BITS)
        The cycle (counted from reset) of the first of those faults.
    """

    def __init__(self, *, shape, config, item_bits, seed, dead_after=None):
        silence_unused(self)   # no "never used" warning for an object that failed to build
        if not isinstance(config, LinkConfig):
            raise TypeError(f"LinkModel needs a LinkConfig, not {type(config).__name__}")
        if not isinstance(item_bits, int) or item_bits < 1:
            raise TypeError(f"item_bits must be a positive integer, not {item_bits!r}")
        self._shape = shape
        self._config = config
        self._item_bits = item_bits
        self._seed = mixed_seed(seed)
        self._fault_seed = fault_seed(seed)
        self._dead_after = dead_after
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)),
            "items": Out(64),
            "link_bound": Out(64),
            "dropped": Out(64),
            "duplicated": Out(64),
            "flipped": Out(64),
            "first_fault": Out(TIME_BITS),
        })
        silence_unused(self, False)

    def elaborate(self, platform):
        m = Module()
        config = self._config
        flight = data.StructLayout({"item": self._shape, "due": TIME_BITS})
        m.submodules.flight = in_flight = StreamFIFO(shape=flight, depth=config.fifo_depth)
        now = Signal(TIME_BITS)
        m.d.sync += now.eq(now + 1)
        random = Signal(16, init=self._seed)
        m.d.sync += random.eq(lfsr_step(random))

        # Bandwidth gate.
        allowed = self._credit_gate(m)
        m.d.comb += [
            in_flight.i.valid.eq(self.i.valid & allowed),
            in_flight.i.payload.item.eq(self.i.payload),
            in_flight.i.payload.due.eq(now + config.latency_cycles),
            self.i.ready.eq(in_flight.i.ready & allowed),
        ]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += self.items.eq(self.items + 1)
        with m.If(self.i.valid & ~allowed):
            m.d.sync += self.link_bound.eq(self.link_bound + 1)

        # Latency: the head may leave once its due time has come (wrap-around compare).
        arrived = stream.Signature(self._shape).create()
        late = Signal(signed(TIME_BITS))
        m.d.comb += [
            late.eq(now - in_flight.o.payload.due),
            arrived.valid.eq(in_flight.o.valid & (late >= 0)),
            arrived.payload.eq(in_flight.o.payload.item),
            in_flight.o.ready.eq(arrived.ready & (late >= 0)),
        ]
        reordered = self._reorder(m, arrived, random[8]) if config.reorder_window > 1 else arrived

        stalled = Signal()
        if config.stall_threshold:
            m.d.comb += stalled.eq(random[:8] < config.stall_threshold)
        if config.faulty or self._dead_after is not None:
            self._faults(m, reordered, stalled, now)
        else:
            m.d.comb += [
                self.o.valid.eq(reordered.valid & ~stalled),
                self.o.payload.eq(reordered.payload),
                reordered.ready.eq(self.o.ready & ~stalled),
            ]
        return m

    def _faults(self, m, head, stalled, now):
        """The output with faults: ``head`` (not stalled) is lost, repeated or bit-flipped."""
        random = Signal(32, init=self._fault_seed)
        m.d.sync += random.eq(xorshift_step(random))
        draw = random[:RATE_BITS]
        drop, duplicate, flip = self._config.fault_thresholds
        drop_now, duplicate_now, flip_now = (
            (draw >= low) & (draw < low + share) if share else Const(0)
            for low, share in ((0, drop), (drop, duplicate), (drop + duplicate, flip)))
        lose = drop_now | self._dead(m)
        width = Shape.cast(self._shape).width
        flipped = Value.cast(head.payload) ^ Mux(flip_now, self._flip_mask(random[16:], width), 0)
        m.d.comb += [
            self.o.valid.eq(head.valid & ~stalled & ~lose),
            self.o.payload.eq(flipped),
            head.ready.eq(~stalled & (lose | (self.o.ready & ~duplicate_now))),
        ]
        delivered = self.o.valid & self.o.ready
        events = [(self.dropped, head.valid & ~stalled & lose), (self.duplicated, delivered & duplicate_now),
                  (self.flipped, delivered & flip_now)]
        for counter, event in events:
            with m.If(event):
                m.d.sync += counter.eq(counter + 1)
        faulted = Signal()
        with m.If(~faulted & (events[0][1] | events[1][1] | events[2][1])):
            m.d.sync += [faulted.eq(1), self.first_fault.eq(now)]

    @staticmethod
    def _flip_mask(bits, width):
        """One-hot mask of ``width`` bits at a position drawn from ``bits`` (folded into range)."""
        position_bits = (width - 1).bit_length()
        if position_bits == 0:
            return Const(1, width)
        raw = bits[:position_bits]
        position = Mux(raw >= width, raw - width, raw)[:position_bits]   # raw < 2 width: one fold
        return (Const(1, width) << position)[:width]

    def _dead(self, m):
        """Signal: the link is dead (``dead_after`` cycles after its first item)."""
        after = self._dead_after
        if after is None:
            return Const(0)
        if after == 0:
            return Const(1)
        age = Signal(range(after + 1))
        carried = Signal()
        take = self.i.valid & self.i.ready
        with m.If(take):
            m.d.sync += carried.eq(1)
        with m.If((carried | take) & (age != after)):
            m.d.sync += age.eq(age + 1)
        return age == after

    def _credit_gate(self, m):
        """Signal: an item may enter this cycle (updates the credit counter)."""
        rate = self._config.rate_fixed
        if rate is None:
            return Const(1)
        cost = self._item_bits << FRACTION_BITS
        credit = Signal(signed(credit_bits(rate, cost)), init=0)
        allowed = Signal()
        m.d.comb += allowed.eq(credit >= 0)
        refilled = Signal.like(credit)
        m.d.comb += refilled.eq(credit + rate - Const(cost) * (self.i.valid & self.i.ready))
        # Saturate: idle cycles do not buy a burst longer than one cycle's worth.
        with m.If(refilled > rate):
            m.d.sync += credit.eq(rate)
        with m.Else():
            m.d.sync += credit.eq(refilled)
        return allowed

    def _reorder(self, m, source, coin):
        """Blocks of up to W items leave in order or reversed; returns the output stream."""
        window = self._config.reorder_window
        out = stream.Signature(self._shape).create()
        slots = Array(Signal(self._shape, name=f"slot{k}") for k in range(window))
        count = Signal(range(window + 1))
        index = Signal(range(window))
        left = Signal(range(window + 1))
        backwards = Signal()
        draining = Signal()
        with m.If(~draining):
            m.d.comb += source.ready.eq(count < window)
            with m.If(source.valid & (count < window)):
                m.d.sync += [slots[count].eq(source.payload), count.eq(count + 1)]
            with m.If((count == window) | ((count != 0) & ~source.valid)):
                m.d.sync += [draining.eq(1), left.eq(count), backwards.eq(coin),
                             index.eq(Cat(coin.replicate(len(index))) & (count - 1))]
        with m.Else():
            m.d.comb += [out.valid.eq(1), out.payload.eq(slots[index])]
            with m.If(out.ready):
                m.d.sync += [left.eq(left - 1), index.eq(index + Cat(1, backwards.replicate(len(index) - 1)))]
                with m.If(left == 1):
                    m.d.sync += [draining.eq(0), count.eq(0)]
        return out
