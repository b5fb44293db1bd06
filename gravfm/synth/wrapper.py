"""A self-contained wrapper so that synthesis measures the design, not its pins.

A generated FPGA top has thousands of port bits (host bus, link ports), far more than any package has
pins. The wrapper feeds every input port from one serial shift register (one pin in) and folds every
output bit into one XOR (one pin out), so no logic is optimised away and the placer sees a realistic,
pin-free design. The XOR is a registered tree of 4-input groups so that the wrapper never holds the
critical path. The shift register and the XOR tree's registers are counted in ``added_flip_flops``
so reports can subtract them.
"""

from amaranth.hdl import Cat, Elaboratable, Module, Signal, Value
from amaranth.lib import wiring
from ..hw.unused import silence_unused

__all__ = ["PinLimitedWrapper"]


class PinLimitedWrapper(Elaboratable):
    """Wrap ``component`` so that its ports reach the package through two pins.

    Parameters
    ----------
    component : wiring.Component
        The design to measure. Its input ports are driven from a serial shift register and its
        output ports are reduced into one registered XOR bit.

    Attributes
    ----------
    serial_in : Signal(1), input pin
    folded_out : Signal(1), output pin
    input_bits : int
        Bits of the input shift register (one per input port bit).
    """

    def __init__(self, component):
        if not isinstance(component, wiring.Component):
            silence_unused(self)  # never elaborated: do not warn about it
            raise TypeError(f"Component must be an amaranth wiring.Component, not {component!r}")
        self.component = component
        self.serial_in = Signal()
        self.folded_out = Signal()
        self._inputs, self._outputs = [], []
        for _path, member, value in component.signature.flatten(component):
            # Struct-layout ports are views: cast them so they concatenate and have a width.
            (self._inputs if member.flow == wiring.In else self._outputs).append(Value.cast(value))
        self.input_bits = sum(len(v) for v in self._inputs)

    def elaborate(self, platform):
        m = Module()
        m.submodules.design = self.component
        if self._inputs:
            chain = Signal(self.input_bits)
            m.d.sync += chain.eq(Cat(self.serial_in, chain[:-1]))
            m.d.comb += Cat(*self._inputs).eq(chain)
        level = Cat(*self._outputs) if self._outputs else Signal()
        while len(level) > 1:  # one register per 4-input XOR: a LUT4 and a flip-flop per node
            groups = [level[i:i + 4] for i in range(0, len(level), 4)]
            reduced = Signal(len(groups))
            m.d.sync += reduced.eq(Cat(*(group.xor() for group in groups)))
            level = reduced
        m.d.sync += self.folded_out.eq(level)
        return m

    @property
    def added_flip_flops(self):
        """Flip-flops of the wrapper itself: the input shift register and the XOR tree."""
        total, width = self.input_bits + 1, sum(len(v) for v in self._outputs)
        while width > 1:
            width = (width + 3) // 4
            total += width
        return total

    def ports(self):
        return [self.serial_in, self.folded_out]
