"""Pipeline registers shared by the floating-point units: one enable, valid bits and the tag."""

from types import SimpleNamespace

from amaranth.hdl import Signal, Value
from amaranth.lib import data

__all__ = ["StreamPipeline"]


class StreamPipeline:
    """Registers between the stages of a unit whose stream input and output share one enable.

    The whole pipeline advances when its output register is empty or being read
    (``enable = ~results.valid | results.ready``) and freezes otherwise, so a stalled consumer
    never loses or duplicates a result. ``operands.ready`` is ``enable``: it depends
    combinationally on ``results.ready``, as the stream rules allow.

    Each :meth:`register` call adds one stage and carries the valid bit and the tag along, so the
    number of calls is the unit's latency.

    Parameters
    ----------
    m : Module
        Module of the unit being elaborated.
    operands : stream interface
        The unit's input stream (``payload.tag`` is carried if present).
    """

    def __init__(self, m, operands):
        self._m = m
        self._operands = operands
        self.enable = Signal()
        self.depth = 0
        self._valid = operands.valid
        self._has_tag = "tag" in operands.payload.shape().members
        self._tag = operands.payload.tag if self._has_tag else None
        m.d.comb += operands.ready.eq(self.enable)

    def register(self, **values) -> SimpleNamespace:
        """Add one stage: return registers (named like the keywords) loaded from ``values``."""
        self.depth += 1
        registered = {key: self._register(f"stage{self.depth}_{key}", value)
                      for key, value in values.items()}
        self._valid = self._register(f"stage{self.depth}_valid", self._valid, reset_less=False)
        if self._has_tag:
            self._tag = self._register(f"stage{self.depth}_tag", self._tag)
        return SimpleNamespace(**registered)

    def _register(self, name, value, *, reset_less=True):
        # Only the valid bits need a reset; data registers without one can become shift-register
        # primitives (SRL) and keep the reset net small.
        shape = value.shape() if isinstance(value, data.View) else Value.cast(value).shape()
        reg = Signal(shape, name=name, reset_less=reset_less)
        with self._m.If(self.enable):
            self._m.d.sync += reg.eq(value)
        return reg

    def connect_results(self, results, result):
        """Drive the output stream from the last stage; ``result`` must be a register of it."""
        m = self._m
        m.d.comb += [
            self.enable.eq(~results.valid | results.ready),
            results.valid.eq(self._valid),
            results.payload.result.eq(result),
        ]
        if self._has_tag:
            m.d.comb += results.payload.tag.eq(self._tag)
