"""What the binary32 units share: their stream signature, the pipeline around their stages, and
the special cases of a product or quotient."""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .binary32 import CANONICAL_NAN, POSITIVE_INFINITY
from .layouts import operands_layout, result_layout
from .pipeline import StreamPipeline

__all__ = ["BinaryFPUnit", "signed_special_case"]


class BinaryFPUnit(wiring.Component):
    """A pipelined binary32 operation on two operands, one operation per cycle.

    A subclass sets :attr:`latency` and builds its stages in :meth:`stages`; this class wraps
    them in a :class:`~gravfm.hw.fp.pipeline.StreamPipeline` and checks that their number is the
    latency.

    Parameters
    ----------
    tag_shape : shape-castable or None
        Shape of a ``tag`` field carried unchanged from operands to result; none if ``None``.
    **operand_fields
        Further fields of the operands (see :func:`~gravfm.hw.fp.layouts.operands_layout`).

    Attributes
    ----------
    operands : In(stream.Signature(operands_layout(tag_shape, ...)))
        Operations: ``payload.a``, ``payload.b`` (binary32 bit patterns) and optional
        ``payload.tag``. Accepted on a cycle with ``valid & ready``; ``ready`` is low only while
        ``results`` is stalled.
    results : Out(stream.Signature(result_layout(tag_shape)))
        ``payload.result`` and ``payload.tag``, in the order the operations were accepted.
        ``valid`` is registered and does not depend on ``ready``.
    """

    latency: int

    def __init__(self, *, tag_shape=None, **operand_fields):
        super().__init__({
            "operands": In(stream.Signature(operands_layout(tag_shape, **operand_fields))),
            "results": Out(stream.Signature(result_layout(tag_shape))),
        })

    def stages(self, m, pipe):
        """Add the unit's stages to ``pipe``; return the result register of the last one."""
        raise NotImplementedError

    def elaborate(self, platform):
        m = Module()
        pipe = StreamPipeline(m, self.operands)
        pipe.connect_results(self.results, self.stages(m, pipe))
        assert pipe.depth == self.latency, "the latency attribute must count the stages"
        return m


def signed_special_case(m, a, b, *, invalid, infinite):
    """The special case of a product or quotient of the unpacked operands ``a`` and ``b``.

    Parameters
    ----------
    m : Module
    a, b : unpacked operands (:func:`~gravfm.hw.fp.logic.unpack`)
    invalid, infinite : Value
        Where the result is the canonical NaN, and else where it is an infinity.

    Returns
    -------
    dict
        The first stage's ``is_special`` (an operand is NaN, infinite or zero),
        ``special_result`` (the canonical NaN, else an infinity, else a zero; both signed) and
        ``sign`` of the result, as keywords of :meth:`StreamPipeline.register`.
    """
    sign = a.sign ^ b.sign
    special_result = Signal(32)
    with m.If(invalid):
        m.d.comb += special_result.eq(CANONICAL_NAN)
    with m.Elif(infinite):
        m.d.comb += special_result.eq(Cat(Const(POSITIVE_INFINITY, 31), sign))
    with m.Else():
        m.d.comb += special_result.eq(Cat(Const(0, 31), sign))
    return {"is_special": a.is_nan | b.is_nan | a.is_infinite | b.is_infinite | a.is_zero | b.is_zero,
            "special_result": special_result, "sign": sign}
